// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

TEST(BatchNormalization, TrainingModeUsesBatchStatistics) {
  // Channel 0 holds 1, 3, 5, 7 over the batch: mean 4, biased variance 5.
  const double r5 = std::sqrt(5.0);
  OpTester t("BatchNormalization", 15);
  t.attr("training_mode", int64_t{1}).attr("epsilon", 0.0f);
  t.input<float>({2, 1, 2}, {1, 3, 5, 7});
  t.input<float>({1}, {2}).input<float>({1}, {1}).input<float>({1}, {0}).input<float>({1}, {1});
  t.output<float>({2, 1, 2}, {static_cast<float>(-6 / r5 + 1), static_cast<float>(-2 / r5 + 1),
                              static_cast<float>(2 / r5 + 1), static_cast<float>(6 / r5 + 1)});
  // running = input * 0.9 + batch * 0.1 (default momentum).
  t.output<float>({1}, {0.4f});
  t.output<float>({1}, {1.4f});
  t.run();
  OpTester m("BatchNormalization", 14);
  m.attr("training_mode", int64_t{1}).attr("momentum", 0.5f).attr("epsilon", 0.0f);
  m.input<double>({2, 2}, {1, 10, 3, 20});
  m.input<double>({2}, {1, 1}).input<double>({2}, {0, 0}).input<double>({2}, {0, 0}).input<double>({2}, {1, 1});
  m.output<double>({2, 2}, {-1, -1, 1, 1});
  m.omitted_output().omitted_output();
  m.run();
}

// Planes split across threads are computed as on one thread: bit-identical outputs.
TEST(BatchNormalization, ThreadsGiveBitIdenticalOutputs) {
  std::vector<float> x(2 * 8 * 64 * 64), scale(8), bias(8), mean(8), var(8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.11f * static_cast<float>(i));
  for (size_t c = 0; c < 8; ++c) {
    scale[c] = 0.5f + 0.1f * static_cast<float>(c);
    bias[c] = -0.3f * static_cast<float>(c);
    mean[c] = 0.01f * static_cast<float>(c);
    var[c] = 1.0f + 0.2f * static_cast<float>(c);
  }
  std::vector<Tensor> runs[2];
  for (int k = 0; k < 2; ++k) {
    OpTester t("BatchNormalization", 15);
    t.input<float>({2, 8, 64, 64}, x).input<float>({8}, scale).input<float>({8}, bias);
    t.input<float>({8}, mean).input<float>({8}, var).unchecked_output().threads(k == 0 ? 1 : 4);
    runs[k] = t.run();
  }
  ASSERT_EQ(runs[0].size(), 1u);
  ASSERT_EQ(runs[1].size(), 1u);
  EXPECT_EQ(std::memcmp(runs[0][0].data<float>(), runs[1][0].data<float>(), x.size() * sizeof(float)), 0);
}

// torch 1.13 writes momentum on inference nodes (opset 15+), where the spec leaves it unused: the
// output is the plain inference one.
TEST(BatchNormalization, MomentumIsUnusedInInference) {
  OpTester t("BatchNormalization", 15);
  t.attr("momentum", 0.1f).attr("epsilon", 0.0f);
  t.input<float>({1, 2, 2}, {1, 3, 5, 7});
  t.input<float>({2}, {2, 1}).input<float>({2}, {1, 0}).input<float>({2}, {1, 5}).input<float>({2}, {4, 1});
  t.output<float>({1, 2, 2}, {1, 3, 0, 2});
  t.run();
}

