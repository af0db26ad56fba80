// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_export.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "core/ir/onnx_import.h"
#include "tests/ir/ir_test_util.h"
#include "tests/ir/onnx_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// Conv/Relu/Add with initializers, and attributes of every type the text syntax can spell: float
// (alpha), int (group, axis), string (auto_pad), tensor (value), graph (If branches, one reading an
// outer-scope tensor), floats, ints, strings.
constexpr const char* kRoundTripModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13, "com.vernier" : 1], producer_name: "vernier-test", producer_version: "0.1",
 domain: "ai.vernier", model_version: 3, doc_string: "round trip", metadata_props: ["k1" : "v1", "k2" : "v2"]>
main (float[1,2,4,4] X, bool cond) => (float[1,2,4,4] Y, float[2] Z, float[1,2,4,4] L)
<float[2,2,1,1] W = {1.0, 2.0, 3.0, 4.0}, float[2] B = {0.5, -0.5}, int64[2] shape = {1, 32}>
{
  C = Conv <kernel_shape = [1, 1], auto_pad = "NOTSET", group = 1> (X, W, B)
  R = Relu(C)
  Y = Add(R, X)
  K = Constant <value = float[2] {3.0, 4.0}> ()
  Z = If (cond) <then_branch = then_g () => (float[2] z1) { z1 = Identity(K) },
                 else_branch = else_g () => (float[2] z2) { z2 = Constant <value_floats = [1.5, 2.5]> () }>
  S = Constant <value_strings = ["a", "b"]> ()
  L = LeakyRelu <alpha = 0.2> (Y)
  F = Flatten <axis = 1> (X)
  P = Reshape(F, shape)
}
)ONNX";

void expect_value_infos_equal(const std::vector<ValueInfo>& a, const std::vector<ValueInfo>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].dtype, b[i].dtype) << a[i].name;
    EXPECT_EQ(a[i].shape, b[i].shape) << a[i].name;
    EXPECT_EQ(a[i].doc_string, b[i].doc_string) << a[i].name;
  }
}

void expect_graphs_equal(const Graph& a, const Graph& b);

void expect_attributes_equal(const Attribute& a, const Attribute& b) {
  SCOPED_TRACE("attribute " + a.name);
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.type, b.type);
  EXPECT_EQ(a.doc_string, b.doc_string);
  EXPECT_EQ(a.ref_attr_name, b.ref_attr_name);
  switch (a.type) {
    case AttrType::kUndefined:
      break;
    case AttrType::kFloat:
      EXPECT_EQ(a.f, b.f);
      break;
    case AttrType::kInt:
      EXPECT_EQ(a.i, b.i);
      break;
    case AttrType::kString:
      EXPECT_EQ(a.s, b.s);
      break;
    case AttrType::kTensor:
      EXPECT_TRUE(a.t.same_as(b.t));
      break;
    case AttrType::kGraph:
      ASSERT_TRUE(a.g && b.g);
      expect_graphs_equal(*a.g, *b.g);
      break;
    case AttrType::kFloats:
      EXPECT_EQ(a.floats, b.floats);
      break;
    case AttrType::kInts:
      EXPECT_EQ(a.ints, b.ints);
      break;
    case AttrType::kStrings:
      EXPECT_EQ(a.strings, b.strings);
      break;
    case AttrType::kTensors:
      ASSERT_EQ(a.tensors.size(), b.tensors.size());
      for (size_t i = 0; i < a.tensors.size(); ++i) EXPECT_TRUE(a.tensors[i].same_as(b.tensors[i])) << i;
      break;
    case AttrType::kGraphs:
      ASSERT_EQ(a.graphs.size(), b.graphs.size());
      for (size_t i = 0; i < a.graphs.size(); ++i) expect_graphs_equal(*a.graphs[i], *b.graphs[i]);
      break;
  }
}

void expect_graphs_equal(const Graph& a, const Graph& b) {
  SCOPED_TRACE("graph " + a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.doc_string, b.doc_string);
  expect_value_infos_equal(a.inputs, b.inputs);
  expect_value_infos_equal(a.outputs, b.outputs);
  expect_value_infos_equal(a.value_info, b.value_info);
  ASSERT_EQ(a.initializers.size(), b.initializers.size());
  for (size_t i = 0; i < a.initializers.size(); ++i) {
    EXPECT_EQ(a.initializers[i].name, b.initializers[i].name);
    EXPECT_TRUE(a.initializers[i].tensor.same_as(b.initializers[i].tensor)) << a.initializers[i].name;
  }
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    SCOPED_TRACE("node " + std::to_string(i) + " " + x.op_type);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op_type, y.op_type);
    EXPECT_EQ(x.domain, y.domain);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.doc_string, y.doc_string);
    ASSERT_EQ(x.attributes.size(), y.attributes.size());
    for (size_t j = 0; j < x.attributes.size(); ++j) expect_attributes_equal(x.attributes[j], y.attributes[j]);
  }
}

