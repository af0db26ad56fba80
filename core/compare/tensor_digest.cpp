// SPDX-License-Identifier: Apache-2.0
#include "core/compare/tensor_digest.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>

#include <Eigen/Core>

namespace vn {
namespace {

// Elements converted to double per step: two buffers of this size are all the pass holds.
constexpr int64_t kChunk = 4096;

void read_doubles(const Tensor& t, int64_t begin, int64_t n, double* out) {
  dispatch_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      const T* p = t.data<T>() + begin;
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(p[i]);
    }
  });
}

// The key errors are ranked by: a NaN error above every number.
double rank_key(double error) { return std::isnan(error) ? std::numeric_limits<double>::infinity() : error; }

// Keeps the larger of two cell values, NaN winning.
float worse(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return std::max(a, b);
}

}  // namespace

TensorDigest digest_tensors(const Tensor& test, const Tensor& ref, const DigestLimits& limits) {
  TensorDigest d;
  if (!test.defined() || !ref.defined()) return d;
  d.shape = test.shape();
  if (test.shape() != ref.shape() || test.dtype() == DType::kString || ref.dtype() == DType::kString ||
      test.numel() == 0) {
    return d;
  }
  const Shape& shape = test.shape();
  d.slice_cols = shape.empty() ? 1 : std::max<int64_t>(1, shape.back());
  d.slice_rows = shape.size() < 2 ? 1 : std::max<int64_t>(1, shape[shape.size() - 2]);
  const int64_t plane = d.slice_rows * d.slice_cols;
  const int64_t numel = test.numel();
  d.slice_count = numel / plane;
  const bool keep_maxima = static_cast<size_t>(d.slice_count) <= limits.slice_maxima;
  if (keep_maxima) d.slice_max.assign(static_cast<size_t>(d.slice_count), 0.0f);

  // The worst elements: a min-heap on (key, -index), so that among equal errors the first stay.
  using Entry = std::pair<double, int64_t>;
  const auto later_is_better = [](const Entry& a, const Entry& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later_is_better)> heap(later_is_better);
  std::array<double, kChunk> tv{}, rv{};
  for (int64_t begin = 0; begin < numel; begin += kChunk) {
    const int64_t n = std::min(kChunk, numel - begin);
    read_doubles(test, begin, n, tv.data());
    read_doubles(ref, begin, n, rv.data());
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::fabs(tv[static_cast<size_t>(i)] - rv[static_cast<size_t>(i)]);
      const int64_t k = begin + i;
      if (keep_maxima) {
        float& m = d.slice_max[static_cast<size_t>(k / plane)];
        m = worse(m, static_cast<float>(e));
      }
      if (limits.worst == 0) continue;
      const Entry entry{rank_key(e), k};
      if (heap.size() < limits.worst) {
        heap.push(entry);
      } else if (later_is_better(entry, heap.top())) {
        heap.pop();
        heap.push(entry);
      }
    }
  }
  std::vector<int64_t> worst_indices;
  while (!heap.empty()) {
    worst_indices.push_back(heap.top().second);
    heap.pop();
  }
  std::reverse(worst_indices.begin(), worst_indices.end());
  for (int64_t k : worst_indices) {
    double t = 0, r = 0;
    read_doubles(test, k, 1, &t);
    read_doubles(ref, k, 1, &r);
    d.worst.push_back({k, t, r, std::fabs(t - r)});
  }

  // The slices to map: the worst element's, then the worst by their maxima (or, without maxima,
  // those of the next worst elements).
  std::vector<int64_t> slices;
  const auto add_slice = [&](int64_t s) {
    if (slices.size() < limits.heatmaps && std::find(slices.begin(), slices.end(), s) == slices.end()) slices.push_back(s);
  };
  for (int64_t k : worst_indices) {
    add_slice(k / plane);
    if (keep_maxima) break;
  }
  if (keep_maxima) {
    std::vector<int64_t> order(static_cast<size_t>(d.slice_count));
    for (size_t s = 0; s < order.size(); ++s) order[s] = static_cast<int64_t>(s);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return rank_key(d.slice_max[static_cast<size_t>(a)]) > rank_key(d.slice_max[static_cast<size_t>(b)]);
    });
    for (int64_t s : order) add_slice(s);
  }
  const int64_t max_rows = std::max(1, limits.heatmap_rows), max_cols = std::max(1, limits.heatmap_cols);
  for (int64_t s : slices) {
    TensorDigest::Heatmap h;
    h.slice = s;
    h.block_rows = (d.slice_rows + max_rows - 1) / max_rows;
    h.block_cols = (d.slice_cols + max_cols - 1) / max_cols;
    h.rows = static_cast<int>((d.slice_rows + h.block_rows - 1) / h.block_rows);
    h.cols = static_cast<int>((d.slice_cols + h.block_cols - 1) / h.block_cols);
    h.values.assign(static_cast<size_t>(h.rows) * static_cast<size_t>(h.cols), 0.0f);
    for (int64_t begin = 0; begin < plane; begin += kChunk) {
      const int64_t n = std::min(kChunk, plane - begin);
      read_doubles(test, s * plane + begin, n, tv.data());
      read_doubles(ref, s * plane + begin, n, rv.data());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = (begin + i) / d.slice_cols, col = (begin + i) % d.slice_cols;
        const size_t cell = static_cast<size_t>((row / h.block_rows) * h.cols + col / h.block_cols);
        h.values[cell] = worse(h.values[cell], static_cast<float>(std::fabs(tv[static_cast<size_t>(i)] - rv[static_cast<size_t>(i)])));
      }
    }
    d.heatmaps.push_back(std::move(h));
  }
  return d;
}

}  // namespace vn
