// SPDX-License-Identifier: Apache-2.0
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum and ReduceLogSumExp over a set of axes (the `axes` attribute; from ReduceSum-13 and
// every Reduce*-18 on, an optional input with noop_with_empty_axes). No axes means all axes. Also
// ArgMax and ArgMin.
//
// Float reductions accumulate in double so that the reference is not limited by summation order
// (float16 and bfloat16 too, rounding the result once: ONNX's reference, numpy on arrays of the
// element type, rounds the partial sums along any axis but the contiguous last one, and bfloat16's
// after every addition; README, Known limits);
// integer sums and products wrap modulo 2^n, and integer L2/LogSum/LogSumExp are computed in
// double and converted back. Max and Min propagate NaN. An empty reduction yields the identity of
// the operation: 0 (Sum, L1, L2, SumSquare), 1 (Prod), -inf (LogSum, LogSumExp), NaN (float
// Mean) and ∓inf or the integer limits (Max, Min), as ONNX opset 18 specifies.
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

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

template <ReduceKind kKind>
constexpr bool kIsExtremum = kKind == ReduceKind::kMax || kKind == ReduceKind::kMin;

/// Whether integer inputs accumulate in double: the kinds whose result is not an integer ring op.
template <ReduceKind kKind>
constexpr bool kIntViaDouble =
    kKind == ReduceKind::kL2 || kKind == ReduceKind::kLogSum || kKind == ReduceKind::kLogSumExp;

/// Extrema keep the element type (bool as uint8_t, which std::vector stores as bytes).
template <ReduceKind kKind, typename T>
using AccType =
    std::conditional_t<kIsExtremum<kKind>, std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>,
                       std::conditional_t<kIsRealFloat<T> || kIntViaDouble<kKind>, double, uint64_t>>;

template <ReduceKind kKind, typename T>
AccType<kKind, T> reduce_identity() {
  using A = AccType<kKind, T>;
  if constexpr (kKind == ReduceKind::kMax) {
    if constexpr (kIsRealFloat<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();  // false for bool
  } else if constexpr (kKind == ReduceKind::kMin) {
    if constexpr (kIsRealFloat<T>) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();  // true for bool
  } else if constexpr (kKind == ReduceKind::kProd) {
    return A(1);
  } else {
    return A(0);
  }
}

/// Adds v to the accumulator. `shift` is the output's maximum for LogSumExp and unused otherwise.
template <ReduceKind kKind, typename T>
void reduce_step(AccType<kKind, T>& acc, T v, [[maybe_unused]] double shift) {
  using A = AccType<kKind, T>;
  if constexpr (kIsExtremum<kKind>) {
    bool take = kKind == ReduceKind::kMax ? v > acc : v < acc;
    if constexpr (kIsRealFloat<T>) take = take || Eigen::numext::isnan(v);
    if (take) acc = v;
  } else if constexpr (kKind == ReduceKind::kLogSumExp) {
    acc += std::exp(static_cast<double>(v) - shift);
  } else {
    A a;
    if constexpr (std::is_same_v<A, double>) {
      a = static_cast<double>(v);
    } else {
      a = static_cast<uint64_t>(v);  // sign-extends; wrapping arithmetic keeps the low bits exact
    }
    if constexpr (kKind == ReduceKind::kProd) {
      acc *= a;
    } else if constexpr (kKind == ReduceKind::kL1) {
      if constexpr (std::is_same_v<A, double>) {
        acc += std::abs(a);
      } else if constexpr (std::is_signed_v<T>) {
        acc += v < T(0) ? uint64_t(0) - a : a;
      } else {
        acc += a;
      }
    } else if constexpr (kKind == ReduceKind::kL2 || kKind == ReduceKind::kSumSquare) {
      acc += a * a;
    } else {
      acc += a;
    }
  }
}

/// The output value from an accumulator over `count` elements (`shift`: see reduce_step).
template <ReduceKind kKind, typename T>
T reduce_finish(AccType<kKind, T> acc, [[maybe_unused]] int64_t count, [[maybe_unused]] double shift) {
  if constexpr (kKind == ReduceKind::kMean) {
    if constexpr (kIsRealFloat<T>) {
      return static_cast<T>(acc / static_cast<double>(count));
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(static_cast<int64_t>(acc) / count);
    } else {
      return static_cast<T>(acc / static_cast<uint64_t>(count));
    }
  } else if constexpr (kKind == ReduceKind::kL2) {
    return saturate_cast<T>(std::sqrt(acc));
  } else if constexpr (kKind == ReduceKind::kLogSum) {
    return saturate_cast<T>(std::log(acc));
  } else if constexpr (kKind == ReduceKind::kLogSumExp) {
    // An infinite maximum is the result itself (+inf, or -inf when every term is -inf or the set
    // is empty); x - max would be inf - inf = NaN there.
    return saturate_cast<T>(std::isinf(shift) ? shift : shift + std::log(acc));
  } else {
    return static_cast<T>(acc);
  }
}

/// Reduced axes and shapes of one reduction.
struct ReducePlan {
  Shape kept;       // the input shape with reduced dims set to 1
  Shape out_shape;  // kept, with the reduced dims dropped unless keepdims
  int64_t count = 1;
};

/// Calls f(acc_offset, src, n, acc_stride) for each row of `x` (see StridedLoop), where the row's
/// n elements src[0..n) reduce into acc[acc_offset + i * acc_stride].
template <typename T, typename F>
void for_each_reduce_row(const Tensor& x, const Shape& kept, F&& f) {
  const Shape strides[] = {contiguous_strides(x.shape()), broadcast_strides(kept, x.shape())};
  const StridedLoop loop(x.shape(), strides);
  const T* px = x.data<T>();
  const int64_t n = loop.row_size();
  const int64_t sa = loop.inner_stride(1);
  loop.for_each_row([&](int64_t, const int64_t* off) { f(off[1], px + off[0], n, sa); });
}

template <ReduceKind kKind, typename T>
void accumulate(const Tensor& x, const ReducePlan& plan, std::vector<AccType<kKind, T>>& acc,
                const std::vector<double>& shift) {
  using A = AccType<kKind, T>;
  for_each_reduce_row<T>(x, plan.kept, [&](int64_t at, const T* src, int64_t n, int64_t stride) {
    A* dst = acc.data() + at;
    const double* sh = kKind == ReduceKind::kLogSumExp ? shift.data() + at : nullptr;
    if (stride == 0) {
      A r = *dst;
      const double s = sh ? *sh : 0.0;
      for (int64_t i = 0; i < n; ++i) reduce_step<kKind, T>(r, src[i], s);
      *dst = r;
    } else {
      for (int64_t i = 0; i < n; ++i) reduce_step<kKind, T>(dst[i], src[i], sh ? sh[i] : 0.0);
    }
  });
}

template <ReduceKind kKind, typename Types = NumericHalfTypes>
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
  ReducePlan plan;
  plan.kept = x.shape();
  for (int64_t a : axes) {
    plan.count *= x.dim(a);
    plan.kept[static_cast<size_t>(a)] = 1;
  }
  for (int64_t a = 0; a < rank; ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced || keepdims) plan.out_shape.push_back(reduced ? 1 : x.dim(a));
  }
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    using A = AccType<kKind, T>;
    if constexpr (kKind == ReduceKind::kMean && !kIsRealFloat<T>) {
      if (plan.count == 0) {
        return ctx.fail(StatusCode::kNumericFailure, "the mean of an empty set has no integer value");
      }
    }
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), plan.out_shape));
    const auto out_n = static_cast<size_t>(y->numel());
    std::vector<double> shift;
    if constexpr (kKind == ReduceKind::kLogSumExp) {
      // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum: no exp overflows and the
      // largest term is exactly 1.
      std::vector<T> mx(out_n, reduce_identity<ReduceKind::kMax, T>());
      accumulate<ReduceKind::kMax, T>(x, plan, mx, shift);
      for (const T m : mx) shift.push_back(static_cast<double>(m));
    }
    std::vector<A> acc(out_n, reduce_identity<kKind, T>());
    accumulate<kKind, T>(x, plan, acc, shift);
    T* py = out_n > 0 ? y->mutable_data<T>() : nullptr;
    for (size_t i = 0; i < out_n; ++i) {
      py[i] = reduce_finish<kKind, T>(acc[i], plan.count, shift.empty() ? 0.0 : shift[i]);
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

// ReduceSum-13 and every other Reduce* from opset 18: axes is an optional input, and
// noop_with_empty_axes makes an empty list the identity. `Types`: the element types taken.
template <ReduceKind kKind, typename Types = NumericHalfTypes>
Status reduce_axes_input(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto axes, optional_input_int64s(ctx, 1, "axes"));
  return reduce_with<kKind, Types>(ctx, std::move(axes), ctx.attr_int("noop_with_empty_axes", 0) != 0);
}