void expect_models_equal(const Model& a, const Model& b) {
  EXPECT_EQ(a.ir_version, b.ir_version);
  ASSERT_EQ(a.opset_imports.size(), b.opset_imports.size());
  for (size_t i = 0; i < a.opset_imports.size(); ++i) {
    EXPECT_EQ(a.opset_imports[i].domain, b.opset_imports[i].domain);
    EXPECT_EQ(a.opset_imports[i].version, b.opset_imports[i].version);
  }
  EXPECT_EQ(a.producer_name, b.producer_name);
  EXPECT_EQ(a.producer_version, b.producer_version);
  EXPECT_EQ(a.domain, b.domain);
  EXPECT_EQ(a.model_version, b.model_version);
  EXPECT_EQ(a.doc_string, b.doc_string);
  EXPECT_EQ(a.metadata, b.metadata);
  expect_graphs_equal(a.graph, b.graph);
}

// The round-trip model plus what the text syntax cannot express: doc strings, and tensors/graphs
// list attributes on a custom-domain node.
Model round_trip_model() {
  Result<Model> parsed = parse_model_text(kRoundTripModel);
  EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
  Model m = std::move(parsed).value();
  m.graph.doc_string = "main graph";
  m.graph.inputs[0].doc_string = "the image";
  m.graph.nodes[0].name = "conv0";
  m.graph.nodes[0].doc_string = "first conv";
  Node probe;
  probe.name = "probe";
  probe.op_type = "Probe";
  probe.domain = "com.vernier";
  probe.inputs = {"X"};
  probe.outputs = {"probe_out"};
  Attribute tensors;
  tensors.name = "ts";
  tensors.type = AttrType::kTensors;
  tensors.tensors = {Tensor::from_vector<float>({2}, {1.5f, -2.0f}), Tensor::scalar<int64_t>(42),
                     Tensor::from_vector<std::string>({2}, {"p", "q"})};
  Attribute graphs;
  graphs.name = "gs";
  graphs.type = AttrType::kGraphs;
  graphs.doc_string = "bodies";
  for (const Attribute& a : m.graph.nodes[4].attributes) graphs.graphs.push_back(a.g);
  probe.attributes = {tensors, graphs};
  m.graph.nodes.push_back(probe);
  return m;
}

TEST(OnnxExport, RoundTripKeepsStructureAttributesAndTensorBytes) {
  TempDir dir;
  const Model original = round_trip_model();
  ASSERT_EQ(original.graph.nodes.size(), 10u);
  ASSERT_EQ(original.graph.nodes[4].op_type, "If");
  ASSERT_NE(original.graph.nodes[4].attr("then_branch"), nullptr);
  ASSERT_EQ(original.graph.nodes[4].attr("then_branch")->type, AttrType::kGraph);

  ASSERT_TRUE(save_model(original, dir / "rt.onnx").ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "rt.onnx.data"));
  Result<Model> loaded = load_model(dir / "rt.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  expect_models_equal(original, *loaded);
  EXPECT_EQ(testing::file_names(dir.path()), std::vector<std::string>{"rt.onnx"});

  // Saving what was loaded gives the same bytes: nothing drifts on a second pass.
  Result<std::string> first = serialize_model(*loaded);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  Result<Model> again = load_model_from_bytes(*first, dir.path());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  Result<std::string> second = serialize_model(*again);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
}

