// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<float> batch_norm_oracle(const std::vector<float>& x, int64_t n, int64_t c, int64_t inner,
                                     const std::vector<float>& scale, const std::vector<float>& bias,
                                     const std::vector<float>& mean, const std::vector<float>& var, double eps) {
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < inner; ++k) {
        const size_t at = static_cast<size_t>((i * c + ch) * inner + k);
        y[at] =
            static_cast<float>((x[at] - double(mean[ch])) / std::sqrt(double(var[ch]) + eps) * scale[ch] + bias[ch]);
      }
  return y;
}

TEST(BatchNormalization, HandComputed) {
  OpTester t("BatchNormalization", 15);
  t.input<float>({1, 2, 1, 2}, {1, 3, 10, 20});
  t.input<float>({2}, {1, 2}).input<float>({2}, {0, 1});
  t.input<float>({2}, {2, 15}).input<float>({2}, {4, 25});
  t.attr("epsilon", 0.0f);
  t.output<float>({1, 2, 1, 2}, {-0.5f, 0.5f, -1, 3});
  t.run();
}

TEST(BatchNormalization, AllInferenceOpsetsAgainstOracle) {
  const int64_t n = 2, c = 3, inner = 20;
  const std::vector<float> x = random_floats(n * c * inner, 1, -4, 4);
  const std::vector<float> scale = random_floats(c, 2), bias = random_floats(c, 3), mean = random_floats(c, 4);
  const std::vector<float> var = random_floats(c, 5, 0.1f, 2.0f);
  for (int64_t opset : {6, 7, 9, 14, 15}) {
    OpTester t("BatchNormalization", opset);
    t.attr("epsilon", 1e-3f);
    t.input<float>({n, c, 4, 5}, x);
    t.input<float>({c}, scale).input<float>({c}, bias).input<float>({c}, mean).input<float>({c}, var);
    t.output<float>({n, c, 4, 5}, batch_norm_oracle(x, n, c, inner, scale, bias, mean, var, 1e-3));
    t.run();
  }
}

TEST(BatchNormalization, DefaultEpsilonAndRank2) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<float> s = {1, 1, 1}, b = {0, 0, 0}, m = {1, 1, 1}, v = {1, 1, 1};
  OpTester t("BatchNormalization", 9);
  t.input<float>({2, 3}, x).input<float>({3}, s).input<float>({3}, b).input<float>({3}, m).input<float>({3}, v);
  t.output<float>({2, 3}, batch_norm_oracle(x, 2, 3, 1, s, b, m, v, 1e-5));
  t.run();
}

TEST(BatchNormalization, Opset15MixedParameterTypes) {
  OpTester t("BatchNormalization", 15);
  t.attr("epsilon", 0.0f);
  t.input<float>({1, 1, 2}, {2, 4});
  t.input<double>({1}, {2}).input<double>({1}, {1});
  t.input<float>({1}, {3}).input<float>({1}, {1});
  t.output<float>({1, 1, 2}, {-1, 3});
  t.run();
}

TEST(BatchNormalization, DoubleInput) {
  OpTester t("BatchNormalization", 14);
  t.attr("epsilon", 0.0f);
  t.input<double>({1, 1, 2}, {0.5, 1.5});
  t.input<double>({1}, {4}).input<double>({1}, {0}).input<double>({1}, {1}).input<double>({1}, {4});
  t.output<double>({1, 1, 2}, {-1, 1});
  t.run();
}

TEST(BatchNormalization, StatisticsOutputsPassRunningStatsThrough) {
  OpTester t("BatchNormalization", 9);
  t.attr("epsilon", 0.0f);
  t.input<float>({1, 1, 1}, {3});
  t.input<float>({1}, {1}).input<float>({1}, {0}).input<float>({1}, {1}).input<float>({1}, {4});
  t.output<float>({1, 1, 1}, {1});
  t.output<float>({1}, {1});
  t.output<float>({1}, {4});
  t.run();
}

TEST(BatchNormalization, TrainingModeIsRefused) {
  OpTester t("BatchNormalization", 14);
  t.attr("training_mode", int64_t{1});
  t.input<float>({1, 1, 1}, {3});
  t.input<float>({1}, {1}).input<float>({1}, {0}).input<float>({1}, {1}).input<float>({1}, {4});
  t.unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedAttr, "training_mode=1");
}

TEST(BatchNormalization, SpatialZeroIsRefused) {
  OpTester t("BatchNormalization", 7);
  t.attr("spatial", int64_t{0});
  t.input<float>({1, 1, 1}, {3});
  t.input<float>({1}, {1}).input<float>({1}, {0}).input<float>({1}, {1}).input<float>({1}, {4});
  t.unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedAttr, "spatial=0");
}

TEST(BatchNormalization, ParameterShapeMismatchFails) {
  OpTester t("BatchNormalization", 15);
  t.input<float>({1, 2, 2}, {1, 2, 3, 4});
  t.input<float>({3}, {1, 1, 1}).input<float>({2}, {0, 0}).input<float>({2}, {0, 0}).input<float>({2}, {1, 1});
  t.unchecked_output();
  t.expect_failure(StatusCode::kShapeMismatch, "scale must have shape (2,) for 2 channels, got (3,)");
  OpTester m("BatchNormalization", 15);
  m.input<float>({1, 2, 2}, {1, 2, 3, 4});
  m.input<float>({2}, {1, 1}).input<float>({2}, {0, 0}).input<float>({2}, {0, 0});
  m.unchecked_output();
  m.expect_failure(StatusCode::kInvalidModel, "expects at least 5 inputs, got 4");
}

}  // namespace
}  // namespace vn::ops::testing
