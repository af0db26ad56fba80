// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/surgeon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/data/synthetic.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::surgeon {
namespace {

using ::testing::HasSubstr;

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

// Saves and reloads `model`, so the ONNX checker and the loader see it as a file.
Model round_trip(const Model& model, const test::TempDir& dir, const std::string& name) {
  const std::filesystem::path path = dir / name;
  Status st = save_model(model, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  Result<Model> loaded = load_model(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  return loaded.ok() ? std::move(loaded).value() : Model();
}

TEST(SurgeonParse, BoundarySpecs) {
  Result<BoundaryTensor> b = parse_boundary("x:[1,3,batch,?]:float16", true);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->name, "x");
  ASSERT_TRUE(b->shape.has_value());
  EXPECT_EQ(b->shape->size(), 4u);
  EXPECT_EQ((*b->shape)[2].param, "batch");
  EXPECT_FALSE((*b->shape)[3].known());
  EXPECT_EQ(b->dtype, DType::kFloat16);

  b = parse_boundary("x:auto:auto", true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->name, "x");
  EXPECT_FALSE(b->shape || b->dtype);

  b = parse_boundary("ns:y:int64", false);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->name, "ns:y");
  EXPECT_EQ(b->dtype, DType::kInt64);

  b = parse_boundary("x:[1,2]", true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->name, "x");
  EXPECT_FALSE(b->dtype);

  EXPECT_THAT(parse_boundary("x:[1,2]:floot32", true).status().message(), HasSubstr("'floot32' is not a dtype"));
  EXPECT_THAT(parse_boundary("x:[1,-5]", true).status().message(), HasSubstr("is not a shape"));
  EXPECT_THAT(parse_boundary("y:[1,2]", false).status().message(), HasSubstr("is not a dtype"));
  EXPECT_EQ(parse_boundary("", false).status().code(), StatusCode::kInvalidArgument);
}

TEST(SurgeonExtract, TheDemoSubgraphComputesTheFullModelsIntermediates) {
  Result<Model> full = load_model(kDemo);
  ASSERT_TRUE(full.ok());
  Result<Rewrite> rw =
      extract(*full, {{"pool1", std::nullopt, std::nullopt}}, {{"relu2", std::nullopt, std::nullopt}}, nullptr);
  ASSERT_TRUE(rw.ok()) << rw.status().to_string();
  test::TempDir dir;
  const Model sub = round_trip(rw->model, dir, "sub.onnx");
  ASSERT_EQ(sub.graph.inputs.size(), 1u);
  EXPECT_EQ(sub.graph.inputs[0].name, "pool1");
  EXPECT_EQ(sub.graph.inputs[0].type_string(), "float32 (1, 8, 16, 16)");
  ASSERT_EQ(sub.graph.outputs.size(), 1u);
  EXPECT_EQ(sub.graph.outputs[0].name, "relu2");
  EXPECT_EQ(sub.graph.nodes.size(), 2u);  // conv2, relu2

  Result<std::vector<TensorMap>> feeds = data::generate_feeds(full->graph, {});
  ASSERT_TRUE(feeds.ok());
  const TensorMap inside = engine::test::run_reference(*full, feeds->at(0), {"pool1", "relu2"});
  const TensorMap out = engine::test::run_reference(sub, TensorMap{{"pool1", *inside.find("pool1")}});
  EXPECT_TRUE(out.find("relu2")->same_as(*inside.find("relu2")));
}

TEST(SurgeonExtract, FallbackInferenceFillsShapesInferenceCannotKnow) {
  // The Reshape target is computed from X's shape at run time, so strict shape inference knows
  // the rank of R but none of its dims.
  Result<Model> m = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,6] X) => (float[6,2] Y) <int64[1] zero = {0}, int64[1] one = {1}, int64[1] two = {2}> {"
      "  s = Shape(X)  d0 = Slice(s, zero, one)  d1 = Slice(s, one, two)  t = Concat<axis=0>(d1, d0)"
      "  R = Reshape(X, t)  Y = Relu(R) }");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const std::optional<ValueInfo> known = m->graph.find_value_info("R");
  ASSERT_TRUE(!known || !known->has_static_shape()) << "the fixture must defeat shape inference";

  std::vector<std::string> asked;
  const FallbackRun fallback = [&](const std::vector<std::string>& tensors) -> Result<TensorMap> {
    asked = tensors;
    Result<std::vector<TensorMap>> feeds = data::generate_feeds(m->graph, {});
    if (!feeds.ok()) return feeds.status();
    return engine::test::run_reference(*m, feeds->at(0), tensors);
  };
  Result<Rewrite> rw = extract(*m, {{"R", std::nullopt, std::nullopt}}, {}, fallback);
  ASSERT_TRUE(rw.ok()) << rw.status().to_string();
  EXPECT_EQ(asked, std::vector<std::string>{"R"});
  EXPECT_EQ(rw->model.graph.inputs.at(0).type_string(), "float32 (6, 2)");
  EXPECT_THAT(rw->changes, testing::Contains(HasSubstr("from fallback inference")));
  test::TempDir dir;
  round_trip(rw->model, dir, "r.onnx");

  // Without a fallback the missing metadata is an error that says what to give.
  EXPECT_THAT(extract(*m, {{"R", std::nullopt, std::nullopt}}, {}, nullptr).status().message(),
              HasSubstr("give them as NAME:SHAPE:DTYPE"));
}