TEST(OnnxExport, WritesEveryModelFieldIntoTheProto) {
  const Model m = round_trip_model();
  Result<std::string> bytes = serialize_model(m);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  EXPECT_EQ(proto.ir_version(), 8);
  EXPECT_EQ(proto.producer_name(), "vernier-test");
  EXPECT_EQ(proto.producer_version(), "0.1");
  EXPECT_EQ(proto.domain(), "ai.vernier");
  EXPECT_EQ(proto.model_version(), 3);
  EXPECT_EQ(proto.doc_string(), "round trip");
  ASSERT_EQ(proto.metadata_props_size(), 2);
  EXPECT_EQ(proto.metadata_props(1).key(), "k2");
  ASSERT_EQ(proto.opset_import_size(), 2);
  EXPECT_EQ(proto.opset_import(1).domain(), "com.vernier");
  const onnx::GraphProto& g = proto.graph();
  EXPECT_EQ(g.doc_string(), "main graph");
  EXPECT_GT(g.value_info_size(), 0);
  EXPECT_EQ(g.node(0).name(), "conv0");
  EXPECT_EQ(g.node(0).doc_string(), "first conv");
  ASSERT_EQ(g.initializer_size(), 3);
  EXPECT_EQ(g.initializer(0).raw_data().size(), 16u);
  const onnx::NodeProto& probe = g.node(9);
  ASSERT_EQ(probe.attribute_size(), 2);
  EXPECT_EQ(probe.attribute(0).type(), onnx::AttributeProto::TENSORS);
  EXPECT_EQ(probe.attribute(0).tensors(2).string_data(1), "q");
  EXPECT_EQ(probe.attribute(1).type(), onnx::AttributeProto::GRAPHS);
  EXPECT_EQ(probe.attribute(1).graphs(0).name(), "then_g");
  EXPECT_EQ(probe.attribute(1).doc_string(), "bodies");
}

TEST(OnnxExport, SerializeRefusesModelsOverTheLimit) {
  const Model m = round_trip_model();
  Result<std::string> small = serialize_model(m, 64);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(small.status().message(), HasSubstr("external data"));
  // Tensor bytes alone exceed this limit: refused before the proto is built.
  Result<std::string> tiny = serialize_model(m, 8);
  ASSERT_FALSE(tiny.ok());
  EXPECT_THAT(tiny.status().message(), HasSubstr("more than 8 bytes"));
}

TEST(OnnxExport, SaveSwitchesToExternalDataWhenTheModelWouldNotFit) {
  TempDir dir;
  Model m = round_trip_model();
  m.graph.initializers.push_back(Initializer{"big", Tensor(DType::kFloat32, {64, 64})});
  SaveOptions options;
  options.max_proto_bytes = 12000;  // the 16 KiB initializer cannot stay inline
  ASSERT_TRUE(save_model(m, dir / "m.onnx", options).ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "m.onnx.data"));
  EXPECT_LT(std::filesystem::file_size(dir / "m.onnx"), 12000u);
  Result<Model> loaded = load_model(dir / "m.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const Initializer* big = loaded->graph.find_initializer("big");
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(big->tensor.writable());
  EXPECT_TRUE(big->tensor.same_as(m.graph.find_initializer("big")->tensor));
}

TEST(OnnxExport, SaveSwitchesToExternalDataWhenTheStructurePushesItOver) {
  TempDir dir;
  Model m = round_trip_model();
  m.graph.initializers.push_back(Initializer{"big", Tensor(DType::kFloat32, {1024})});
  Result<std::string> inline_bytes = serialize_model(m);
  ASSERT_TRUE(inline_bytes.ok());
  // The tensors alone fit; with the graph around them they do not.
  SaveOptions options;
  options.max_proto_bytes = 4096 + 200;
  ASSERT_GT(inline_bytes->size(), options.max_proto_bytes);
  ASSERT_TRUE(save_model(m, dir / "m.onnx", options).ok());
  EXPECT_EQ(std::filesystem::file_size(dir / "m.onnx.data"), 4096u);
  Result<Model> loaded = load_model(dir / "m.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_FALSE(loaded->graph.find_initializer("big")->tensor.writable());
}

TEST(OnnxExport, SaveFailsWhenEvenExternalDataCannotMakeItFit) {
  TempDir dir;
  Model m = round_trip_model();
  SaveOptions options;
  options.max_proto_bytes = 200;
  options.external_data_threshold = 1 << 20;
  Status st = save_model(m, dir / "m.onnx", options);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("even with tensors of 1048576 bytes or more in external data"));
  EXPECT_TRUE(testing::file_names(dir.path()).empty());
}

TEST(OnnxExport, CheckerObjectionLeavesNothingBehind) {
  TempDir dir;
  Model m = round_trip_model();
  m.graph.nodes[1].op_type = "NoSuchOp";
  Status st = save_model(m, dir / "m.onnx");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_THAT(st.message(), HasSubstr("NoSuchOp"));
  EXPECT_TRUE(testing::file_names(dir.path()).empty());

  SaveOptions forced;
  forced.force_external_data = true;
  forced.external_data_threshold = 4;
  st = save_model(m, dir / "m.onnx", forced);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(testing::file_names(dir.path()).empty());

  SaveOptions unchecked;
  unchecked.check_model = false;
  EXPECT_TRUE(save_model(m, dir / "m.onnx", unchecked).ok());
}

