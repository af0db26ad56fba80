// SPDX-License-Identifier: Apache-2.0
// ReduceSum, ReduceMean, ReduceMax, ReduceMin over a set of axes (the `axes` attribute; for
// ReduceSum-13 an optional input with noop_with_empty_axes). No axes means all axes.
//
// Sums of float32 accumulate in double so that the reference is not limited by summation order;
// integer sums wrap modulo 2^n. Max and Min propagate NaN. An empty reduction yields 0 (Sum), NaN
// (float Mean) and ∓inf or the integer limits (Max, Min), as ONNX opset 18 specifies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin };

template <ReduceKind kKind, typename T>
using AccType = std::conditional_t<kKind == ReduceKind::kMax || kKind == ReduceKind::kMin, T,
                                   std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>>;

template <ReduceKind kKind, typename T>
AccType<kKind, T> reduce_identity() {
  using A = AccType<kKind, T>;
  if constexpr (kKind == ReduceKind::kMax) {
    return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  } else if constexpr (kKind == ReduceKind::kMin) {
    return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  } else {
    return A(0);
  }
}

template <ReduceKind kKind, typename T>
void reduce_step(AccType<kKind, T>& acc, T v) {
  if constexpr (kKind == ReduceKind::kMax || kKind == ReduceKind::kMin) {
    bool take = kKind == ReduceKind::kMax ? v > acc : v < acc;
    if constexpr (std::is_floating_point_v<T>) take = take || std::isnan(v);
    if (take) acc = v;
  } else if constexpr (std::is_floating_point_v<T>) {
    acc += static_cast<double>(v);
  } else {
    acc += static_cast<uint64_t>(v);
  }
}

template <ReduceKind kKind>
Status reduce_with(KernelContext& ctx, std::optional<std::vector<int64_t>> axes_opt, bool noop_with_empty_axes) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (!axes_opt || axes_opt->empty()) {
    if (noop_with_empty_axes) {
      ctx.set_output(0, x);
      return Status::OK();
    }
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  } else {
    VN_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, *axes_opt, rank));
  }
  Shape kept = x.shape();
  Shape out_shape;
  int64_t count = 1;
  for (int64_t a : axes) {
    count *= x.dim(a);
    kept[static_cast<size_t>(a)] = 1;
  }
  for (int64_t a = 0; a < rank; ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : x.dim(a));
  }
  return dispatch_types(NumericTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    using A = AccType<kKind, T>;
    if constexpr (kKind == ReduceKind::kMean && !std::is_floating_point_v<T>) {
      if (count == 0) return ctx.fail(StatusCode::kNumericFailure, "the mean of an empty set has no integer value");
    }
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    std::vector<A> acc(static_cast<size_t>(y->numel()), reduce_identity<kKind, T>());
    const Shape strides[] = {contiguous_strides(x.shape()), broadcast_strides(kept, x.shape())};
    const StridedLoop loop(x.shape(), strides);
    const T* px = x.data<T>();
    const int64_t n = loop.row_size();
    const int64_t sa = loop.inner_stride(1);
    loop.for_each_row([&](int64_t, const int64_t* off) {
      const T* src = px + off[0];
      A* dst = acc.data() + off[1];
      if (sa == 0) {
        A r = *dst;
        for (int64_t i = 0; i < n; ++i) reduce_step<kKind, T>(r, src[i]);
        *dst = r;
      } else {
        for (int64_t i = 0; i < n; ++i) reduce_step<kKind, T>(dst[i], src[i]);
      }
    });
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < acc.size(); ++i) {
      if constexpr (kKind == ReduceKind::kMean) {
        if constexpr (std::is_floating_point_v<T>) {
          py[i] = static_cast<T>(acc[i] / static_cast<double>(count));
        } else if constexpr (std::is_signed_v<T>) {
          py[i] = static_cast<T>(static_cast<int64_t>(acc[i]) / count);
        } else {
          py[i] = static_cast<T>(acc[i] / static_cast<uint64_t>(count));
        }
      } else {
        py[i] = static_cast<T>(acc[i]);
      }
    }
    return Status::OK();
  });
}

// Opsets 1-13 (all but ReduceSum-13): axes is an attribute.
template <ReduceKind kKind>
Status reduce_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes");
  return reduce_with<kKind>(ctx, std::move(axes), false);
}

// ReduceSum-13: axes is an optional input; noop_with_empty_axes makes an empty list the identity.
Status reduce_sum_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto axes, optional_input_int64s(ctx, 1, "axes"));
  return reduce_with<ReduceKind::kSum>(ctx, std::move(axes), ctx.attr_int("noop_with_empty_axes", 0) != 0);
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11}) registry.add("ReduceSum", v, reduce_1<ReduceKind::kSum>);
  registry.add("ReduceSum", 13, reduce_sum_13);
  for (int64_t v : {1, 11, 13}) registry.add("ReduceMean", v, reduce_1<ReduceKind::kMean>);
  for (int64_t v : {1, 11, 12, 13}) {
    registry.add("ReduceMax", v, reduce_1<ReduceKind::kMax>);
    registry.add("ReduceMin", v, reduce_1<ReduceKind::kMin>);
  }
}

}  // namespace vn::ops
