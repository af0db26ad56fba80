// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

double clamp_oracle(double v, double lo, double hi) {
  if (std::isnan(v)) return kNaN;
  return v < lo ? lo : (v > hi ? hi : v);
}

TEST(Activations, ReluSweep) {
  for (int64_t opset : {6, 13, 14}) unary_sweep("Relu", opset, [](double x) { return x < 0 ? 0.0 : x; });
}

TEST(Activations, ReluIntegersAtOpset14) {
  OpTester t("Relu", 14);
  t.input<int32_t>({5}, {-3, -1, 0, 2, 2147483647});
  t.output<int32_t>({5}, {0, 0, 0, 2, 2147483647});
  t.run();
}

TEST(Activations, ReluDoubleAndEmpty) {
  OpTester t("Relu", 13);
  t.input<double>({2, 2}, {-1.5, 2.25, 0.0, -0.0});
  t.output<double>({2, 2}, {0.0, 2.25, 0.0, 0.0});
  t.run();
  OpTester e("Relu", 13);
  e.input<float>({0, 3}, {});
  e.output<float>({0, 3}, {});
  e.run();
}

TEST(Activations, ReluRejectsBool) {
  OpTester t("Relu", 14);
  t.input<bool>({1}, {true});
  t.expect_failure(StatusCode::kUnsupportedDType, "bool");
}

TEST(Activations, LeakyReluDefaultAndCustomAlpha) {
  unary_sweep("LeakyRelu", 6, [](double x) { return x < 0 ? 0.01 * x : x; });
  unary_sweep(
      "LeakyRelu", 16, [](double x) { return x < 0 ? 0.1 * x : x; }, [](OpTester& t) { t.attr("alpha", 0.1f); });
  OpTester t("LeakyRelu", 16);
  t.attr("alpha", 0.5f);
  t.input<float>({3}, {-2.0f, 0.0f, 4.0f});
  t.output<float>({3}, {-1.0f, 0.0f, 4.0f});
  t.run();
}

TEST(Activations, LeakyReluWrongAttributeTypeIsReported) {
  OpTester t("LeakyRelu", 16);
  t.attr("alpha", int64_t{1});
  t.input<float>({1}, {-1.0f});
  t.expect_failure(StatusCode::kInvalidModel, "attribute 'alpha' is of type int, expected float");
}

