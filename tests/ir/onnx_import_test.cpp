// SPDX-License-Identifier: Apache-2.0
#include "core/ir/onnx_import.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "core/common/logging.h"
#include "core/ir/onnx_export.h"
#include "tests/ir/ir_test_util.h"
#include "tests/ir/onnx_test_util.h"

namespace vn {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr const char* kSmallModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
small (float[2,3] X) => (float[2,3] Y)
<float[3] B = {1.0, 2.0, 3.0}>
{
  T = Relu(X)
  Y = Add(T, B)
}
)ONNX";

// Captures log records for the duration of a test and restores stderr logging afterwards.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<RingBufferSink>(64)) { set_log_sink(sink_); }
  ~LogCapture() { set_log_sink(std::make_shared<StderrSink>()); }
  bool has_warning_containing(std::string_view text) const {
    for (const auto& r : sink_->snapshot()) {
      if (r.level == LogLevel::kWarning && r.message.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::shared_ptr<RingBufferSink> sink_;
};

TEST(OnnxImport, ParsesTextAndInfersIntermediateTypes) {
  Result<Model> m = parse_model_text(kSmallModel);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->ir_version, 8);
  EXPECT_EQ(m->opset(), 13);
  EXPECT_TRUE(m->base_dir.empty());
  const Graph& g = m->graph;
  EXPECT_EQ(g.name, "small");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"T", "B"}));
  ASSERT_EQ(g.initializers.size(), 1u);
  EXPECT_TRUE(g.initializers[0].tensor.same_as(Tensor::from_vector<float>({3}, {1, 2, 3})));
  EXPECT_TRUE(g.initializers[0].tensor.writable());
  std::optional<ValueInfo> t = g.find_value_info("T");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->type_string(), "float32 (2, 3)");
}

TEST(OnnxImport, SkipsShapeInferenceWhenAsked) {
  LoadOptions options;
  options.infer_shapes = false;
  Result<Model> m = parse_model_text(kSmallModel, options);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(m->graph.value_info.empty());
}

TEST(OnnxImport, TextSyntaxErrorIsInvalidModelWithPosition) {
  Result<Model> m = parse_model_text("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] X => (float[2] Y) {}");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("ONNX text"));
  EXPECT_THAT(m.status().message(), HasSubstr("line"));
  EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
}

// Issue 9: libonnx 1.12 does not check models of opset 18 and later, so the loader's own
// structural validation must refuse what the checker would have.
TEST(OnnxImport, ValidatesStructureOfModelsTheCheckerSkips) {
  const Result<Model> twice = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 18]> g (float[2] X) => (float[2] Y) { Y = Relu(X) Y = Neg(X) }");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidModel);
  ASSERT_NE(twice.status().node(), nullptr);
  EXPECT_EQ(twice.status().node()->op_type, "Neg");
  EXPECT_THAT(twice.status().message(), HasSubstr("'Y'"));

  const Result<Model> inputs = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 18]> g (float[2] X, float[2] X) => (float[2] Y) { Y = Relu(X) }");
  ASSERT_FALSE(inputs.ok());
  EXPECT_EQ(inputs.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(inputs.status().message(), HasSubstr("'X'"));

  EXPECT_TRUE(parse_model_text(
                  "<ir_version: 8, opset_import: [\"\" : 18]> g (float[2] X) => (float[2] Y) { T = Relu(X) Y = Neg(T) }")
                  .ok());
}