TEST(OnnxExport, SaveCreatesMissingFoldersAndReplacesExistingFiles) {
  TempDir dir;
  const Model m = round_trip_model();
  const auto path = dir / "a" / "b" / "m.onnx";
  ASSERT_TRUE(save_model(m, path).ok());
  testing::write_bytes(path, "stale");
  ASSERT_TRUE(save_model(m, path).ok());
  Result<Model> loaded = load_model(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(testing::file_names(dir / "a" / "b"), std::vector<std::string>{"m.onnx"});
}

TEST(OnnxExport, RefusesAnExternalDataFileOutsideTheModelFolder) {
  TempDir dir;
  const Model m = round_trip_model();
  for (const char* bad : {"../w.data", "/tmp/w.data", "m.onnx"}) {
    SaveOptions options;
    options.force_external_data = true;
    options.external_data_file = bad;
    Status st = save_model(m, dir / "m.onnx", options);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message();
    EXPECT_THAT(st.message(), HasSubstr(bad));
  }
}

TEST(OnnxExport, UndefinedInitializerIsAnErrorNotACrash) {
  Model m = round_trip_model();
  m.graph.initializers.push_back(Initializer{"hole", Tensor()});
  Result<std::string> bytes = serialize_model(m);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bytes.status().message(), HasSubstr("'hole'"));
}

TEST(OnnxExport, InferShapesRefreshesValueInfoOutputsAndSubgraphs) {
  Model m = round_trip_model();
  m.graph.value_info.clear();
  m.graph.outputs[0].shape.reset();
  m.graph.outputs[0].dtype.reset();
  m.graph.outputs[1].shape = std::vector<Dim>{Dim{}};
  // Drop the then-branch output's type: inference recreates it from Identity(K).
  Attribute& then_branch = m.graph.nodes[4].attributes[0];
  ASSERT_EQ(then_branch.name, "then_branch");
  Graph body = *then_branch.g;
  body.outputs[0].dtype.reset();
  body.outputs[0].shape.reset();
  then_branch.g = std::make_shared<const Graph>(body);

  ASSERT_TRUE(infer_shapes(m).ok());
  EXPECT_EQ(m.graph.outputs[0].type_string(), "float32 (1, 2, 4, 4)");
  EXPECT_EQ(m.graph.outputs[1].type_string(), "float32 (2,)");
  ASSERT_TRUE(m.graph.find_value_info("C").has_value());
  EXPECT_EQ(m.graph.find_value_info("C")->type_string(), "float32 (1, 2, 4, 4)");
  ASSERT_TRUE(m.graph.find_value_info("P").has_value());
  EXPECT_EQ(m.graph.find_value_info("P")->type_string(), "float32 (1, 32)");
  EXPECT_EQ(m.graph.nodes[4].attributes[0].g->outputs[0].type_string(), "float32 (2,)");
}

TEST(OnnxExport, InferShapesReportsFailureButKeepsWhatItFound) {
  Result<Model> parsed = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
bad (float[2,3] X, float[4,5] W) => (float[2,5] Y)
{
  R = Relu(X)
  Y = MatMul(R, W)
}
)ONNX",
                                          LoadOptions{true, false});
  ASSERT_TRUE(parsed.ok());
  Model m = std::move(parsed).value();
  Status st = infer_shapes(m);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_THAT(st.message(), HasSubstr("shape inference failed"));
  ASSERT_TRUE(m.graph.find_value_info("R").has_value());
}

TEST(OnnxExport, InferShapesReadsSmallShapeTensorsButNotLargeData) {
  Result<Model> parsed = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4096] X) => (float[8192] Y)
<int64[1] shape = {8192}>
{
  S = Add(X, X)
  Y = Reshape(S, shape)
}
)ONNX",
                                          LoadOptions{true, false});
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  Model m = std::move(parsed).value();
  m.graph.initializers.push_back(Initializer{"unused_big", Tensor(DType::kFloat32, {4096})});
  ASSERT_TRUE(infer_shapes(m).ok());
  ASSERT_TRUE(m.graph.find_value_info("S").has_value());
  EXPECT_EQ(m.graph.find_value_info("S")->type_string(), "float32 (2, 4096)");
}

}  // namespace
}  // namespace vn
