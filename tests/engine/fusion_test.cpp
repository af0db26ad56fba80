// SPDX-License-Identifier: Apache-2.0
// Constant folding and fusion: which nodes become one layer, that fused layers compute what the
// reference computes, and that marking a tensor prevents the fusion that would hide it (and the
// plan says so).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_backend.h"
#include "core/engine/fusion_list.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

const std::string kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

/// Conv -> BatchNormalization -> Relu -> Conv(1x1) -> Add(residual: the first Relu) -> Relu.
Model conv_bn_model() {
  const std::string text = kHeader +
                           "g (float[1,4,8,8] X, float[6,4,3,3] W, float[6] Bc, float[6] S, float[6] B, float[6] M, "
                           "float[6] V, float[6,6,1,1] W2) => (float[1,6,8,8] Y) {\n"
                           "  c = Conv<pads=[1,1,1,1]>(X, W, Bc)\n"
                           "  n = BatchNormalization<epsilon=1e-3>(c, S, B, M, V)\n"
                           "  r = Relu(n)\n"
                           "  c2 = Conv(r, W2)\n"
                           "  a = Add(c2, r)\n"
                           "  Y = Relu(a)\n}";
  Tensor var = random_tensor({6}, 5, 0.5f, 2.0f);
  return make_model(text, {{"W", random_tensor({6, 4, 3, 3}, 1)},
                           {"Bc", random_tensor({6}, 2)},
                           {"S", random_tensor({6}, 3, 0.5f, 1.5f)},
                           {"B", random_tensor({6}, 4)},
                           {"M", random_tensor({6}, 6)},
                           {"V", var},
                           {"W2", random_tensor({6, 6, 1, 1}, 7)}});
}

struct Built {
  std::unique_ptr<EngineBackend> engine;
  TensorMap outputs;
};

/// Builds `model` on the engine (deterministic unless `options` says otherwise) and runs `feeds`.
Built run_engine(const Model& model, const TensorMap& feeds, PrepareOptions prep = {}, BuildOptions build = {}) {
  if (!build.builder_seed) build.deterministic = true;
  EngineOptions options;
  options.build = std::move(build);
  Built b{std::make_unique<EngineBackend>(options), {}};
  Status st = b.engine->prepare(model, prep);
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return b;
  Result<TensorMap> out = b.engine->run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (out.ok()) b.outputs = std::move(*out);
  return b;
}

std::vector<std::string> layer_names(const Plan& plan) {
  std::vector<std::string> out;
  for (const PlanLayer& l : plan.layers) out.push_back(l.name);
  return out;
}

TEST(Fusion, ConvBatchNormReluAndResidualFoldIntoTwoLayers) {
  const Model model = conv_bn_model();
  const TensorMap feeds{{"X", random_tensor({1, 4, 8, 8}, 9)}};
  Built b = run_engine(model, feeds);
  const Plan& plan = *b.engine->plan();
  EXPECT_EQ(layer_names(plan),
            (std::vector<std::string>{"Conv_0 + BatchNormalization_1 + Relu_2", "Conv_3 + Add_4 + Relu_5"}));
  EXPECT_EQ(plan.layers[0].kind, LayerKind::kConv);
  EXPECT_EQ(plan.layers[0].hidden, (std::vector<std::string>{"c", "n"}));
  EXPECT_EQ(plan.layers[1].inputs, (std::vector<std::string>{"r"}));
  EXPECT_TRUE(plan.prevented.empty());
  const TensorMap ref = test::run_reference(model, feeds);
  test::expect_close(*b.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "fused Conv+BN+Relu, residual");
}

TEST(Fusion, MarkingTheIntermediatePreventsTheFusionAndThePlanSaysSo) {
  const Model model = conv_bn_model();
  const TensorMap feeds{{"X", random_tensor({1, 4, 8, 8}, 9)}};
  PrepareOptions prep;
  prep.outputs = {"c"};
  Built b = run_engine(model, feeds, prep);
  const Plan& plan = *b.engine->plan();
  EXPECT_EQ(plan.layers[0].name, "Conv_0");
  EXPECT_EQ(plan.layers[1].name, "BatchNormalization_1");
  EXPECT_EQ(plan.layers[2].name, "Relu_2");
  ASSERT_EQ(plan.prevented.size(), 1u);
  EXPECT_EQ(plan.prevented[0].describe(),
            "Conv+BatchNormalization of Conv_0, BatchNormalization_1: prevented by marked output c");
  ASSERT_TRUE(b.outputs.contains("c"));
  const TensorMap ref = test::run_reference(model, feeds, {"c"});
  test::expect_close(*b.outputs.find("c"), *ref.find("c"), {1e-5, 1e-5}, "marked conv output");
  test::expect_close(*b.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "output with the fusion prevented");
}