TEST(Activations, SigmoidSweep) {
  for (int64_t opset : {6, 13}) unary_sweep("Sigmoid", opset, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

TEST(Activations, SigmoidKeepsRelativePrecisionForLargeNegative) {
  // The naive 1 - 1/(1+e^-x) form returns 0 here; the split form keeps e^-30 / (1 + e^-30).
  OpTester t("Sigmoid", 13);
  t.input<float>({2}, {-30.0f, -80.0f});
  t.output<float>({2}, {static_cast<float>(1.0 / (1.0 + std::exp(30.0))), static_cast<float>(std::exp(-80.0))});
  t.tolerance(0.0, 1e-5);
  t.run();
}

TEST(Activations, SigmoidExactIntoTheSubnormalsAndOnThreads) {
  // Below about -87 Eigen's vectorized exp would stop at the smallest normal float; std::exp's
  // subnormal results are kept. 100000 elements run on two threads.
  std::vector<float> x = random_floats(100000, 8, -120.0f, 30.0f), y(x.size());
  x[0] = -100.0f;
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(1.0 / (1.0 + std::exp(-double{x[i]})));
  OpTester t("Sigmoid", 13);
  t.input<float>({100000}, x).output<float>({100000}, y);
  t.tolerance(0.0, 1e-5).threads(2).run();
}

TEST(Activations, SigmoidDouble) {
  OpTester t("Sigmoid", 13);
  t.input<double>({3}, {0.0, 2.0, -2.0});
  t.output<double>({3}, {0.5, 1.0 / (1.0 + std::exp(-2.0)), 1.0 / (1.0 + std::exp(2.0))});
  t.run();
}

TEST(Activations, SigmoidRejectsIntegers) {
  OpTester t("Sigmoid", 13);
  t.input<int64_t>({1}, {1});
  t.expect_failure(StatusCode::kUnsupportedDType,
                   "input of type int64 is not supported (supported: float32, float64, float16, bfloat16)");
}

TEST(Activations, TanhSweep) {
  for (int64_t opset : {6, 13}) unary_sweep("Tanh", opset, [](double x) { return std::tanh(x); });
}

TEST(Activations, EluSweep) {
  unary_sweep("Elu", 6, [](double x) { return x > 0 ? x : std::expm1(x); });
  unary_sweep(
      "Elu", 6, [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); }, [](OpTester& t) { t.attr("alpha", 0.5f); });
}

TEST(Activations, SeluSweep) {
  const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  unary_sweep("Selu", 6, [&](double x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
  unary_sweep(
      "Selu", 6, [](double x) { return 2.0 * (x > 0 ? x : 1.5 * std::expm1(x)); },
      [](OpTester& t) { t.attr("alpha", 1.5f).attr("gamma", 2.0f); });
}

TEST(Activations, HardSigmoidSweep) {
  unary_sweep("HardSigmoid", 6, [](double x) { return clamp_oracle(0.2 * x + 0.5, 0.0, 1.0); });
  unary_sweep(
      "HardSigmoid", 6, [](double x) { return clamp_oracle(0.5 * x + 0.25, 0.0, 1.0); },
      [](OpTester& t) { t.attr("alpha", 0.5f).attr("beta", 0.25f); });
}

TEST(Activations, HardSwishSweep) {
  unary_sweep("HardSwish", 14, [](double x) {
    if (std::isnan(x)) return kNaN;
    return x <= -3 ? 0.0 : (x >= 3 ? x : x * (x / 6.0 + 0.5));
  });
  OpTester t("HardSwish", 14);
  t.input<float>({5}, {-4.0f, -1.5f, 0.0f, 1.5f, -kInfF});
  t.output<float>({5}, {0.0f, -0.375f, 0.0f, 1.125f, 0.0f});
  t.run();
}

// The float kernel runs 8 elements at a time, computing the middle piece everywhere and choosing:
// its values are the scalar piecewise form's, bit for bit, around both joints, at the infinities
// and NaN, and in the elements past the last whole vector.
TEST(Activations, HardSwishVectorsHaveTheScalarFormsBits) {
  std::vector<float> x = sweep_inputs(200);
  for (float edge : {-3.0f, 3.0f}) {
    float below = edge, above = edge;
    for (int i = 0; i < 4; ++i) {
      below = std::nextafter(below, -kInfF);
      above = std::nextafter(above, kInfF);
      x.insert(x.end(), {below, above});
    }
    x.push_back(edge);
  }
  x.resize(x.size() / 8 * 8 + 5, 2.5f);
  std::vector<float> want;
  for (float v : x) want.push_back(v <= -3.0f ? 0.0f : (v >= 3.0f ? v : v * (v / 6.0f + 0.5f)));
  OpTester t("HardSwish", 22);
  const Shape shape{static_cast<int64_t>(x.size())};
  t.input<float>(shape, x).output<float>(shape, want).tolerance(0.0, 0.0);
  t.run();
}

TEST(Activations, SoftplusSweepIsOverflowFree) {
  unary_sweep("Softplus", 1, [](double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::abs(x))); });
  OpTester t("Softplus", 1);
  t.input<float>({3}, {100.0f, 0.0f, -100.0f});
  t.output<float>({3}, {100.0f, static_cast<float>(std::log(2.0)), static_cast<float>(std::exp(-100.0))});
  t.tolerance(0.0, 1e-6);
  t.run();
}

// ---- Clip --------------------------------------------------------------------------------------

TEST(Clip, Opset6AttributesAndDefaults) {
  OpTester t("Clip", 6);
  t.attr("min", -1.0f).attr("max", 2.0f);
  t.input<float>({5}, {-3.0f, -1.0f, 0.5f, 2.0f, 7.0f});
  t.output<float>({5}, {-1.0f, -1.0f, 0.5f, 2.0f, 2.0f});
  t.run();
  // Defaults are ∓FLT_MAX: infinities are clipped to them, NaN passes through.
  const float kMax = std::numeric_limits<float>::max();
  OpTester d("Clip", 6);
  d.input<float>({3}, {-kInfF, kInfF, kNaNF});
  d.output<float>({3}, {-kMax, kMax, kNaNF});
  d.run();
}

TEST(Clip, SameNodeDiffersBetweenOpset6And11) {
  // Opset 6 reads min/max attributes, opset 11 min/max inputs.
  OpTester six("Clip", 6);
  six.attr("min", 0.0f).attr("max", 1.0f);
  six.input<float>({3}, {-5, 0.5f, 5});
  six.output<float>({3}, {0, 0.5f, 1});
  six.run();
  OpTester eleven("Clip", 11);
  eleven.input<float>({3}, {-5, 0.5f, 5}).input<float>({}, {-2}).input<float>({}, {2});
  eleven.output<float>({3}, {-2, 0.5f, 2});
  eleven.run();
}

TEST(Clip, Opset1WithoutAttributesIsIdentity) {
  OpTester t("Clip", 1);
  t.input<float>({3}, {-kInfF, 5.0f, kInfF});
  t.output<float>({3}, {-kInfF, 5.0f, kInfF});
  t.run();
}

TEST(Clip, Opset11InputsMinMax) {
  OpTester t("Clip", 11);
  t.input<float>({3, 3}, {-1, 0, 1, -6, 0, 6, -5.4f, 2, 6});
  t.input<float>({}, {-5});
  t.input<float>({}, {5});
  t.output<float>({3, 3}, {-1, 0, 1, -5, 0, 5, -5, 2, 5});
  t.run();
}

TEST(Clip, Opset11OmittedMinOrMax) {
  OpTester t("Clip", 11);
  t.input<float>({3}, {-10, 0, 10});
  t.omitted_input();
  t.input<float>({}, {1});
  t.output<float>({3}, {-10, 0, 1});
  t.run();
  OpTester u("Clip", 13);
  u.input<float>({3}, {-10, 0, 10});
  u.input<float>({}, {-1});
  u.output<float>({3}, {-1, 0, 10});
  u.run();
}

TEST(Activations, SoftsignSweep) {
  unary_sweep("Softsign", 1, [](double x) { return std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::abs(x)); });
}

