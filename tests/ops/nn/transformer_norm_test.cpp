// SPDX-License-Identifier: Apache-2.0
// RMSNormalization-23, GroupNormalization-18/21 and RotaryEmbedding-23 against hand-computed
// values, plain oracles, and numpy's float16 steps of ONNX's function bodies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<Eigen::half> halves(const std::vector<float>& v) {
  std::vector<Eigen::half> out;
  for (float x : v) out.emplace_back(x);
  return out;
}

// ***** RMSNormalization *****

TEST(RMSNormalization, HandComputed) {
  // rms of [3, 4] is sqrt(12.5); of [0, 0] it is sqrt(epsilon).
  OpTester t("RMSNormalization", 23);
  t.attr("epsilon", 0.0f);
  t.input<float>({2, 2}, {3, 4, 1, 1}).input<float>({2}, {1, 2});
  const float r = static_cast<float>(std::sqrt(12.5));
  t.output<float>({2, 2}, {3 / r, 8 / r, 1, 2});
  t.run();
}

TEST(RMSNormalization, AxisOverTrailingDimsWithBroadcastScaleAgainstOracle) {
  const std::vector<float> x = random_floats(2 * 3 * 4, 41, -3, 3);
  const std::vector<float> w = random_floats(4, 42);
  for (int64_t axis : {1, -2}) {
    std::vector<float> y(x.size());
    for (int64_t n = 0; n < 2; ++n) {
      double sq = 0;
      for (int64_t i = 0; i < 12; ++i) sq += double(x[n * 12 + i]) * x[n * 12 + i];
      const double rms = std::sqrt(sq / 12 + 0.1f);
      for (int64_t i = 0; i < 12; ++i) y[n * 12 + i] = static_cast<float>(x[n * 12 + i] / rms * w[i % 4]);
    }
    OpTester t("RMSNormalization", 23);
    t.attr("axis", axis).attr("epsilon", 0.1f);
    t.input<float>({2, 3, 4}, x).input<float>({4}, w);
    t.output<float>({2, 3, 4}, y);
    t.run();
  }
}

TEST(RMSNormalization, Float16NormalizesInFloat32ThenScalesInFloat16) {
  OpTester t("RMSNormalization", 23);
  t.input<Eigen::half>({2, 4}, halves({-2.486328125, -1.5791015625, 1.8076171875, 0.492919921875, -2.435546875,
                                       -0.401123046875, -0.125732421875, -2.041015625}));
  t.input<Eigen::half>({4}, halves({0.9384765625, -1.544921875, -0.43505859375, 0.06695556640625}));
  // Element 2 rounds twice in the function body (-0.450439453125), once from double (-0.45068359375).
  t.output<Eigen::half>({2, 4}, halves({-1.3369140625, 1.3974609375, -0.450439453125, 0.0189056396484375,
                                        -1.42578125, 0.38671875, 0.03411865234375, -0.08526611328125}));
  t.run();
}

TEST(RMSNormalization, RefusesANonFloatStashType) {
  OpTester t("RMSNormalization", 23);
  t.attr("stash_type", int64_t{7});
  t.input<float>({1, 2}, {1, 2}).input<float>({2}, {1, 1});
  t.expect_failure(StatusCode::kUnsupportedAttr, "stash_type 7 is not supported");
}

// ***** GroupNormalization *****

/// Groups of `c / g` channels; scale and bias per channel (`per_channel`) or per group.
std::vector<float> group_norm_oracle(const std::vector<float>& x, int64_t n, int64_t c, int64_t inner, int64_t g,
                                     const std::vector<float>& scale, const std::vector<float>& bias, bool per_channel,
                                     double eps) {
  std::vector<float> y(x.size());
  const int64_t len = c / g * inner;
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t ig = 0; ig < g; ++ig) {
      const int64_t base = (in * g + ig) * len;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += x[base + i];
      mean /= len;
      for (int64_t i = 0; i < len; ++i) var += (x[base + i] - mean) * (x[base + i] - mean);
      var /= len;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t p = per_channel ? ig * (c / g) + i / inner : ig;
        y[base + i] = static_cast<float>((x[base + i] - mean) / std::sqrt(var + eps) * scale[p] + bias[p]);
      }
    }
  }
  return y;
}

TEST(GroupNormalization, Version21ScalesPerChannel) {
  const std::vector<float> x = random_floats(2 * 6 * 3, 51, -2, 2);
  const std::vector<float> scale = random_floats(6, 52), bias = random_floats(6, 53);
  OpTester t("GroupNormalization", 21);
  t.attr("num_groups", int64_t{3}).attr("epsilon", 1e-3f);
  t.input<float>({2, 6, 3}, x).input<float>({6}, scale).input<float>({6}, bias);
  t.output<float>({2, 6, 3}, group_norm_oracle(x, 2, 6, 3, 3, scale, bias, true, 1e-3f));
  t.run();
}

