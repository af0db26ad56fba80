// SPDX-License-Identifier: Apache-2.0
// The accuracy problems the engine exists to reproduce, produced by its real numerics: fp16
// overflow, one-pass LayerNorm cancellation, unshifted Softmax overflow, and fusion changes when
// every tensor is marked.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/engine/engine_backend.h"
#include "core/engine/tactic_replay.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

/// Runs `model` on the engine with every layer's choice from a deterministic build in
/// `precision`, except `layer`, which runs `tactic` in `precision`.
TensorMap run_forced(const Model& model, const TensorMap& feeds, PrecisionMask allowed, const std::string& layer,
                     TacticId tactic, PrecisionId precision) {
  EngineOptions first;
  first.build.deterministic = true;
  first.build.allowed = allowed;
  EngineBackend probe(first);
  Status st = probe.prepare(model, {});
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  TacticReplay replay = tactic_replay_from_plan(*probe.plan());
  bool found = false;
  for (ReplayEntry& e : replay.entries) {
    if (e.layer != layer) continue;
    e.tactic = tactic;
    e.precision = precision;
    found = true;
  }
  EXPECT_TRUE(found) << "no layer " << layer;
  EngineOptions forced;
  forced.build.replay = replay;
  EngineBackend engine(forced);
  st = engine.prepare(model, {});
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return {};
  Result<TensorMap> out = engine.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : TensorMap();
}

double max_abs_error(const Tensor& test, const Tensor& ref) {
  double worst = 0;
  auto t = test.values<float>();
  auto r = ref.values<float>();
  for (size_t i = 0; i < t.size(); ++i) {
    const double e = std::abs(static_cast<double>(t[i]) - r[i]);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

TEST(Phenomena, Fp16OverflowsWhereTheReferenceIsFinite) {
  // Activations around 1e5 fit float32 easily and float16 (max 65504) not at all.
  const Model model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[4,64] X, float[64,16] W) => (float[4,16] Y) { m = MatMul(X, W)  Y = Relu(m) }",
      {{"W", random_tensor({64, 16}, 1, 2000.0f, 6000.0f)}});
  const TensorMap feeds{{"X", random_tensor({4, 64}, 2, 0.0f, 1.0f)}};
  const TensorMap ref = test::run_reference(model, feeds);
  for (float v : ref.find("Y")->values<float>()) ASSERT_TRUE(std::isfinite(v) && v > 65504.0f);

  EngineOptions fp16;
  fp16.build.deterministic = true;
  fp16.build.allowed = kFp16 | kFp16Strict;
  EngineBackend engine(fp16);
  ASSERT_TRUE(engine.prepare(model, {}).ok());
  Result<TensorMap> out = engine.run(feeds);
  ASSERT_TRUE(out.ok());
  for (float v : out->find("Y")->values<float>()) EXPECT_TRUE(std::isinf(v)) << v;

  EngineOptions fp32;
  fp32.build.deterministic = true;
  EngineBackend exact(fp32);
  ASSERT_TRUE(exact.prepare(model, {}).ok());
  test::expect_close(*exact.run(feeds)->find("Y"), *ref.find("Y"), {1e-2, 1e-5}, "fp32 engine");
}

/// LayerNormalization over 2048 integers in [1020, 1028] (exact in float16): the mean is large
/// against the spread, which is what breaks E[x^2] - E[x]^2.
struct OffsetLayerNorm {
  Model model;
  TensorMap feeds;
  TensorMap ref;
};

OffsetLayerNorm offset_layernorm() {
  OffsetLayerNorm c;
  c.model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[4,2048] X, float[2048] S, float[2048] B) => (float[4,2048] Y) "
      "{ Y = LayerNormalization<axis=-1>(X, S, B) }",
      {{"S", random_tensor({2048}, 1, 0.5f, 1.5f)}, {"B", random_tensor({2048}, 2)}});
  Tensor x = random_tensor({4, 2048}, 3, -4.0f, 4.0f);
  for (float& v : x.mutable_values<float>()) v = 1024.0f + std::round(v);
  c.feeds.set("X", x);
  c.ref = test::run_reference(c.model, c.feeds);
  return c;
}