TEST(Activations, ThresholdedReluSweep) {
  unary_sweep("ThresholdedRelu", 10, [](double x) { return x > 1.0 || std::isnan(x) ? x : 0.0; });
  unary_sweep(
      "ThresholdedRelu", 10, [](double x) { return x > -0.5 || std::isnan(x) ? x : 0.0; },
      [](OpTester& t) { t.attr("alpha", -0.5f); });
}

TEST(Activations, CeluSweep) {
  unary_sweep("Celu", 12, [](double x) { return std::max(0.0, x) + std::min(0.0, std::expm1(x)); });
  unary_sweep(
      "Celu", 12, [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * std::expm1(x / 2.0)); },
      [](OpTester& t) { t.attr("alpha", 2.0f); });
}

TEST(Activations, CeluRejectsZeroAlpha) {
  OpTester t("Celu", 12);
  t.attr("alpha", 0.0f);
  t.input<float>({1}, {1.0f});
  t.expect_failure(StatusCode::kInvalidModel, "alpha must be non-zero");
}

TEST(Activations, ShrinkHardSoftAndIntegers) {
  OpTester hard("Shrink", 9);
  hard.attr("lambd", 1.5f);
  hard.input<float>({5}, {-2, -1.5f, 0, 1.5f, 2});
  hard.output<float>({5}, {-2, 0, 0, 0, 2});
  hard.run();
  OpTester soft("Shrink", 9);
  soft.attr("lambd", 1.5f).attr("bias", 1.5f);
  soft.input<float>({5}, {-2, -1, 0, 1, 2});
  soft.output<float>({5}, {-0.5f, 0, 0, 0, 0.5f});
  soft.run();
  OpTester ints("Shrink", 9);
  ints.attr("lambd", 1.0f).attr("bias", 2.0f);
  ints.input<int8_t>({5}, {-128, -2, 1, 2, 127});
  ints.output<int8_t>({5}, {-126, 0, 0, 0, 125});
  ints.run();
  OpTester u("Shrink", 9);
  u.attr("lambd", 1.0f).attr("bias", 5.0f);
  u.input<uint8_t>({3}, {1, 3, 200});
  u.output<uint8_t>({3}, {0, 0, 195});  // 3 - 5 saturates at 0
  u.run();
}