// Issue 9, found by fuzz_onnx_model: libonnx 1.12's Conv shape inference indexes past the end of
// W's dims when W's rank differs from X's. The loader must refuse the model before that.
TEST(OnnxImport, RefusesConvWeightOfTheWrongRankBeforeShapeInference) {
  const Result<Model> direct = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5,5] X, float[2] W) => (float Y) { Y = Conv(X, W) }");
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(direct.status().message(), HasSubstr("(Conv): weight 'W' has rank 1, but input 'X' has rank 4"));

  // The input's rank is known only through inference (after a Relu).
  const Result<Model> inferred = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5,5] X, float[2,2,1] W) => (float Y) "
      "{ R = Relu(X) Y = ConvTranspose(R, W) }");
  ASSERT_FALSE(inferred.ok());
  EXPECT_THAT(inferred.status().message(), HasSubstr("weight 'W' has rank 3, but input 'R' has rank 4"));

  // Found next: a zero stride divided by zero in libonnx's pooling inference (SIGFPE).
  const Result<Model> stride = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,4,4] X) => (float Y) "
      "{ Y = MaxPool <kernel_shape = [2, 2], strides = [0, 2]> (X) }");
  ASSERT_FALSE(stride.ok());
  EXPECT_EQ(stride.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(stride.status().message(), HasSubstr("(MaxPool): attribute 'strides' must be positive"));

  // And then: two pads for two spatial axes read past the end of the vector.
  const Result<Model> pads = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5,5] X, float[3,2,1,1] W) => (float Y) "
      "{ R = Relu(X) Y = Conv <pads = [1, 1]> (R, W) }");
  ASSERT_FALSE(pads.ok());
  EXPECT_THAT(pads.status().message(), HasSubstr("attribute 'pads' has 2 values, but input 'R' of rank 4 needs 4"));

  EXPECT_TRUE(parse_model_text("<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5,5] X, float[3,2,1,1] W) "
                               "=> (float[1,3,5,5] Y) { Y = Conv(X, W) }")
                  .ok());
}

TEST(OnnxImport, LoadsFromFileAndRecordsBaseDir) {
  TempDir dir;
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  testing::save_proto(proto, dir / "small.onnx");
  Result<Model> m = load_model(dir / "small.onnx");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.nodes.size(), 2u);
  EXPECT_EQ(std::filesystem::weakly_canonical(m->base_dir), std::filesystem::weakly_canonical(dir.path()));
}

TEST(OnnxImport, LoadsFromBytes) {
  const std::string bytes = testing::proto_from_text(kSmallModel).SerializeAsString();
  Result<Model> m = load_model_from_bytes(bytes, {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.nodes.size(), 2u);
}

TEST(OnnxImport, MissingFileIsIoErrorNamingThePath) {
  TempDir dir;
  Result<Model> m = load_model(dir / "absent.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIoError);
  EXPECT_THAT(m.status().message(), HasSubstr("absent.onnx"));
}

TEST(OnnxImport, DirectoryIsIoError) {
  TempDir dir;
  Result<Model> m = load_model(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kIoError);
  EXPECT_THAT(m.status().message(), HasSubstr("not a regular file"));
}

TEST(OnnxImport, EmptyFileIsInvalidModel) {
  TempDir dir;
  testing::write_bytes(dir / "empty.onnx", "");
  Result<Model> m = load_model(dir / "empty.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(m.status().message(), HasSubstr("empty.onnx: not a valid ONNX model"));
}

TEST(OnnxImport, TruncatedFilesFailCleanlyAtEveryLength) {
  TempDir dir;
  const std::string bytes = testing::proto_from_text(kSmallModel).SerializeAsString();
  const auto path = dir / "model.onnx";
  for (size_t len = 1; len < bytes.size(); ++len) {
    testing::write_bytes(path, std::string_view(bytes).substr(0, len));
    Result<Model> m = load_model(path);
    ASSERT_FALSE(m.ok()) << "length " << len;
    EXPECT_TRUE(m.status().code() == StatusCode::kInvalidModel || m.status().code() == StatusCode::kIoError)
        << m.status().to_string();
    EXPECT_THAT(m.status().message(), HasSubstr("model.onnx")) << "length " << len;
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos) << m.status().message();
  }
  // Cut inside the graph: protobuf itself rejects it, with the one-line message.
  testing::write_bytes(path, std::string_view(bytes).substr(0, bytes.size() / 2));
  Result<Model> half = load_model(path);
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.status().message(), path.string() + ": not a valid ONNX model (protobuf parse failed)");
}

TEST(OnnxImport, GarbageFilesFailCleanly) {
  TempDir dir;
  const auto path = dir / "garbage.onnx";
  std::mt19937 rng(7767517);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
    testing::write_bytes(path, bytes);
    Result<Model> m = load_model(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << m.status().to_string();
    EXPECT_THAT(m.status().message(), HasSubstr("garbage.onnx"));
  }
  testing::write_bytes(path, "hello, this is not a model\n");
  Result<Model> text = load_model(path);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("garbage.onnx: not a valid ONNX model"));
}

