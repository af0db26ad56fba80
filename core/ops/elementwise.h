// SPDX-License-Identifier: Apache-2.0
// Drivers for elementwise kernels: unary ops over Eigen array maps and binary ops with numpy
// broadcasting. Used by the math, logical and tensor families.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {

/// Writes output 0 = f(X) for input 0, where f maps a ConstArrayMap<T> to an Eigen array
/// expression of the same length, elementwise (f may be called on slices of X, from several
/// threads, each given at least `grain` elements; see parallel_chunks). The output has X's shape
/// and the dtype of the expression.
template <typename T, typename F>
Status unary_map(KernelContext& ctx, F&& f, int64_t grain = kMemoryBoundGrain) {
  const Tensor& x = ctx.input(0);
  using R = typename std::decay_t<decltype(f(std::declval<const ConstArrayMap<T>&>()))>::Scalar;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, dtype_of<R>, x.shape()));
  if (x.numel() == 0) return Status::OK();
  const T* px = x.data<T>();
  R* py = y->mutable_data<R>();
  parallel_chunks(ctx.num_threads(), x.numel(), [&](int64_t lo, int64_t hi) {
    const ConstArrayMap<T> xm(px + lo, hi - lo);
    ArrayMap<R>(py + lo, hi - lo) = f(xm);
  }, grain);
  return Status::OK();
}

/// Writes output 0 = f(x) elementwise for input 0 of type T, where f is a scalar functor T -> R.
template <typename T, typename F>
Status unary_scalar(KernelContext& ctx, F f, int64_t grain = kMemoryBoundGrain) {
  return unary_map<T>(ctx, [&](const ConstArrayMap<T>& x) { return x.unaryExpr(f); }, grain);
}

/// unary_scalar for a functor f over WideType<T>: float16 and bfloat16 widen exactly to float and
/// f's result rounds once to T, as numpy's float16 loops (and ml_dtypes' bfloat16 ones) compute.
template <typename T, typename F>
Status unary_widened(KernelContext& ctx, F f, int64_t grain = kMemoryBoundGrain) {
  using W = WideType<T>;
  return unary_scalar<T>(ctx, [f](T v) { return static_cast<T>(f(static_cast<W>(v))); }, grain);
}

/// Writes output 0 = f over float32 input 0, where f(x, y, n) writes y[0, n) from x[0, n)
/// elementwise (vector_math.h's arrays): y may be x, and f is called on slices, from several
/// threads, as in unary_map.
template <typename F>
Status unary_float_arrays(KernelContext& ctx, F f, int64_t grain = kComputeBoundGrain) {
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, DType::kFloat32, x.shape()));
  if (x.numel() == 0) return Status::OK();
  const float* px = x.data<float>();
  float* py = y->mutable_data<float>();
  parallel_chunks(ctx.num_threads(), x.numel(), [&](int64_t lo, int64_t hi) { f(px + lo, py + lo, hi - lo); }, grain);
  return Status::OK();
}

/// One broadcast row of a binary op: n results from a (stride sa, 0 or 1) and b (stride sb).
template <typename TA, typename TB, typename R, typename Op>
void binary_row(const TA* a, int64_t sa, const TB* b, int64_t sb, R* out, int64_t n, const Op& op) {
  if constexpr (std::is_same_v<TA, std::string>) {
    // Eigen has no string scalars.
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i * sa], b[i * sb]);
  } else {
    ArrayMap<R> y(out, n);
    if (sa == 1 && sb == 1) {
      if constexpr (std::is_same_v<TA, TB>) {
        y = ConstArrayMap<TA>(a, n).binaryExpr(ConstArrayMap<TB>(b, n), op);
      } else {
        // Eigen's binaryExpr requires one scalar type on both sides.
        for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
      }
    } else if (sa == 1) {
      const TB bv = *b;
      y = ConstArrayMap<TA>(a, n).unaryExpr([&](TA v) { return static_cast<R>(op(v, bv)); });
    } else if (sb == 1) {
      const TA av = *a;
      y = ConstArrayMap<TB>(b, n).unaryExpr([&](TB v) { return static_cast<R>(op(av, v)); });
    } else {
      y.setConstant(static_cast<R>(op(*a, *b)));
    }
  }
}