TEST(Fusion, MarkAllRunsEveryNodeAloneAndReportsEveryTensor) {
  const Model model = conv_bn_model();
  const TensorMap feeds{{"X", random_tensor({1, 4, 8, 8}, 9)}};
  PrepareOptions prep;
  prep.mark_all = true;
  Built b = run_engine(model, feeds, prep);
  EXPECT_EQ(b.engine->plan()->layers.size(), model.graph.nodes.size());
  EXPECT_EQ(b.engine->plan()->prevented.size(), 3u);  // Conv+BN, Conv+residual Add, Add+Relu
  EXPECT_EQ(b.outputs.size(), 6u);
}

TEST(Fusion, ObserverSeesLayerOutputsNeverFusedInternals) {
  const Model model = conv_bn_model();
  EngineOptions options;
  options.build.deterministic = true;
  EngineBackend engine(options);
  ASSERT_TRUE(engine.prepare(model, {}).ok());
  std::vector<std::string> seen;
  std::vector<int64_t> nodes;
  RunOptions run;
  run.observer = [&](int64_t index, const Node&, const TensorMap& outputs) {
    nodes.push_back(index);
    for (const NamedTensor& t : outputs) seen.push_back(t.name);
    return true;
  };
  ASSERT_TRUE(engine.run({{"X", random_tensor({1, 4, 8, 8}, 9)}}, run).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"r", "Y"}));
  EXPECT_EQ(nodes, (std::vector<int64_t>{2, 5}));
}

TEST(Fusion, MatMulBiasGeluAndSiLUPatterns) {
  const std::string text = kHeader +
                           "g (float[2,5,16] X, float[16,8] W, float[8] B, float[8,8] W2) => (float[2,5,8] Y) {\n"
                           "  r2 = Constant<value = float {1.4142135}>()\n  one = Constant<value = float {1.0}>()\n"
                           "  half = Constant<value = float {0.5}>()\n"
                           "  m = MatMul(X, W)\n  t = Add(m, B)\n"
                           "  a = Div(t, r2)\n  e = Erf(a)\n  p = Add(e, one)\n  q = Mul(t, p)\n  h = Mul(q, half)\n"
                           "  m2 = MatMul(h, W2)\n  s = Sigmoid(m2)\n  Y = Mul(m2, s)\n}";
  const Model model = make_model(
      text, {{"W", random_tensor({16, 8}, 1)}, {"B", random_tensor({8}, 2)}, {"W2", random_tensor({8, 8}, 3)}});
  const TensorMap feeds{{"X", random_tensor({2, 5, 16}, 4)}};
  Built b = run_engine(model, feeds);
  const Plan& plan = *b.engine->plan();
  ASSERT_EQ(plan.layers.size(), 2u) << plan_to_json(plan).dump(2);
  EXPECT_EQ(plan.layers[0].nodes,
            (std::vector<std::string>{"MatMul_3", "Add_4", "Div_5", "Erf_6", "Add_7", "Mul_8", "Mul_9"}));
  EXPECT_EQ(plan.layers[1].nodes, (std::vector<std::string>{"MatMul_10", "Sigmoid_11", "Mul_12"}));
  EXPECT_EQ(plan.folded, (std::vector<std::string>{"Constant_0", "Constant_1", "Constant_2"}));
  const TensorMap ref = test::run_reference(model, feeds);
  test::expect_close(*b.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "MatMul+bias+GELU, MatMul+SiLU");
}

TEST(Fusion, AMatMulTakesItsBiasAndGeluWithoutShapeInformation) {
  // An exporter's model without value_info (Swin-T's): the product's rank is unknown, but a bias
  // of one dimension fits any rank; one of two dimensions could add one to a 1-D product's, so it
  // stays a layer of its own.
  for (const bool flat_bias : {true, false}) {
    const std::string b_type = flat_bias ? "float[8] B" : "float[1,8] B";
    const std::string text =
        kHeader + "g (float[2,5,16] X, float[16,8] W, " + b_type +
        ") => (float[2,5,8] Y) {\n"
        "  r2 = Constant<value = float {1.4142135}>()\n  one = Constant<value = float {1.0}>()\n"
        "  half = Constant<value = float {0.5}>()\n"
        "  m = MatMul(X, W)\n  t = Add(m, B)\n"
        "  a = Div(t, r2)\n  e = Erf(a)\n  p = Add(e, one)\n  q = Mul(t, p)\n  Y = Mul(q, half)\n}";
    Model model = make_model(
        text, {{"W", random_tensor({16, 8}, 1)}, {"B", random_tensor(flat_bias ? Shape{8} : Shape{1, 8}, 2)}});
    model.graph.value_info.clear();
    const TensorMap feeds{{"X", random_tensor({2, 5, 16}, 4)}};
    Built b = run_engine(model, feeds);
    const Plan& plan = *b.engine->plan();
    SCOPED_TRACE(b_type);
    ASSERT_FALSE(plan.layers.empty());
    if (flat_bias) {
      EXPECT_EQ(plan.layers[0].nodes,
                (std::vector<std::string>{"MatMul_3", "Add_4", "Div_5", "Erf_6", "Add_7", "Mul_8", "Mul_9"}));
    } else {
      EXPECT_EQ(plan.layers[0].nodes, (std::vector<std::string>{"MatMul_3"}));
    }
    const TensorMap ref = test::run_reference(model, feeds);
    test::expect_close(*b.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "MatMul+bias+GELU");
  }
}