TEST(OnnxImport, CheckerFailureIsInvalidModelUnlessCheckingIsOff) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  proto.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  const std::string bytes = proto.SerializeAsString();
  Result<Model> checked = load_model_from_bytes(bytes, {});
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), StatusCode::kInvalidModel);
  EXPECT_THAT(checked.status().message(), HasSubstr("in-memory model: ONNX checker"));
  EXPECT_THAT(checked.status().message(), HasSubstr("NoSuchOp"));
  EXPECT_EQ(checked.status().message().find('\n'), std::string::npos);

  LoadOptions lenient;
  lenient.check_model = false;
  Result<Model> unchecked = load_model_from_bytes(bytes, {}, lenient);
  ASSERT_TRUE(unchecked.ok()) << unchecked.status().to_string();
  EXPECT_EQ(unchecked->graph.nodes[0].op_type, "NoSuchOp");
}

TEST(OnnxImport, ShapeInferenceFailureIsOnlyAWarning) {
  LogCapture log;
  Result<Model> m = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
bad (float[2,3] X, float[4,5] W) => (float[2,5] Y)
{
  R = Relu(X)
  Y = MatMul(R, W)
}
)ONNX");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(log.has_warning_containing("shape inference failed"));
  // What inference found before the failing node is kept.
  ASSERT_TRUE(m->graph.find_value_info("R").has_value());
  EXPECT_EQ(m->graph.find_value_info("R")->type_string(), "float32 (2, 3)");
}

TEST(OnnxImport, ModelsNewerThanLibonnxSkipTheCheckerWithAWarning) {
  LogCapture log;
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  proto.set_ir_version(9);
  Result<Model> ir9 = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(ir9.ok()) << ir9.status().to_string();
  EXPECT_EQ(ir9->ir_version, 9);
  EXPECT_TRUE(log.has_warning_containing("IR version 9 is newer than libonnx's 8"));

  proto.set_ir_version(8);
  proto.mutable_opset_import(0)->set_version(18);
  Result<Model> opset18 = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(opset18.ok()) << opset18.status().to_string();
  EXPECT_EQ(opset18->opset(), 18);
  EXPECT_TRUE(log.has_warning_containing("opset 18 of domain '' is newer than libonnx's 17"));

  TempDir dir;
  EXPECT_TRUE(save_model(*opset18, dir / "m.onnx").ok());
}

TEST(OnnxImport, UnsortedGraphIsSortedWhenCheckingIsOff) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  proto.mutable_graph()->mutable_node()->SwapElements(0, 1);
  LoadOptions lenient;
  lenient.check_model = false;
  lenient.infer_shapes = false;
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {}, lenient);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.nodes[0].op_type, "Relu");
  EXPECT_EQ(m->graph.nodes[1].op_type, "Add");
}

TEST(OnnxImport, CyclicGraphIsInvalidModelNamingANode) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  // Relu now reads Add's output and Add reads Relu's: a two-node cycle.
  proto.mutable_graph()->mutable_node(0)->set_input(0, "Y");
  LoadOptions lenient;
  lenient.check_model = false;
  lenient.infer_shapes = false;
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {}, lenient);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
  ASSERT_NE(m.status().node(), nullptr);
  EXPECT_THAT(m.status().message(), HasSubstr("cycle"));
}

TEST(OnnxImport, InitializerListedAsInputStaysAnInput) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  onnx::ValueInfoProto* in = proto.mutable_graph()->add_input();
  in->set_name("B");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ(m->graph.inputs.size(), 2u);
  EXPECT_EQ(m->graph.inputs[1].name, "B");
  ASSERT_EQ(m->graph.runtime_inputs().size(), 1u);
  EXPECT_EQ(m->graph.runtime_inputs()[0]->name, "X");
}

TEST(OnnxImport, ConstantAttributesStayAttributes) {
  Result<Model> m = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
consts () => (float[2] A, float B, int64[3] C, string[2] D)
{
  A = Constant <value = float[2] {1.0, 2.0}> ()
  B = Constant <value_float = 3.5> ()
  C = Constant <value_ints = [4, 5, 6]> ()
  D = Constant <value_strings = ["x", "y"]> ()
}
)ONNX");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Graph& g = m->graph;
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_TRUE(g.initializers.empty());
  const Attribute* value = g.nodes[0].attr("value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->type, AttrType::kTensor);
  EXPECT_TRUE(value->t.same_as(Tensor::from_vector<float>({2}, {1, 2})));
  ASSERT_NE(g.nodes[1].attr("value_float"), nullptr);
  EXPECT_EQ(g.nodes[1].attr("value_float")->f, 3.5f);
  ASSERT_NE(g.nodes[2].attr("value_ints"), nullptr);
  EXPECT_EQ(g.nodes[2].attr("value_ints")->ints, (std::vector<int64_t>{4, 5, 6}));
  ASSERT_NE(g.nodes[3].attr("value_strings"), nullptr);
  EXPECT_EQ(g.nodes[3].attr("value_strings")->strings, (std::vector<std::string>{"x", "y"}));
}

