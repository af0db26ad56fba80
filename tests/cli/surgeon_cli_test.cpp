// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of `surgeon extract` and `surgeon sanitize`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/data/synthetic.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/cli_expect.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDemo = vn::test::demo_model();

using test::expect_bad_input;

TEST(CliSurgeonExtract, TheSubgraphHasTheBoundaryAndComputesTheIntermediates) {
  TempDir dir;
  const std::string out = (dir / "sub.onnx").string();
  auto r = run_vernier(
      {"surgeon", "extract", kDemo, "--inputs", "relu1:auto:auto", "--outputs", "gap:float32", "flat:auto", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Kept 5 of 10 node(s)"));
  EXPECT_THAT(r.out, HasSubstr("Input  relu1: float32 (1, 8, 32, 32) (from the model)"));
  EXPECT_THAT(r.out, HasSubstr("Output gap: float32 (1, 16, 1, 1) (as given)"));
  EXPECT_THAT(r.out, HasSubstr("Saving ONNX model to: " + out));

  Result<Model> sub = load_model(out);  // runs the ONNX checker
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  ASSERT_EQ(sub->graph.runtime_inputs().size(), 1u);
  EXPECT_EQ(sub->graph.inputs[0].name, "relu1");
  ASSERT_EQ(sub->graph.outputs.size(), 2u);
  EXPECT_EQ(sub->graph.outputs[0].name, "gap");
  EXPECT_EQ(sub->graph.outputs[1].name, "flat");

  Result<Model> full = load_model(kDemo);
  ASSERT_TRUE(full.ok());
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(full->graph, {});
  ASSERT_TRUE(feeds.ok());
  const TensorMap inside = engine::test::run_reference(*full, feeds->at(0), {"relu1", "gap", "flat"});
  const TensorMap got = engine::test::run_reference(*sub, TensorMap{{"relu1", *inside.find("relu1")}});
  EXPECT_TRUE(got.find("gap")->same_as(*inside.find("gap")));
  EXPECT_TRUE(got.find("flat")->same_as(*inside.find("flat")));

  // The result runs under `vernier run` like any model, and the engine agrees with the reference.
  auto run = run_vernier({"run", out, "--ref", "--engine", "--deterministic"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST(CliSurgeonExtract, ListsLeftOutKeepTheModelsOwnAndShapesCanBeGiven) {
  TempDir dir;
  const std::string out = (dir / "head.onnx").string();
  auto r = run_vernier({"surgeon", "extract", kDemo, "--outputs", "pool1", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Result<Model> head = load_model(out);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->graph.inputs[0].name, "image");
  EXPECT_EQ(head->graph.nodes.size(), 4u);

  const std::string tail = (dir / "tail.onnx").string();
  r = run_vernier({"surgeon", "extract", kDemo, "--inputs", "flat:[1,16]:float32", "-o", tail});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Input  flat: float32 (1, 16) (as given)"));
  Result<Model> t = load_model(tail);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->graph.outputs[0].name, "probs");
}

TEST(CliSurgeonExtract, BadInputIsOneLine) {
  TempDir dir;
  const std::string out = (dir / "x.onnx").string();
  expect_bad_input(run_vernier({"surgeon", "extract", kDemo, "--inputs", "nope", "-o", out}), "'nope'");
  expect_bad_input(run_vernier({"surgeon", "extract", kDemo, "--outputs", "relu1:[1,2]", "-o", out}), "not a dtype");
  expect_bad_input(run_vernier({"surgeon", "extract", kDemo, "--inputs", "relu2", "--outputs", "relu1", "-o", out}),
                   "cannot be computed");
  expect_bad_input(run_vernier({"surgeon", "extract", (dir / "missing.onnx").string(), "-o", out}), "missing.onnx");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliSurgeonSanitize, FoldsConstantsAndTheOutputMatches) {
  TempDir dir;
  const Model model = engine::test::make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3,4] X, float[5,4] Wt) => (float[3,5] Y) {"
      "  k = Constant<value = float[1] {0.5}>()  w = Transpose(Wt)  ws = Mul(w, k)  m = MatMul(X, ws)"
      "  Y = Relu(m)  dead = Sigmoid(X) }",
      {{"Wt", engine::test::random_tensor({5, 4}, 1)}});
  const std::string in = (dir / "in.onnx").string(), out = (dir / "out.onnx").string();
  ASSERT_TRUE(save_model(model, in).ok());
  auto r = run_vernier({"surgeon", "sanitize", in, "--fold-constants", "--cleanup", "--toposort", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Total Nodes | Original: 6, After Folding: 3 | 3 Nodes Folded"));
  EXPECT_THAT(r.out, HasSubstr("Cleanup removed 1 node(s)"));
  Result<Model> sanitized = load_model(out);
  ASSERT_TRUE(sanitized.ok()) << sanitized.status().to_string();
  EXPECT_EQ(sanitized->graph.nodes.size(), 2u);

  // Same outputs for the same inputs, compared by `vernier run` itself.
  const std::string golden = (dir / "golden.json").string();
  ASSERT_EQ(run_vernier({"run", in, "--ref", "--save-outputs", golden}).exit_code, 0);
  auto cmp = run_vernier({"run", out, "--ref", "--load-outputs", golden});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
}

TEST(CliSurgeonSanitize, OverrideInputShapesAndErrors) {
  TempDir dir;
  Result<Model> m = parse_model_text(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[N,4] X) => (float[N,4] Y) { r = Relu(X)  Y = Sigmoid(r) }");
  ASSERT_TRUE(m.ok());
  const std::string in = (dir / "dyn.onnx").string(), out = (dir / "static.onnx").string();
  ASSERT_TRUE(save_model(*m, in).ok());
  auto r = run_vernier({"surgeon", "sanitize", in, "--override-input-shapes", "X:[3,4]", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Input X: shape (N, 4) -> (3, 4)"));
  Result<Model> fixed = load_model(out);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->graph.outputs[0].type_string(), "float32 (3, 4)");

  expect_bad_input(run_vernier({"surgeon", "sanitize", in, "--override-input-shapes", "X", "-o", out}),
                   "--override-input-shapes 'X'");
  expect_bad_input(run_vernier({"surgeon", "sanitize", in, "--override-input-shapes", "Z:[1]", "-o", out}), "'Z'");
  expect_bad_input(run_vernier({"surgeon", "sanitize", in}), "--output");
}

}  // namespace
}  // namespace vn
