// SPDX-License-Identifier: Apache-2.0
#include "views/report/tensor_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <Eigen/Core>

namespace vn::views {
namespace {

std::string g5(double v) { return fmt::format("{:.5g}", v); }

std::string coords(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx = unravel_index(flat, shape);
  std::string s = "(";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  if (idx.size() == 1) s += ",";
  return s + ")";
}

std::string element_string(const Tensor& t, int64_t i) {
  return dispatch_dtype(t.dtype(), [&]<typename T>() -> std::string {
    const T& v = t.data<T>()[i];
    if constexpr (std::is_same_v<T, std::string>) {
      return "'" + v + "'";
    } else if constexpr (std::is_same_v<T, bool>) {
      return v ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
      return std::to_string(v);
    } else {
      return fmt::format("{:.8g}", static_cast<double>(v));
    }
  });
}

}  // namespace

std::string format_tensor_summary(const std::string& name, const Tensor& tensor) {
  std::string s = fmt::format("{} [dtype={}, shape={}]", name, dtype_name(tensor.dtype()), shape_to_string(tensor.shape()));
  Result<TensorStats> r = compute_stats(tensor);
  if (!r.ok()) return s;
  const TensorStats& st = *r;
  s += fmt::format(" | Stats: mean={}, std-dev={}, var={}, median={}, min={} at {}, max={} at {}, avg-magnitude={}",
                   g5(st.mean), g5(st.std_dev), g5(st.var), g5(st.median), g5(st.min),
                   coords(std::max<int64_t>(st.argmin, 0), tensor.shape()), g5(st.max),
                   coords(std::max<int64_t>(st.argmax, 0), tensor.shape()), g5(st.avg_magnitude));
  if (tensor.dtype() != DType::kBool) s += fmt::format(", p90={}, p95={}, p99={}", g5(st.p90), g5(st.p95), g5(st.p99));
  if (st.nan_count) s += fmt::format(", NaN={}", st.nan_count);
  if (st.pos_inf_count) s += fmt::format(", +Inf={}", st.pos_inf_count);
  if (st.neg_inf_count) s += fmt::format(", -Inf={}", st.neg_inf_count);
  return s;
}

std::string format_histogram(const Histogram& h, const std::string& indent) {
  const size_t bins = h.counts.size();
  std::vector<std::string> ranges;
  size_t width = 9;
  const double step = bins ? (h.hi - h.lo) / static_cast<double>(bins) : 0.0;
  for (size_t b = 0; b < bins; ++b) {
    const double lo = h.lo + step * static_cast<double>(b);
    const double hi = b + 1 == bins ? h.hi : lo + step;
    ranges.push_back(fmt::format("({:.3g}, {:.3g})", lo, hi));
    width = std::max(width, ranges.back().size());
  }
  const int64_t peak = bins ? *std::max_element(h.counts.begin(), h.counts.end()) : 0;
  std::string out = fmt::format("{}{:<{}} | {:>10} | Visualization\n", indent, "Bin Range", width, "Num Elems");
  for (size_t b = 0; b < bins; ++b) {
    const auto bar = peak ? static_cast<size_t>((h.counts[b] * 40 + peak / 2) / peak) : 0;
    out += fmt::format("{}{:<{}} | {:>10} | {}\n", indent, ranges[b], width, h.counts[b], std::string(bar, '#'));
  }
  return out;
}

std::string format_values(const Tensor& tensor, int64_t max_items) {
  const Shape& shape = tensor.shape();
  if (shape.empty()) return element_string(tensor, 0);
  const size_t rank = shape.size();
  std::string out(rank, '[');
  size_t open = rank;
  // Walks the elements in C order, closing and reopening brackets where an index rolls over.
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (i == max_items) {
      out += ", ...";
      break;
    }
    if (idx.back() > 0) out += ", ";
    out += element_string(tensor, i);
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
      out += ']';
      --open;
    }
    if (open < rank && i + 1 < tensor.numel() && i + 1 < max_items) {
      out += ",\n" + std::string(open, ' ') + std::string(rank - open, '[');
      open = rank;
    }
  }
  out.append(open, ']');
  return out;
}

}  // namespace vn::views