TEST(Phenomena, OnePassLayerNormLosesAccuracyInFp16WhereWelfordDoesNot) {
  const OffsetLayerNorm c = offset_layernorm();
  const std::string layer = "LayerNormalization_0";
  const TensorMap welford = run_forced(c.model, c.feeds, kFp16, layer, TacticId::kLayerNormWelford, PrecisionId::kFp16);
  const TensorMap one_pass =
      run_forced(c.model, c.feeds, kFp16, layer, TacticId::kLayerNormOnePass, PrecisionId::kFp16);
  const double welford_error = max_abs_error(*welford.find("Y"), *c.ref.find("Y"));
  const double one_pass_error = max_abs_error(*one_pass.find("Y"), *c.ref.find("Y"));
  EXPECT_LT(welford_error, 5e-3) << "Welford in fp16 is off by float16 output rounding only";
  EXPECT_GT(one_pass_error, 10 * welford_error) << "one-pass: " << one_pass_error << ", Welford: " << welford_error;

  // With float16 accumulation the running sum of squares (about 2e9) overflows outright.
  const TensorMap strict =
      run_forced(c.model, c.feeds, kFp16 | kFp16Strict, layer, TacticId::kLayerNormOnePass, PrecisionId::kFp16Strict);
  EXPECT_FALSE(std::isfinite(max_abs_error(*strict.find("Y"), *c.ref.find("Y"))));
}

TEST(Phenomena, UnshiftedSoftmaxOverflows) {
  const Model model =
      make_model("<ir_version: 8, opset_import: [\"\" : 13]>\ng (float[2,10] X) => (float[2,10] Y) { Y = Softmax(X) }");
  const std::string layer = "Softmax_0";
  // exp(x) overflows float32 above 88.7.
  const TensorMap large{{"X", random_tensor({2, 10}, 1, 90.0f, 100.0f)}};
  const TensorMap ref = test::run_reference(model, large);
  const TensorMap shifted = run_forced(model, large, kFp32, layer, TacticId::kSoftmaxMaxShifted, PrecisionId::kFp32);
  const TensorMap unshifted = run_forced(model, large, kFp32, layer, TacticId::kSoftmaxUnshifted, PrecisionId::kFp32);
  test::expect_close(*shifted.find("Y"), *ref.find("Y"), {1e-6, 1e-4}, "max-shifted softmax");
  for (float v : unshifted.find("Y")->values<float>()) EXPECT_TRUE(std::isnan(v));

  // Computing in float16, exp(x) overflows above 11.1.
  const TensorMap moderate{{"X", random_tensor({2, 10}, 2, 12.0f, 16.0f)}};
  const TensorMap strict =
      run_forced(model, moderate, kFp16 | kFp16Strict, layer, TacticId::kSoftmaxUnshifted, PrecisionId::kFp16Strict);
  const TensorMap strict_shifted =
      run_forced(model, moderate, kFp16 | kFp16Strict, layer, TacticId::kSoftmaxMaxShifted, PrecisionId::kFp16Strict);
  EXPECT_FALSE(std::isfinite(max_abs_error(*strict.find("Y"), *test::run_reference(model, moderate).find("Y"))));
  test::expect_close(*strict_shifted.find("Y"), *test::run_reference(model, moderate).find("Y"), {5e-3, 5e-3},
                     "max-shifted softmax in fp16_strict");
}

TEST(Phenomena, MarkingEveryTensorChangesAnFp16Result) {
  // Fused, Conv+BatchNormalization rounds once to float16; unfused, the Conv output is rounded
  // before the BatchNormalization scales it, so the two builds disagree.
  const Model model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,8,6,6] X, float[8,8,3,3] W, float[8] S, float[8] B, float[8] M, float[8] V) => (float[1,8,6,6] Y) "
      "{ c = Conv<pads=[1,1,1,1]>(X, W)  Y = BatchNormalization(c, S, B, M, V) }",
      {{"W", random_tensor({8, 8, 3, 3}, 1)},
       {"S", random_tensor({8}, 2, 2.0f, 8.0f)},
       {"B", random_tensor({8}, 3)},
       {"M", random_tensor({8}, 4)},
       {"V", random_tensor({8}, 5, 0.01f, 0.1f)}});
  const TensorMap feeds{{"X", random_tensor({1, 8, 6, 6}, 6)}};
  EngineOptions fp16;
  fp16.build.deterministic = true;
  fp16.build.allowed = kFp16;
  EngineBackend fused(fp16), unfused(fp16);
  PrepareOptions all;
  all.mark_all = true;
  ASSERT_TRUE(fused.prepare(model, {}).ok());
  ASSERT_TRUE(unfused.prepare(model, all).ok());
  EXPECT_EQ(fused.plan()->layers.size(), 1u);
  EXPECT_EQ(unfused.plan()->layers.size(), 2u);
  const Tensor y_fused = *fused.run(feeds)->find("Y");
  const Tensor y_unfused = *unfused.run(feeds)->find("Y");
  EXPECT_FALSE(y_fused.same_as(y_unfused));
  EXPECT_GT(max_abs_error(y_fused, y_unfused), 0.0);
}

}  // namespace
}  // namespace vn::engine