/// The LayerNorm pattern PyTorch exports before opset 17, followed by a residual Add+Relu.
Model layernorm_pattern_model() {
  const std::string text = kHeader +
                           "g (float[3,16] X, float[16] G, float[16] Be) => (float[3,16] Y) {\n"
                           "  two = Constant<value = float {2.0}>()\n  eps = Constant<value = float {1e-5}>()\n"
                           "  m = ReduceMean<axes=[-1]>(X)\n  d = Sub(X, m)\n  p = Pow(d, two)\n"
                           "  v = ReduceMean<axes=[-1]>(p)\n  e = Add(v, eps)\n  s = Sqrt(e)\n  n = Div(d, s)\n"
                           "  gn = Mul(n, G)\n  ln = Add(gn, Be)\n  sum = Add(ln, X)\n  Y = Relu(sum)\n}";
  return make_model(text, {{"G", random_tensor({16}, 1)}, {"Be", random_tensor({16}, 2)}});
}

TEST(Fusion, LayerNormPatternAndResidualAddRelu) {
  const Model model = layernorm_pattern_model();
  const TensorMap feeds{{"X", random_tensor({3, 16}, 3)}};
  Built b = run_engine(model, feeds);
  const Plan& plan = *b.engine->plan();
  ASSERT_EQ(plan.layers.size(), 2u);
  EXPECT_EQ(plan.layers[0].kind, LayerKind::kLayerNorm);
  EXPECT_EQ(plan.layers[0].nodes.size(), 9u);
  EXPECT_EQ(plan.layers[1].kind, LayerKind::kEltwise);
  const TensorMap ref = test::run_reference(model, feeds);
  test::expect_close(*b.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "LayerNorm pattern, Add+Relu");

  PrepareOptions prep;
  prep.outputs = {"s"};
  Built marked = run_engine(model, feeds, prep);
  ASSERT_FALSE(marked.engine->plan()->prevented.empty());
  EXPECT_EQ(marked.engine->plan()->prevented[0].fusion, "LayerNorm");
  EXPECT_EQ(marked.engine->plan()->prevented[0].tensor, "s");
  test::expect_close(*marked.outputs.find("Y"), *ref.find("Y"), {1e-5, 1e-5}, "LayerNorm pattern unfused");
}

// ---- The fusion list (core/engine/fusions.inc): one case per row --------------------------------

/// Checks one fusion on `model`: unmarked, a layer hides `tensor` and the outputs match the
/// reference; with `tensor` marked, the plan names the prevented fusion `name` and still matches.
void expect_fusion(const Model& model, const TensorMap& feeds, const std::string& tensor, const std::string& name) {
  const TensorMap ref = test::run_reference(model, feeds, {tensor});
  Built fused = run_engine(model, feeds);
  const Plan& plan = *fused.engine->plan();
  EXPECT_TRUE(std::any_of(plan.layers.begin(), plan.layers.end(), [&](const PlanLayer& l) {
    return std::find(l.hidden.begin(), l.hidden.end(), tensor) != l.hidden.end();
  })) << "no layer hides " << tensor << ": " << plan_to_json(plan).dump(2);
  EXPECT_TRUE(plan.prevented.empty());
  for (const NamedTensor& out : fused.outputs) {
    test::expect_close(out.tensor, *ref.find(out.name), {1e-5, 1e-5}, name + " fused");
  }
  PrepareOptions prep;
  prep.outputs = {tensor};
  Built marked = run_engine(model, feeds, prep);
  const std::vector<PreventedFusion>& prevented = marked.engine->plan()->prevented;
  EXPECT_TRUE(std::any_of(prevented.begin(), prevented.end(), [&](const PreventedFusion& p) {
    return p.fusion == name && p.tensor == tensor;
  })) << "marking " << tensor << " does not prevent " << name;
  ASSERT_TRUE(marked.outputs.contains(tensor));
  test::expect_close(*marked.outputs.find(tensor), *ref.find(tensor), {1e-5, 1e-5}, name + " prevented");
}