TEST(Activations, PReluBroadcastsTheSlope) {
  OpTester t("PRelu", 16);
  t.input<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  t.input<float>({3}, {0.5f, 0.25f, 2});
  t.output<float>({2, 3}, {-0.5f, 2, -6, 4, -1.25f, 6});
  t.run();
  OpTester s("PRelu", 7);
  s.input<double>({3}, {-4, 0, 4});
  s.input<double>({1}, {0.25});
  s.output<double>({3}, {-1, 0, 4});
  s.run();
  OpTester i("PRelu", 9);
  i.input<int32_t>({3}, {-4, 0, 4});
  i.input<int32_t>({}, {3});
  i.output<int32_t>({3}, {-12, 0, 4});
  i.run();
}

TEST(Activations, PRelu6SlopePerChannel) {
  // Caffe2 semantics before opset 7: a 1-D slope of C values applies along dim 1.
  OpTester t("PRelu", 6);
  t.input<float>({1, 2, 2}, {-1, -2, -3, 4});
  t.input<float>({2}, {0.5f, 2});
  t.output<float>({1, 2, 2}, {-0.5f, -1, -6, 4});
  t.run();
}

TEST(Activations, PReluSlopeMustBroadcastToX) {
  OpTester t("PRelu", 16);
  t.input<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  t.input<float>({2}, {0.5f, 0.25f});
  t.expect_failure(StatusCode::kShapeMismatch, "slope of shape (2,) does not broadcast to X's shape (2, 3)");
  OpTester u("PRelu", 16);
  u.input<float>({2}, {1, 2}).input<float>({1, 2}, {1, 2});
  u.expect_failure(StatusCode::kShapeMismatch, "does not broadcast");
}

TEST(Clip, Opset11RefusesAttributesItDoesNotRead) {
  // From opset 11 min/max are inputs; a leftover attribute is not computed around silently.
  OpTester t("Clip", 11);
  t.attr("min", 0.0f);
  t.input<float>({2}, {-1, 1});
  t.expect_failure(StatusCode::kUnsupportedAttr, "attribute 'min' of Clip-11 is not implemented");
}

TEST(Clip, MinGreaterThanMaxGivesMax) {
  OpTester t("Clip", 13);
  t.input<float>({3}, {-1, 0.5f, 3});
  t.input<float>({}, {2});
  t.input<float>({}, {1});
  t.output<float>({3}, {1, 1, 1});
  t.run();
}

TEST(Clip, IntegersAtOpset12) {
  OpTester t("Clip", 12);
  t.input<int64_t>({4}, {-100, -3, 4, 100});
  t.input<int64_t>({}, {-5});
  t.input<int64_t>({}, {5});
  t.output<int64_t>({4}, {-5, -3, 4, 5});
  t.run();
}

