// SPDX-License-Identifier: Apache-2.0
#include "core/compare/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace vn {
namespace {

TEST(TensorStats, MatchesNumpyDefinitions) {
  // numpy: mean 2.5, std 1.118034, median 2.5, percentile(90) 3.7 (linear interpolation).
  Tensor t = Tensor::from_vector<float>({2, 2}, {4, 1, 3, 2});
  Result<TensorStats> s = compute_stats(t);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->mean, 2.5);
  EXPECT_NEAR(s->std_dev, 1.118034, 1e-6);
  EXPECT_DOUBLE_EQ(s->median, 2.5);
  EXPECT_NEAR(s->p90, 3.7, 1e-12);
  EXPECT_EQ(s->argmin, 1);
  EXPECT_EQ(s->argmax, 0);
  EXPECT_EQ(unravel_index(s->argmin, t.shape()), (std::vector<int64_t>{0, 1}));
}

TEST(TensorStats, PercentilesAreThoseOfTheSortedValues) {
  // Selected rank by rank, not sorted: against the sorted definition on 10,007 values with many
  // repeats (every size of gap between ranks, adjacent ranks included) and on one value.
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> pick(-300, 300);
  std::vector<float> values(10007);
  for (float& v : values) v = static_cast<float>(pick(rng)) / 7.0f;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
  };
  Result<TensorStats> s = compute_stats(Tensor::from_vector<float>({10007}, values));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->median, at(0.5));
  EXPECT_EQ(s->p90, at(0.90));
  EXPECT_EQ(s->p95, at(0.95));
  EXPECT_EQ(s->p99, at(0.99));
  Result<TensorStats> one = compute_stats(Tensor::from_vector<float>({1}, {2.5f}));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->median, 2.5);
  EXPECT_EQ(one->p99, 2.5);
}

TEST(TensorStats, CountsNonFiniteValuesSeparately) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor t = Tensor::from_vector<float>({5}, {1, std::nanf(""), inf, -inf, 3});
  Result<TensorStats> s = compute_stats(t);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->nan_count, 1);
  EXPECT_EQ(s->pos_inf_count, 1);
  EXPECT_EQ(s->neg_inf_count, 1);
  EXPECT_EQ(s->finite_count, 2);
  EXPECT_DOUBLE_EQ(s->mean, 2.0);
}

TEST(TensorStats, HistogramFollowsNumpy) {
  // np.histogram([0, 1, 1, 2, 9, 10], bins=10) -> [1, 2, 1, 0, 0, 0, 0, 0, 0, 2]
  Result<Histogram> h = compute_histogram(Tensor::from_vector<int32_t>({6}, {0, 1, 1, 2, 9, 10}), 10);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->counts, (std::vector<int64_t>{1, 2, 1, 0, 0, 0, 0, 0, 0, 2}));
  Result<Histogram> flat = compute_histogram(Tensor::from_vector<float>({3}, {2, 2, 2}), 10);
  ASSERT_TRUE(flat.ok());
  EXPECT_DOUBLE_EQ(flat->lo, 1.5);
  EXPECT_EQ(flat->counts[5], 3);
  EXPECT_FALSE(compute_stats(Tensor(DType::kString, {1})).ok());
}

}  // namespace
}  // namespace vn
