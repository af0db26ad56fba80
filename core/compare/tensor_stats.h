// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/status.h"
#include "core/ir/tensor.h"

namespace vn {

/// Summary statistics of one tensor, computed in double over its finite values. NaN and ±inf
/// are counted, not averaged in; with no finite value every statistic is 0.
struct TensorStats {
  int64_t count = 0;          ///< all elements
  int64_t finite_count = 0;
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  double mean = 0, std_dev = 0, var = 0, median = 0;
  double min = 0, max = 0;
  int64_t argmin = -1, argmax = -1;  ///< flat index of the first min / max, -1 when empty
  double avg_magnitude = 0;          ///< mean of |x|
  double p90 = 0, p95 = 0, p99 = 0;  ///< percentiles with numpy's linear interpolation
};

/// Statistics of any numeric or bool tensor; fails for strings.
Result<TensorStats> compute_stats(const Tensor& tensor);

/// A histogram with equal-width bins over [lo, hi] (numpy.histogram: the last bin is closed).
struct Histogram {
  double lo = 0, hi = 0;
  std::vector<int64_t> counts;
};

/// Histogram of the finite values of `tensor` over their own range, `bins` bins.
Result<Histogram> compute_histogram(const Tensor& tensor, int bins = 10);

/// Converts a flat C-order index to coordinates of `shape`.
std::vector<int64_t> unravel_index(int64_t flat, const Shape& shape);

}  // namespace vn