/// x * Sigmoid(x) and PyTorch's erf GELU on their own, each after a Relu.
Model activation_patterns_model() {
  const std::string text = kHeader +
                           "g (float[2,8] X) => (float[2,8] Y, float[2,8] Z) {\n"
                           "  r2 = Constant<value = float {1.4142135}>()\n  one = Constant<value = float {1.0}>()\n"
                           "  half = Constant<value = float {0.5}>()\n"
                           "  x = Relu(X)\n  s = Sigmoid(x)\n  Y = Mul(x, s)\n"
                           "  a = Div(X, r2)\n  e = Erf(a)\n  p = Add(e, one)\n  q = Mul(X, p)\n  Z = Mul(q, half)\n}";
  return make_model(text, {});
}

/// MatMul and the Add of a constant bias.
Model matmul_bias_model() {
  const std::string text = kHeader + "g (float[2,5,16] X, float[16,8] W, float[8] B) => (float[2,5,8] Y) {\n"
                                     "  m = MatMul(X, W)\n  Y = Add(m, B)\n}";
  return make_model(text, {{"W", random_tensor({16, 8}, 1)}, {"B", random_tensor({8}, 2)}});
}

const TensorMap kConvFeeds{{"X", random_tensor({1, 4, 8, 8}, 9)}};
const TensorMap kLayerNormFeeds{{"X", random_tensor({3, 16}, 3)}};

void fusion_case_kConvBatchNorm() { expect_fusion(conv_bn_model(), kConvFeeds, "c", "Conv+BatchNormalization"); }
void fusion_case_kProductBias() {
  expect_fusion(matmul_bias_model(), {{"X", random_tensor({2, 5, 16}, 4)}}, "m", "MatMul+bias");
}
void fusion_case_kProductResidual() { expect_fusion(conv_bn_model(), kConvFeeds, "c2", "Conv+residual Add"); }
void fusion_case_kProductActivation() { expect_fusion(conv_bn_model(), kConvFeeds, "n", "Conv+Relu"); }
void fusion_case_kSiLU() { expect_fusion(activation_patterns_model(), {{"X", random_tensor({2, 8}, 5)}}, "s", "SiLU"); }
void fusion_case_kGelu() { expect_fusion(activation_patterns_model(), {{"X", random_tensor({2, 8}, 5)}}, "e", "Gelu"); }
void fusion_case_kLayerNorm() { expect_fusion(layernorm_pattern_model(), kLayerNormFeeds, "s", "LayerNorm"); }
void fusion_case_kLayerNormScale() { expect_fusion(layernorm_pattern_model(), kLayerNormFeeds, "n", "LayerNorm+scale"); }
void fusion_case_kLayerNormBias() { expect_fusion(layernorm_pattern_model(), kLayerNormFeeds, "gn", "LayerNorm+bias"); }
void fusion_case_kAddRelu() { expect_fusion(layernorm_pattern_model(), kLayerNormFeeds, "sum", "Add+Relu"); }

#define VN_FUSION(id, fusion_name, help_line)                                  \
  TEST(FusionList, id) {                                                       \
    EXPECT_FALSE(std::string_view(help_line).empty()) << #id " has no help line"; \
    EXPECT_EQ(fusion_info(Fusion::id).name, fusion_name);                      \
    fusion_case_##id();                                                        \
  }
#include "core/engine/fusions.inc"
#undef VN_FUSION

TEST(Fusion, ConstantShapeArithmeticIsFolded) {
  const std::string text = kHeader +
                           "g (float[2,3,4] X, float[12,4] T) => (float[2,12] Y) {\n"
                           "  s = Shape(T)\n  i = Constant<value = int64[1] {0}>()\n  d = Gather(s, i)\n"
                           "  k = Constant<value = int64[1] {2}>()\n  sh = Concat<axis=0>(k, d)\n"
                           "  r = Reshape(X, sh)\n  Y = Relu(r)\n}";
  const Model model = make_model(text, {{"T", random_tensor({12, 4}, 1)}});
  const TensorMap feeds{{"X", random_tensor({2, 3, 4}, 2)}};
  Built b = run_engine(model, feeds);
  const Plan& plan = *b.engine->plan();
  EXPECT_EQ(plan.folded, (std::vector<std::string>{"Shape_0", "Constant_1", "Gather_2", "Constant_3", "Concat_4"}));
  EXPECT_EQ(layer_names(plan), (std::vector<std::string>{"Reshape_5", "Relu_6"}));
  const TensorMap ref = test::run_reference(model, feeds);
  EXPECT_TRUE(b.outputs.find("Y")->same_as(*ref.find("Y")));
}

}  // namespace
}  // namespace vn::engine