TEST(GroupNormalization, Version18ScalesPerGroup) {
  const std::vector<float> x = random_floats(2 * 4 * 2, 54, -2, 2);
  const std::vector<float> scale = {2, -1}, bias = {0.5f, 1};
  OpTester t("GroupNormalization", 18);
  t.attr("num_groups", int64_t{2});
  t.input<float>({2, 4, 2}, x).input<float>({2}, scale).input<float>({2}, bias);
  t.output<float>({2, 4, 2}, group_norm_oracle(x, 2, 4, 2, 2, scale, bias, false, 1e-5f));
  t.run();
  // Version 21 wants one value per channel: the per-group inputs are refused, not misread.
  OpTester v21("GroupNormalization", 21);
  v21.attr("num_groups", int64_t{2});
  v21.input<float>({2, 4, 2}, x).input<float>({2}, scale).input<float>({2}, bias);
  v21.expect_failure(StatusCode::kShapeMismatch, "scale must be a float32 tensor of shape (4,) (one per channel)");
}

TEST(GroupNormalization, RefusesGroupsThatDoNotDivideTheChannels) {
  OpTester t("GroupNormalization", 21);
  t.attr("num_groups", int64_t{3});
  t.input<float>({1, 4, 1}, {1, 2, 3, 4}).input<float>({4}, {1, 1, 1, 1}).input<float>({4}, {0, 0, 0, 0});
  t.expect_failure(StatusCode::kInvalidModel, "num_groups 3 must be positive and divide the 4 channels");
}

// ***** RotaryEmbedding *****

TEST(RotaryEmbedding, HandComputedHalvesAndInterleaved) {
  // One head of 4 features at position 1 (cos 0, sin 1: a quarter turn) and position 0 (identity).
  const std::vector<float> cos_cache = {1, 1, 0, 0}, sin_cache = {0, 0, 1, 1};
  OpTester t("RotaryEmbedding", 23);
  t.input<float>({1, 1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});
  t.input<float>({2, 2}, cos_cache).input<float>({2, 2}, sin_cache).input<int64_t>({1, 2}, {1, 0});
  // Halves x1 = [1, 2], x2 = [3, 4]: real = -x2, imag = x1.
  t.output<float>({1, 1, 2, 4}, {-3, -4, 1, 2, 1, 2, 3, 4});
  t.run();
  OpTester i("RotaryEmbedding", 23);
  i.attr("interleaved", int64_t{1});
  i.input<float>({1, 1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});
  i.input<float>({2, 2}, cos_cache).input<float>({2, 2}, sin_cache).input<int64_t>({1, 2}, {1, 0});
  // Pairs (1, 2) and (3, 4) each turn a quarter: (-2, 1), (-4, 3).
  i.output<float>({1, 1, 2, 4}, {-2, 1, -4, 3, 1, 2, 3, 4});
  i.run();
}

TEST(RotaryEmbedding, ThreeDInputPartialRotationWithoutPositionIds) {
  // (B=1, S=1, 2 heads x 4): rotary_embedding_dim 2 rotates features 0 and 1 of each head by the
  // caches' (1, 1, 1) angle; the others pass through.
  const double a = 0.3;
  OpTester t("RotaryEmbedding", 23);
  t.attr("num_heads", int64_t{2}).attr("rotary_embedding_dim", int64_t{2});
  t.input<float>({1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  t.input<float>({1, 1, 1}, {static_cast<float>(std::cos(a))}).input<float>({1, 1, 1}, {static_cast<float>(std::sin(a))});
  const float c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
  t.output<float>({1, 1, 8}, {c * 1 - s * 2, s * 1 + c * 2, 3, 4, c * 5 - s * 6, s * 5 + c * 6, 7, 8});
  t.run();
}

TEST(RotaryEmbedding, Float16RoundsEachProductAndSum) {
  OpTester t("RotaryEmbedding", 23);
  t.input<Eigen::half>({1, 1, 2, 4}, halves({-0.277587890625, 0.34716796875, 0.951171875, 1.8251953125, -0.86328125,
                                             0.59423828125, 0.78466796875, -0.8291015625}));
  t.input<Eigen::half>({3, 2}, halves({1.0, -0.9755859375, 0.62548828125, 0.58837890625, -0.89306640625, -0.18359375}));
  t.input<Eigen::half>({3, 2}, halves({0.0044708251953125, 0.2193603515625, 0.7802734375, 0.80859375,
                                       0.44970703125, 0.98291015625}));
  t.input<int64_t>({1, 2}, {1, 0});
  t.output<Eigen::half>({1, 1, 2, 4}, halves({-0.916015625, -1.271484375, 0.378173828125, 1.35546875,
                                              -0.86669921875, -0.397705078125, 0.78076171875, 0.939453125}));
  t.run();
}

TEST(RotaryEmbedding, RefusesOutOfRangePositionsAndOddRotaryDims) {
  {
    OpTester t("RotaryEmbedding", 23);
    t.input<float>({1, 1, 1, 2}, {1, 2}).input<float>({2, 1}, {1, 1}).input<float>({2, 1}, {0, 0});
    t.input<int64_t>({1, 1}, {2});
    t.expect_failure(StatusCode::kInvalidModel, "position id 2 is outside the caches' 2 positions");
  }
  {
    OpTester t("RotaryEmbedding", 23);
    t.attr("rotary_embedding_dim", int64_t{3});
    t.input<float>({1, 1, 1, 4}, {1, 2, 3, 4}).input<float>({2, 2}, {1, 1, 1, 1}).input<float>({2, 2}, {0, 0, 0, 0});
    t.input<int64_t>({1, 1}, {0});
    t.expect_failure(StatusCode::kInvalidModel, "rotary_embedding_dim 3 must be even");
  }
}

}  // namespace
}  // namespace vn::ops::testing