// ---- ArgMax / ArgMin ---------------------------------------------------------------------------

/// Index of the maximum (kMax) or minimum along `axis`. Ties go to the first index, or the last
/// with select_last_index; a NaN wins like the maximum in numpy.argmax/argmin.
template <bool kMax>
Status arg_reduce(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), rank));
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t len = x.dim(axis);
  const int64_t inner = shape_product(x.shape(), a + 1, x.shape().size());
  if (len == 0 && outer * inner > 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "cannot take Arg{} over the empty axis {} of {}", kMax ? "Max" : "Min",
                    axis, shape_to_string(x.shape()));
  }
  Shape out_shape = x.shape();
  if (keepdims) {
    out_shape[a] = 1;
  } else {
    out_shape.erase(out_shape.begin() + axis);
  }
  return dispatch_types(NumericHalfTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, out_shape));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    int64_t* py = y->mutable_data<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* col = px + o * len * inner + i;
        int64_t best = 0;
        for (int64_t j = 1; j < len; ++j) {
          const T v = col[j * inner];
          const T b = col[best * inner];
          bool take;
          if constexpr (kIsRealFloat<T>) {
            using Eigen::numext::isnan;
            if (isnan(b)) {
              take = last && isnan(v);
            } else {
              take = isnan(v) || (kMax ? v > b : v < b) || (last && v == b);
            }
          } else {
            take = (kMax ? v > b : v < b) || (last && v == b);
          }
          if (take) best = j;
        }
        py[o * inner + i] = best;
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11}) registry.add("ReduceSum", v, reduce_1<ReduceKind::kSum>);
  registry.add("ReduceSum", 13, reduce_axes_input<ReduceKind::kSum>);
  for (int64_t v : {1, 11, 13}) registry.add("ReduceMean", v, reduce_1<ReduceKind::kMean>);
  registry.add("ReduceMean", 18, reduce_axes_input<ReduceKind::kMean>);
  for (int64_t v : {1, 11, 12, 13}) {
    registry.add("ReduceMax", v, reduce_1<ReduceKind::kMax>);
    registry.add("ReduceMin", v, reduce_1<ReduceKind::kMin>);
  }
  registry.add("ReduceMax", 18, reduce_axes_input<ReduceKind::kMax>);
  registry.add("ReduceMin", 18, reduce_axes_input<ReduceKind::kMin>);
  // ReduceMax-20 and ReduceMin-20 add bool: any and all (false and true over an empty set).
  registry.add("ReduceMax", 20, reduce_axes_input<ReduceKind::kMax, NumericHalfBoolTypes>);
  registry.add("ReduceMin", 20, reduce_axes_input<ReduceKind::kMin, NumericHalfBoolTypes>);
  for (int64_t v : {1, 11, 13}) {
    registry.add("ReduceProd", v, reduce_1<ReduceKind::kProd>);
    registry.add("ReduceL1", v, reduce_1<ReduceKind::kL1>);
    registry.add("ReduceL2", v, reduce_1<ReduceKind::kL2>);
    registry.add("ReduceSumSquare", v, reduce_1<ReduceKind::kSumSquare>);
    registry.add("ReduceLogSum", v, reduce_1<ReduceKind::kLogSum>);
    registry.add("ReduceLogSumExp", v, reduce_1<ReduceKind::kLogSumExp>);
  }
  registry.add("ReduceProd", 18, reduce_axes_input<ReduceKind::kProd>);
  registry.add("ReduceL1", 18, reduce_axes_input<ReduceKind::kL1>);
  registry.add("ReduceL2", 18, reduce_axes_input<ReduceKind::kL2>);
  registry.add("ReduceSumSquare", 18, reduce_axes_input<ReduceKind::kSumSquare>);
  // Opset 28 only took the integer types out of ReduceLogSum and ReduceLogSumExp.
  for (int64_t v : {18, 28}) {
    registry.add("ReduceLogSum", v, reduce_axes_input<ReduceKind::kLogSum>);
    registry.add("ReduceLogSumExp", v, reduce_axes_input<ReduceKind::kLogSumExp>);
  }
  // ArgMax-12 added select_last_index (read at every version; it is absent before 12).
  for (int64_t v : {1, 11, 12, 13}) {
    registry.add("ArgMax", v, arg_reduce<true>);
    registry.add("ArgMin", v, arg_reduce<false>);
  }
}

}  // namespace vn::ops