TEST(Clip, MinOfWrongTypeOrShapeFails) {
  OpTester t("Clip", 11);
  t.input<float>({2}, {1, 2});
  t.input<double>({}, {0});
  t.expect_failure(StatusCode::kInvalidModel, "min must be float32");
  OpTester s("Clip", 11);
  s.input<float>({2}, {1, 2});
  s.input<float>({2}, {0, 1});
  s.expect_failure(StatusCode::kShapeMismatch, "min must be a scalar");
}

// float16 and bfloat16 are computed in float and rounded once, as ONNX 1.23's expected values
// are: Celu(-0.5) with alpha 2 in bfloat16 is -0.443359375, where rounding each step of Celu's
// function body (exp, -1, *alpha) would give -0.4453125.
TEST(Activations, CeluAndEluOnHalfTypesRoundOnce) {
  const std::vector<float> x = {-3, -0.5f, 0.5f, 65504};
  OpTester h("Celu", 28);
  h.attr("alpha", 2.0f);
  h.input(narrow_tensor<Eigen::half>({4}, x));
  h.output(narrow_tensor<Eigen::half>({4}, {-1.5537109375f, -0.4423828125f, 0.5f, 65504}));
  h.run();
  OpTester b("Celu", 28);
  b.attr("alpha", 2.0f);
  b.input(narrow_tensor<Eigen::bfloat16>({3}, {-3, -0.5f, 0.5f}));
  b.output(narrow_tensor<Eigen::bfloat16>({3}, {-1.5546875f, -0.443359375f, 0.5f}));
  b.run();
  OpTester e("Elu", 22);
  e.input(narrow_tensor<Eigen::half>({3}, {-3, -0.5f, 0.5f}));
  e.output(narrow_tensor<Eigen::half>({3}, {-0.9501953125f, -0.3935546875f, 0.5f}));
  e.run();
  OpTester eb("Elu", 22);
  eb.input(narrow_tensor<Eigen::bfloat16>({3}, {-3, -0.5f, 0.5f}));
  eb.output(narrow_tensor<Eigen::bfloat16>({3}, {-0.94921875f, -0.392578125f, 0.5f}));
  eb.run();
}

// The other activations on float16 compute in float and round once too (values from numpy on
// float32, rounded to float16). Clip-13 without bounds leaves -inf and 65504 alone.
TEST(Activations, HalfTypesComputeInFloatAndRoundOnce) {
  const std::vector<float> x = {-3, 1, -0.5f, 2};
  OpTester l("LeakyRelu", 16);
  l.attr("alpha", 0.1f);
  l.input(narrow_tensor<Eigen::half>({4}, x));
  l.output(narrow_tensor<Eigen::half>({4}, {-0.300048828125f, 1, -0.04998779296875f, 2}));
  l.run();
  OpTester h("HardSigmoid", 22);
  h.input(narrow_tensor<Eigen::half>({4}, x));
  h.output(narrow_tensor<Eigen::half>({4}, {0, 0.7001953125f, 0.39990234375f, 0.89990234375f}));
  h.run();
  OpTester p("Softplus", 22);
  p.input(narrow_tensor<Eigen::half>({4}, x));
  p.output(narrow_tensor<Eigen::half>({4}, {0.048583984375f, 1.3134765625f, 0.47412109375f, 2.126953125f}));
  p.run();
  OpTester s("Selu", 22);
  s.input(narrow_tensor<Eigen::half>({4}, x));
  s.output(narrow_tensor<Eigen::half>({4}, {-1.6708984375f, 1.05078125f, -0.69189453125f, 2.1015625f}));
  s.run();
  const float inf = std::numeric_limits<float>::infinity();
  OpTester c("Clip", 13);
  c.input(narrow_tensor<Eigen::bfloat16>({3}, {-inf, 0.5f, inf}));
  c.output(narrow_tensor<Eigen::bfloat16>({3}, {-inf, 0.5f, inf}));
  c.run();
}

}  // namespace
}  // namespace vn::ops::testing
