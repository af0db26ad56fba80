// SPDX-License-Identifier: Apache-2.0
// Unique: the distinct elements of the flattened input, or the distinct slices along `axis`, in
// ascending (lexicographic for slices) or first-occurrence order, with the optional outputs
// indices (first occurrence), inverse_indices and counts, as numpy.unique returns them. NaNs
// compare equal to each other and sort last.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

template <typename T>
bool is_nan(const T& v) {
  if constexpr (std::is_integral_v<T> || std::is_same_v<T, std::string>) {
    return false;
  } else {
    return v != v;
  }
}

/// Three-way comparison with NaN equal to NaN and above every number.
template <typename T>
int compare(const T& a, const T& b) {
  const bool na = is_nan(a), nb = is_nan(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

Status unique(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  const bool by_axis = ctx.has_attr("axis");
  int64_t axis = 0;
  if (by_axis) {
    if (x.rank() == 0) return ctx.fail(StatusCode::kShapeMismatch, "axis is set but the input is a scalar");
    VN_ASSIGN_OR_RETURN(axis, normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank()));
  }
  // Items are the elements of the flattened input, or the slices x[..., i, ...] along the axis.
  const Shape shape = by_axis ? x.shape() : Shape{x.numel()};
  const int64_t n = shape[static_cast<size_t>(axis)];
  const int64_t outer = shape_product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(shape, static_cast<size_t>(axis) + 1, shape.size());
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                         uint16_t, uint32_t, uint64_t, bool, std::string>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    const T* px = x.numel() > 0 ? x.data<T>() : nullptr;
    // Lexicographic comparison of items a and b in the row-major order of the slice.
    auto cmp = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int c = compare(px[(o * n + a) * inner + i], px[(o * n + b) * inner + i]);
          if (c != 0) return c;
        }
      }
      return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
    // Groups of equal items: first_index[g] is the group's first occurrence (stable sort).
    std::vector<int64_t> first_index, counts;
    std::vector<int64_t> group_of(static_cast<size_t>(n));
    for (size_t j = 0; j < order.size(); ++j) {
      if (j == 0 || cmp(order[j - 1], order[j]) != 0) {
        first_index.push_back(order[j]);
        counts.push_back(0);
      }
      group_of[static_cast<size_t>(order[j])] = static_cast<int64_t>(first_index.size()) - 1;
      ++counts.back();
    }
    const auto groups = static_cast<int64_t>(first_index.size());
    // rank_of[g]: the group's position in the output (sorted order, or order of first occurrence).
    std::vector<int64_t> rank_of(static_cast<size_t>(groups));
    std::iota(rank_of.begin(), rank_of.end(), int64_t{0});
    if (!sorted) {
      std::vector<int64_t> by_first(static_cast<size_t>(groups));
      std::iota(by_first.begin(), by_first.end(), int64_t{0});
      std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
        return first_index[static_cast<size_t>(a)] < first_index[static_cast<size_t>(b)];
      });
      for (int64_t r = 0; r < groups; ++r) rank_of[static_cast<size_t>(by_first[static_cast<size_t>(r)])] = r;
    }
    std::vector<int64_t> out_first(static_cast<size_t>(groups)), out_counts(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      out_first[static_cast<size_t>(rank_of[static_cast<size_t>(g)])] = first_index[static_cast<size_t>(g)];
      out_counts[static_cast<size_t>(rank_of[static_cast<size_t>(g)])] = counts[static_cast<size_t>(g)];
    }
    Shape y_shape = shape;
    y_shape[static_cast<size_t>(axis)] = groups;
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), y_shape));
    if (y->numel() > 0) {
      T* py = y->mutable_data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t r = 0; r < groups; ++r) {
          std::copy_n(px + (o * n + out_first[static_cast<size_t>(r)]) * inner, inner, py + (o * groups + r) * inner);
        }
      }
    }
    auto write = [&](size_t slot, const std::vector<int64_t>& v) -> Status {
      if (!output_requested(ctx, slot)) return Status::OK();
      VN_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(slot, DType::kInt64, {static_cast<int64_t>(v.size())}));
      if (!v.empty()) std::copy(v.begin(), v.end(), t->mutable_data<int64_t>());
      return Status::OK();
    };
    std::vector<int64_t> inverse(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      inverse[static_cast<size_t>(i)] = rank_of[static_cast<size_t>(group_of[static_cast<size_t>(i)])];
    }
    VN_RETURN_IF_ERROR(write(1, out_first));
    VN_RETURN_IF_ERROR(write(2, inverse));
    return write(3, out_counts);
  });
}

}  // namespace

// Unique-28 only added bfloat16.
void register_unique_ops(OpRegistry& registry) {
  for (int64_t v : {11, 28}) registry.add("Unique", v, unique);
}

}  // namespace vn::ops