TEST(BatchNormalization, TrainingModeNeedsABatch) {
  OpTester t("BatchNormalization", 14);
  t.attr("training_mode", int64_t{1});
  t.input<float>({0, 1, 1}, {});
  t.input<float>({1}, {1}).input<float>({1}, {0}).input<float>({1}, {1}).input<float>({1}, {4});
  t.unchecked_output();
  t.expect_failure(StatusCode::kShapeMismatch, "training_mode=1 needs a non-empty batch");
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

// ---- InstanceNormalization ---------------------------------------------------------------------

TEST(InstanceNormalization, PerImageAndChannel) {
  // Plane (0, 0) = 1, 2, 3, 6 (mean 3, var 3.5); plane (0, 1) = 2, 2, 2, 2 (var 0).
  OpTester t("InstanceNormalization", 6);
  t.attr("epsilon", 0.5f);
  t.input<float>({1, 2, 2, 2}, {1, 2, 3, 6, 2, 2, 2, 2});
  t.input<float>({2}, {2, 1}).input<float>({2}, {0, 5});
  const double s = 2.0 / std::sqrt(4.0);
  t.output<float>({1, 2, 2, 2},
                  {static_cast<float>(-2 * s), static_cast<float>(-1 * s), 0, static_cast<float>(3 * s), 5, 5, 5, 5});
  t.run();
}

TEST(InstanceNormalization, AgainstOracleAndErrors) {
  const int64_t n = 2, c = 3, inner = 10;
  const std::vector<float> x = random_floats(n * c * inner, 31, -3, 3);
  const std::vector<float> scale = random_floats(c, 32), bias = random_floats(c, 33);
  std::vector<float> y(x.size());
  for (int64_t p = 0; p < n * c; ++p) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x[p * inner + i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i) var += (x[p * inner + i] - mean) * (x[p * inner + i] - mean);
    var /= inner;
    for (int64_t i = 0; i < inner; ++i) {
      y[p * inner + i] =
          static_cast<float>((x[p * inner + i] - mean) / std::sqrt(var + 1e-5) * scale[p % c] + bias[p % c]);
    }
  }
  for (int64_t opset : {1, 6}) {
    OpTester t("InstanceNormalization", opset);
    t.input<float>({n, c, 2, 5}, x).input<float>({c}, scale).input<float>({c}, bias);
    t.output<float>({n, c, 2, 5}, y);
    t.run();
  }
  OpTester e("InstanceNormalization", 6);
  e.input<float>({1, 2, 2}, {1, 2, 3, 4}).input<float>({3}, {1, 1, 1}).input<float>({2}, {0, 0});
  e.expect_failure(StatusCode::kShapeMismatch, "scale must have shape (2,), got (3,)");
}

// ---- LayerNormalization ------------------------------------------------------------------------

TEST(LayerNormalization, AxisScaleBiasAndStatistics) {
  // Rows (axis -1) of (2, 3): [1, 2, 3] (mean 2, var 2/3) and [2, 2, 8] (mean 4, var 8).
  const double eps = 1e-5;
  const double i0 = 1 / std::sqrt(2.0 / 3 + eps), i1 = 1 / std::sqrt(8 + eps);
  OpTester t("LayerNormalization", 17);
  t.input<float>({2, 3}, {1, 2, 3, 2, 2, 8}).input<float>({3}, {1, 2, 3}).input<float>({3}, {0, 0, 1});
  t.output<float>({2, 3}, {static_cast<float>(-i0), 0, static_cast<float>(3 * i0 + 1), static_cast<float>(-2 * i1),
                           static_cast<float>(-4 * i1), static_cast<float>(12 * i1 + 1)});
  t.output<float>({2, 1}, {2, 4});
  t.output<float>({2, 1}, {static_cast<float>(i0), static_cast<float>(i1)});
  t.run();
}

TEST(LayerNormalization, LeadingAxisBroadcastScaleAndNoBias) {
  // axis 0 normalizes the whole tensor; a scalar-like Scale of shape (1,) broadcasts.
  OpTester t("LayerNormalization", 17);
  t.attr("axis", int64_t{0}).attr("epsilon", 0.0f);
  t.input<double>({2, 2}, {1, 3, 5, 7}).input<double>({1}, {2});
  const double inv = 1 / std::sqrt(5.0);
  t.output<double>({2, 2}, {-6 * inv, -2 * inv, 2 * inv, 6 * inv});
  t.omitted_output();
  t.output<float>({1, 1}, {static_cast<float>(inv)});
  t.run();
}