/// Computes output 0 = op(a, b) elementwise with numpy broadcasting. `a` holds TA, `b` holds TB and
/// the output R; `op` is a functor R(TA, TB). Fails with kShapeMismatch when the shapes do not
/// broadcast.
template <typename TA, typename TB, typename R, typename Op>
Status binary_broadcast(KernelContext& ctx, const Tensor& a, const Tensor& b, const Op& op) {
  Result<Shape> out_shape = broadcast_shapes(a.shape(), b.shape());
  if (!out_shape.ok()) return out_shape.status().with_node(ctx.node().ref(ctx.node_index()));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_elementwise(0, dtype_of<R>, *out_shape));
  const Shape strides[] = {broadcast_strides(a.shape(), *out_shape), broadcast_strides(b.shape(), *out_shape)};
  const StridedLoop loop(*out_shape, strides);
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  R* py = y->mutable_data<R>();
  const int64_t sa = loop.inner_stride(0);
  const int64_t sb = loop.inner_stride(1);
  const int64_t n = loop.row_size();
  if (loop.rows() == 1) {
    // One row (same shapes, or a scalar against a tensor): cut it among the threads.
    const int64_t oa = loop.base(0), ob = loop.base(1);
    parallel_chunks(ctx.num_threads(), n, [&](int64_t lo, int64_t hi) {
      binary_row(pa + oa + lo * sa, sa, pb + ob + lo * sb, sb, py + lo, hi - lo, op);
    });
    return Status::OK();
  }
  // Several rows (a per-channel scale, a bias over a batch): whole rows to each thread.
  const auto rows = [&](int64_t first, int64_t last) {
    loop.for_rows(first, last, [&](int64_t dense, const int64_t* off) {
      binary_row(pa + off[0], sa, pb + off[1], sb, py + dense, n, op);
    });
  };
  if (loop.rows() >= ctx.num_threads()) {
    parallel_chunks(ctx.num_threads(), loop.numel(), [&](int64_t lo, int64_t hi) { rows(lo / n, hi / n); });
  } else {
    rows(0, loop.rows());
  }
  return Status::OK();
}

/// Accumulates in place: out = op(out, b) where b broadcasts unidirectionally to out's shape.
/// Used by the variadic ops (Sum, Max, ...). Precondition: broadcasts_to(b.shape(), out.shape()).
template <typename T, typename Op>
void binary_accumulate(Tensor& out, const Tensor& b, const Op& op) {
  const Shape strides[] = {contiguous_strides(out.shape()), broadcast_strides(b.shape(), out.shape())};
  const StridedLoop loop(out.shape(), strides);
  T* py = out.mutable_data<T>();
  const T* pb = b.data<T>();
  const int64_t sb = loop.inner_stride(1);
  const int64_t n = loop.row_size();
  loop.for_each_row(
      [&](int64_t dense, const int64_t* off) { binary_row(py + dense, 1, pb + off[1], sb, py + dense, n, op); });
}

/// Copies `src` broadcast to `target` into the dense tensor `dst` (same dtype, shape target).
/// Precondition: broadcasts_to(src.shape(), target).
Status broadcast_copy(const Tensor& src, Tensor& dst);

/// Opset < 7 binary ops with `broadcast`/`axis` attributes: returns B viewed with A's rank so that
/// numpy broadcasting reproduces the legacy rule (B's shape matches a contiguous run of A's dims
/// starting at `axis`, by default the trailing dims). With broadcast = 0 the shapes must be equal.
Result<Tensor> legacy_broadcast_view(const KernelContext& ctx, const Tensor& a, const Tensor& b);

}  // namespace vn::ops