TEST(OnnxImport, SymbolicAndUnknownDimsSurvive) {
  onnx::ModelProto proto = testing::proto_from_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
dyn (float[N, 3] X) => (float[N, 3] Y) { Y = Relu(X) }
)ONNX");
  // A dim with neither value nor param is unknown.
  proto.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  proto.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.inputs[0].type_string(), "float32 (N, 3, ?)");
  EXPECT_FALSE(m->graph.inputs[0].has_static_shape());
}

TEST(OnnxImport, UnsupportedInitializerTypeIsReported) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  onnx::TensorProto* b = proto.mutable_graph()->mutable_initializer(0);
  b->set_data_type(onnx::TensorProto::COMPLEX64);
  b->clear_float_data();
  for (int i = 0; i < 6; ++i) b->add_float_data(1.0f);
  LoadOptions lenient;
  lenient.check_model = false;
  lenient.infer_shapes = false;
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {}, lenient);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_THAT(m.status().message(), HasSubstr("tensor 'B'"));
  EXPECT_THAT(m.status().message(), HasSubstr("complex64"));
}

TEST(OnnxImport, SequenceGraphInputIsUnsupported) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  onnx::ValueInfoProto* in = proto.mutable_graph()->add_input();
  in->set_name("S");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_THAT(m.status().message(), HasSubstr("graph input 'S' is a sequence"));
}

TEST(OnnxImport, SparseInitializerIsDensified) {
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  proto.mutable_graph()->clear_initializer();
  onnx::SparseTensorProto* sparse = proto.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(3);
  onnx::TensorProto* values = sparse->mutable_values();
  values->set_name("B");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(7.0f);
  values->add_float_data(9.0f);
  onnx::TensorProto* indices = sparse->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(2);
  indices->add_int64_data(0);
  indices->add_int64_data(2);
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_EQ(m->graph.initializers.size(), 1u);
  EXPECT_EQ(m->graph.initializers[0].name, "B");
  EXPECT_TRUE(m->graph.initializers[0].tensor.same_as(Tensor::from_vector<float>({3}, {7, 0, 9})));

  indices->set_int64_data(1, 3);
  LoadOptions lenient;
  lenient.check_model = false;
  Result<Model> bad = load_model_from_bytes(proto.SerializeAsString(), {}, lenient);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("sparse index 3 is outside [0, 3)"));
}

TEST(OnnxImport, AttributeWithoutTypeFieldGetsTheTypeOfItsValue) {
  onnx::ModelProto proto = testing::proto_from_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) { Y = LeakyRelu <alpha = 0.5> (X) }
)ONNX");
  proto.mutable_graph()->mutable_node(0)->mutable_attribute(0)->clear_type();
  LoadOptions lenient;
  lenient.check_model = false;
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {}, lenient);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Attribute* alpha = m->graph.nodes[0].attr("alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->type, AttrType::kFloat);
  EXPECT_EQ(alpha->f, 0.5f);
}

TEST(OnnxImport, ModelLocalFunctionsAreDroppedWithAWarning) {
  LogCapture log;
  onnx::ModelProto proto = testing::proto_from_text(kSmallModel);
  onnx::FunctionProto* f = proto.add_functions();
  f->set_name("Twice");
  f->set_domain("com.vernier");
  f->add_input("a");
  f->add_output("b");
  onnx::NodeProto* n = f->add_node();
  n->set_op_type("Add");
  n->add_input("a");
  n->add_input("a");
  n->add_output("b");
  onnx::OperatorSetIdProto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(13);
  Result<Model> m = load_model_from_bytes(proto.SerializeAsString(), {});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_TRUE(log.has_warning_containing("model-local function"));
}

}  // namespace
}  // namespace vn