TEST(SurgeonExtract, UnknownTensorsAreNamed) {
  Result<Model> full = load_model(kDemo);
  ASSERT_TRUE(full.ok());
  Result<Rewrite> rw = extract(*full, {{"nope", std::nullopt, std::nullopt}}, {}, nullptr);
  EXPECT_EQ(rw.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(rw.status().message(), HasSubstr("'nope'"));
}

// Y = MatMul(X, W) + bias where W = Transpose(Wt) * scale is all constants, plus a dead branch.
Model foldable_model() {
  return engine::test::make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3,4] X, float[5,4] Wt, float[5] B) => (float[3,5] Y) {"
      "  k = Constant<value = float[1] {0.5}>()  w = Transpose(Wt)  ws = Mul(w, k)"
      "  m = MatMul(X, ws)  Y = Add(m, B)  dead = Relu(X) }",
      {{"Wt", engine::test::random_tensor({5, 4}, 1)}, {"B", engine::test::random_tensor({5}, 2)}});
}

TEST(SurgeonSanitize, FoldsConstantsAndKeepsTheOutputs) {
  const Model model = foldable_model();
  SanitizeOptions options;
  options.fold_constants = true;
  options.cleanup = true;
  options.toposort = true;
  FoldCounts counts;
  Result<Rewrite> rw = sanitize(model, options, &counts);
  ASSERT_TRUE(rw.ok()) << rw.status().to_string();
  EXPECT_EQ(counts.original, 6u);
  EXPECT_EQ(counts.folded, (std::vector<std::string>{"Constant_0", "Transpose_1", "Mul_2"}));
  EXPECT_EQ(counts.after, 3u);
  test::TempDir dir;
  const Model out = round_trip(rw->model, dir, "s.onnx");
  EXPECT_EQ(out.graph.nodes.size(), 2u) << "cleanup removes the dead Relu";
  EXPECT_EQ(out.graph.find_initializer("Wt"), nullptr) << "weights only the folded nodes read are gone";
  EXPECT_NE(out.graph.find_initializer("ws"), nullptr);

  const TensorMap feeds{{"X", engine::test::random_tensor({3, 4}, 3)}};
  const TensorMap before = engine::test::run_reference(model, feeds);
  const TensorMap after = engine::test::run_reference(out, feeds);
  engine::test::expect_close(*after.find("Y"), *before.find("Y"), {1e-6, 1e-6}, "folded model");
}

TEST(SurgeonSanitize, OverridesInputShapesAndReinfers) {
  Result<Model> m = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[N,4] X) => (float[N,4] Y) { r = Relu(X)  Y = Sigmoid(r) }");
  ASSERT_TRUE(m.ok());
  SanitizeOptions options;
  options.override_input_shapes["X"] = {Dim::of(2), Dim::of(4)};
  Result<Rewrite> rw = sanitize(*m, options);
  ASSERT_TRUE(rw.ok()) << rw.status().to_string();
  EXPECT_EQ(rw->model.graph.outputs[0].type_string(), "float32 (2, 4)");
  EXPECT_EQ(rw->model.graph.find_value_info("r")->type_string(), "float32 (2, 4)");

  options.override_input_shapes = {{"nope", {Dim::of(1)}}};
  EXPECT_EQ(sanitize(*m, options).status().code(), StatusCode::kNotFound);
}

TEST(SurgeonSanitize, ToposortRestoresAnOrderThatRuns) {
  Result<Model> m = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2] X) => (float[2] Y) { r = Relu(X)  s = Sigmoid(r)  Y = Neg(s) }");
  ASSERT_TRUE(m.ok());
  Model shuffled = *m;
  std::reverse(shuffled.graph.nodes.begin(), shuffled.graph.nodes.end());
  SanitizeOptions options;
  options.toposort = true;
  Result<Rewrite> rw = sanitize(shuffled, options);
  ASSERT_TRUE(rw.ok()) << rw.status().to_string();
  std::vector<std::string> ops;
  for (const Node& n : rw->model.graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Relu", "Sigmoid", "Neg"}));
  EXPECT_THAT(rw->changes, testing::Contains("Toposort: 2 node(s) moved"));
  EXPECT_THAT(sanitize(*m, options)->changes, testing::Contains("Toposort: already in topological order"));
}

}  // namespace
}  // namespace vn::surgeon
