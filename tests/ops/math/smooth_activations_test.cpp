// SPDX-License-Identifier: Apache-2.0
// Gelu-20, Mish-18/22, Swish-24 and SwiGLU-28 over the float32 edge sweep against their formulas in
// double, and SwiGLU in float16 against numpy (computed in float64, rounded once: ONNX 1.23's own
// expected values for float16 SwiGLU are those).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(SmoothActivations, GeluExactAndTanhSweeps) {
  unary_sweep("Gelu", 20, [](double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); });
  unary_sweep(
      "Gelu", 20,
      [](double x) {
        const double k = std::sqrt(static_cast<double>(static_cast<float>(2 / std::numbers::pi)));
        return 0.5 * x * (1 + std::tanh(k * (x + static_cast<double>(0.044715f) * x * x * x)));
      },
      [](OpTester& t) { t.attr("approximate", "tanh"); });
  OpTester t("Gelu", 20);
  t.attr("approximate", "sigmoid");
  t.input<float>({1}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "approximate must be \"none\" or \"tanh\"");
}

TEST(SmoothActivations, GeluHandComputed) {
  // Gelu(1) = 0.5 (1 + erf(1/sqrt 2)) = 0.841344746...
  OpTester t("Gelu", 20);
  t.input<double>({2}, {1, -1});
  t.output<double>({2}, {0.8413447460685429, -0.15865525393145707});
  t.run();
}

TEST(SmoothActivations, MishSweep) {
  for (int64_t opset : {18, 22}) {
    unary_sweep("Mish", opset, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  }
}

TEST(SmoothActivations, SwishSweepWithAlpha) {
  unary_sweep("Swish", 24, [](double x) { return x / (1 + std::exp(-x)); });
  unary_sweep(
      "Swish", 24, [](double x) { return x / (1 + std::exp(-0.5 * x)); }, [](OpTester& t) { t.attr("alpha", 0.5f); });
}

TEST(SmoothActivations, SwiGLUGatesBWithSwishOfA) {
  const std::vector<float> a = random_floats(12, 71, -6, 6), b = random_floats(12, 72, -3, 3);
  std::vector<float> y;
  for (size_t i = 0; i < a.size(); ++i) y.push_back(static_cast<float>(a[i] / (1 + std::exp(-1.5 * a[i])) * b[i]));
  OpTester t("SwiGLU", 28);
  t.attr("alpha", 1.5f);
  t.input<float>({3, 4}, a).input<float>({3, 4}, b);
  t.output<float>({3, 4}, y);
  t.run();
  OpTester bad("SwiGLU", 28);
  bad.input<float>({3, 4}, a).input<float>({4}, {1, 2, 3, 4});
  bad.expect_failure(StatusCode::kShapeMismatch, "must have one shape and type");
}

std::vector<Eigen::half> halves(const std::vector<float>& v) {
  std::vector<Eigen::half> out;
  for (float x : v) out.emplace_back(x);
  return out;
}

TEST(SmoothActivations, SwiGLUFloat16RoundsOnce) {
  OpTester t("SwiGLU", 28);
  t.attr("alpha", 0.5f);
  t.input<Eigen::half>({4}, halves({0.7001953125, -1.2998046875, 2.900390625, -0.04998779296875}));
  t.input<Eigen::half>({4}, halves({-0.7998046875, 1.7001953125, 0.330078125, 3.099609375}));
  // Step by step in float16 the first two would be -0.328369140625 and -0.7587890625.
  t.output<Eigen::half>({4}, halves({-0.32861328125, -0.7578125, 0.775390625, -0.07647705078125}));
  t.run();
}

}  // namespace
}  // namespace vn::ops::testing
