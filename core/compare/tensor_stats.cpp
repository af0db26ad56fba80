// SPDX-License-Identifier: Apache-2.0
#include "core/compare/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/compare/quantiles.h"

namespace vn {

Result<TensorStats> compute_stats(const Tensor& tensor) {
  VN_ASSIGN_OR_RETURN(std::vector<double> v, tensor_to_doubles(tensor));
  TensorStats s;
  s.count = static_cast<int64_t>(v.size());
  std::vector<double> finite;
  finite.reserve(v.size());
  double sum = 0, abs_sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    if (std::isnan(x)) {
      ++s.nan_count;
      continue;
    }
    if (std::isinf(x)) {
      ++(x > 0 ? s.pos_inf_count : s.neg_inf_count);
      continue;
    }
    if (finite.empty() || x < s.min) {
      s.min = x;
      s.argmin = static_cast<int64_t>(i);
    }
    if (finite.empty() || x > s.max) {
      s.max = x;
      s.argmax = static_cast<int64_t>(i);
    }
    finite.push_back(x);
    sum += x;
    abs_sum += std::abs(x);
  }
  s.finite_count = static_cast<int64_t>(finite.size());
  if (finite.empty()) return s;
  const auto n = static_cast<double>(finite.size());
  s.mean = sum / n;
  s.avg_magnitude = abs_sum / n;
  double sq = 0;
  for (double x : finite) sq += (x - s.mean) * (x - s.mean);
  s.var = sq / n;
  s.std_dev = std::sqrt(s.var);
  // Selected, not sorted: an output summary per iteration must not sort every value.
  const std::vector<double> p = quantiles_in_place(finite, {0.5, 0.90, 0.95, 0.99});
  s.median = p[0], s.p90 = p[1], s.p95 = p[2], s.p99 = p[3];
  return s;
}

Result<Histogram> compute_histogram(const Tensor& tensor, int bins) {
  if (bins < 1) return make_error(StatusCode::kInvalidArgument, "a histogram needs at least one bin");
  VN_ASSIGN_OR_RETURN(std::vector<double> v, tensor_to_doubles(tensor));
  Histogram h;
  h.counts.assign(static_cast<size_t>(bins), 0);
  bool any = false;
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    h.lo = any ? std::min(h.lo, x) : x;
    h.hi = any ? std::max(h.hi, x) : x;
    any = true;
  }
  if (!any) return h;
  if (h.lo == h.hi) {
    // numpy widens a degenerate range to [x - 0.5, x + 0.5].
    h.lo -= 0.5;
    h.hi += 0.5;
  }
  const double width = (h.hi - h.lo) / bins;
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    auto b = static_cast<int64_t>((x - h.lo) / width);
    b = std::clamp<int64_t>(b, 0, bins - 1);
    ++h.counts[static_cast<size_t>(b)];
  }
  return h;
}

std::vector<int64_t> unravel_index(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return idx;
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

}  // namespace vn