TEST(LayerNormalization, Errors) {
  OpTester s("LayerNormalization", 17);
  s.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2}, {1, 1});
  s.expect_failure(StatusCode::kShapeMismatch, "Scale of shape (2,) does not broadcast to the normalized shape (3,)");
  OpTester a("LayerNormalization", 17);
  a.attr("axis", int64_t{2});
  a.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {1, 1, 1});
  a.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester st("LayerNormalization", 17);
  st.attr("stash_type", int64_t{11});
  st.input<float>({3}, {1, 2, 3}).input<float>({3}, {1, 1, 1});
  st.expect_failure(StatusCode::kUnsupportedAttr, "stash_type 11 is not supported");
}

// ---- MeanVarianceNormalization -----------------------------------------------------------------

TEST(MeanVarianceNormalization, DefaultAxesAndCustomAxes) {
  // Default axes (0, 2, 3): per channel over N, H, W. Channel 0 = 1, 3, 5, 7 (mean 4, std sqrt 5).
  OpTester t("MeanVarianceNormalization", 13);
  t.input<float>({2, 2, 1, 2}, {1, 3, 0, 0, 5, 7, 0, 0});
  const double s = std::sqrt(5.0) + 1e-9;
  t.output<float>({2, 2, 1, 2}, {static_cast<float>(-3 / s), static_cast<float>(-1 / s), 0, 0,
                                 static_cast<float>(1 / s), static_cast<float>(3 / s), 0, 0});
  t.run();
  OpTester a("MeanVarianceNormalization", 9);
  a.attr("axes", Shape{1});
  a.input<double>({2, 2}, {1, 3, 10, 10});
  a.output<double>({2, 2}, {-1 / (1 + 1e-9), 1 / (1 + 1e-9), 0, 0});
  a.run();
  OpTester e("MeanVarianceNormalization", 13);
  e.input<float>({2, 2}, {1, 2, 3, 4});
  e.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
}

// ---- LpNormalization ---------------------------------------------------------------------------

TEST(LpNormalization, L1AndL2AlongAnAxis) {
  OpTester l2("LpNormalization", 1);
  l2.input<float>({2, 2}, {3, 4, 0, 0});
  l2.output<float>({2, 2}, {0.6f, 0.8f, 0, 0});  // a zero row stays zero
  l2.run();
  OpTester l1("LpNormalization", 1);
  l1.attr("p", int64_t{1}).attr("axis", int64_t{0});
  l1.input<double>({2, 2}, {1, -2, 3, 2});
  l1.output<double>({2, 2}, {0.25, -0.5, 0.75, 0.5});
  l1.run();
  OpTester p("LpNormalization", 1);
  p.attr("p", int64_t{3});
  p.input<float>({2}, {1, 2});
  p.expect_failure(StatusCode::kInvalidModel, "p must be 1 or 2, got 3");
}

// ---- LRN ---------------------------------------------------------------------------------------

TEST(LRN, AgainstOracle) {
  const int64_t n = 1, c = 5, inner = 3;
  const std::vector<float> x = random_floats(n * c * inner, 41, -2, 2);
  const double alpha = 2e-2, beta = 0.6, bias = 1.5;
  for (int64_t size : {1, 2, 3, 4}) {
    std::vector<float> y(x.size());
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = ch - (size - 1) / 2; k <= ch + size / 2; ++k) {
          if (k >= 0 && k < c) sq += double(x[k * inner + i]) * x[k * inner + i];
        }
        y[ch * inner + i] = static_cast<float>(x[ch * inner + i] / std::pow(bias + alpha / size * sq, beta));
      }
    OpTester t("LRN", 13);
    t.attr("size", size).attr("alpha", static_cast<float>(alpha)).attr("beta", static_cast<float>(beta));
    t.attr("bias", static_cast<float>(bias));
    t.input<float>({n, c, 1, inner}, x);
    t.output<float>({n, c, 1, inner}, y);
    t.run();
  }
  OpTester e("LRN", 1);
  e.input<float>({1, 1, 1}, {1});
  e.expect_failure(StatusCode::kInvalidModel, "attribute size is required");
}

}  // namespace
}  // namespace vn::ops::testing
