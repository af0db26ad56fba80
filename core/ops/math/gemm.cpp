// SPDX-License-Identifier: Apache-2.0
// Matrix products: Gemm (alpha·op(A)·op(B) + beta·C), MatMul (numpy matmul with batched
// broadcasting and the 1-D promotion rules) and MatMulInteger (MatMul of zero-point-centered
// 8-bit integers, exact in int32). float32 runs on sgemm (sgemm_driver.h: packed panels, the same
// sums at any thread count); float64 and the integers go through Eigen's GEMM on row-major maps.
//
// float16 and bfloat16 widen exactly to float32 and each output is the float32 sum of its products
// in k order, rounded once to the element type. That is numpy's float16 matmul and dot loop (the
// ONNX reference's MatMul and the product in its Gemm), bit for bit: the products of two float16
// (or bfloat16) values are exact in float32, so a fused multiply-add gives the same sums. Gemm
// adds alpha and beta·C in float32 before that one rounding, where numpy rounds the product, the
// alpha product, beta·C and the sum each to float16 (README, Known limits).
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/sgemm_driver.h"

namespace vn::ops {
namespace {

/// y = op(a) · op(b) for row-major maps, choosing the transposed views without copies.
template <typename T>
void gemm_product(const ConstMatrixMap<T>& a, bool trans_a, const ConstMatrixMap<T>& b, bool trans_b, MatrixMap<T>& y) {
  if (!trans_a && !trans_b) {
    y.noalias() = a * b;
  } else if (trans_a && !trans_b) {
    y.noalias() = a.transpose() * b;
  } else if (!trans_a && trans_b) {
    y.noalias() = a * b.transpose();
  } else {
    y.noalias() = a.transpose() * b.transpose();
  }
}

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// y (m, n) = a (m, k) · b (k, n), row-major float32, each output summed from 0 in k order (numpy's
/// float16 loop). Row i accumulates a[i][kk] · b[kk][:] for kk = 0, 1, ..., which keeps that order
/// for every output while the inner loop runs over n.
void ordered_product(const float* a, const float* b, float* y, int64_t m, int64_t k, int64_t n, int threads) {
  const int64_t grain = std::max<int64_t>(1, kComputeBoundGrain / std::max<int64_t>(1, k * n));
  parallel_chunks(threads, m, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float* yr = y + i * n;
      std::fill(yr, yr + n, 0.0f);
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = a[i * k + kk];
        const float* br = b + kk * n;
        for (int64_t j = 0; j < n; ++j) yr[j] += av * br[j];
      }
    }
  }, grain);
}

template <bool kLegacy>
Status gemm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const bool trans_a = ctx.attr_int("transA", 0) != 0;
  const bool trans_b = ctx.attr_int("transB", 0) != 0;
  const float alpha = ctx.attr_float("alpha", 1.0f);
  const float beta = ctx.attr_float("beta", 1.0f);
  if (a.rank() != 2 || b.rank() != 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "A and B must be 2-D, got {} and {}", shape_to_string(a.shape()),
                    shape_to_string(b.shape()));
  }
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "A ({}) and B ({}) must have the same type", dtype_name(a.dtype()),
                    dtype_name(b.dtype()));
  }
  const int64_t m = trans_a ? a.dim(1) : a.dim(0);
  const int64_t k = trans_a ? a.dim(0) : a.dim(1);
  const int64_t k_b = trans_b ? b.dim(1) : b.dim(0);
  const int64_t n = trans_b ? b.dim(0) : b.dim(1);
  if (k != k_b) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "inner dimensions differ: op(A) is ({}, {}) and op(B) is ({}, {}) with transA={}, transB={}", m, k,
                    k_b, n, trans_a ? 1 : 0, trans_b ? 1 : 0);
  }
  const Shape out_shape{m, n};
  const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (c) {
    if (c->dtype() != a.dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "C ({}) must have the type of A ({})", dtype_name(c->dtype()),
                      dtype_name(a.dtype()));
    }
    const bool strict = kLegacy && ctx.attr_int("broadcast", 0) == 0;
    if (strict ? c->shape() != out_shape : !broadcasts_to(c->shape(), out_shape)) {
      return ctx.fail(StatusCode::kShapeMismatch, "C of shape {} does not {} the output shape {}",
                      shape_to_string(c->shape()), strict ? "equal (broadcast=0)" : "broadcast to",
                      shape_to_string(out_shape));
    }
  }
  return dispatch_types(ArithmeticHalfTypes{}, ctx, a.dtype(), [&]<typename T>() -> Status {
    using W = WideType<T>;
    // Every element is written below (the products overwrite, never accumulate into y).
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, dtype_of<T>, out_shape));
    if (y->numel() == 0) return Status::OK();
    const ConstMatrixMap<T> am(a.data<T>(), a.dim(0), a.dim(1));
    const ConstMatrixMap<T> bm(b.data<T>(), b.dim(0), b.dim(1));
    RowMajorMatrix<W> yw;  // the float32 result of float16 and bfloat16, rounded once at the end
    W* yp = nullptr;
    if constexpr (kIsNarrowFloat<T>) {
      yw.resize(m, n);
      yp = yw.data();
    } else {
      yp = y->mutable_data<T>();
    }
    MatrixMap<W> ym(yp, m, n);
    if constexpr (kIsNarrowFloat<T>) {
      // Row-major float32 copies of op(A) and op(B) for the k-ordered sums.
      const RowMajorMatrix<float> af = trans_a ? RowMajorMatrix<float>(am.transpose().template cast<float>())
                                               : RowMajorMatrix<float>(am.template cast<float>());
      const RowMajorMatrix<float> bf = trans_b ? RowMajorMatrix<float>(bm.transpose().template cast<float>())
                                               : RowMajorMatrix<float>(bm.template cast<float>());
      ordered_product(af.data(), bf.data(), yp, m, k, n, ctx.num_threads());
    } else if constexpr (std::is_same_v<T, float>) {
      const GemmShape shape{trans_a, trans_b, m, n, k, a.dim(1), b.dim(1), n};
      sgemm(shape, a.data<float>(), b.data<float>(), yp, ctx.num_threads(), nullptr, ctx.constant_input(1));
    } else {
      gemm_product<T>(am, trans_a, bm, trans_b, ym);
    }
    if (alpha != 1.0f) ym *= static_cast<W>(alpha);
    if (c && beta != 0.0f) {
      Tensor cb = *c;
      if (c->shape() != out_shape) {
        cb = Tensor(c->dtype(), out_shape);
        VN_RETURN_IF_ERROR(broadcast_copy(*c, cb));
      }
      const auto cm = ConstMatrixMap<T>(cb.data<T>(), m, n).template cast<W>();
      if (beta == 1.0f) {
        ym += cm;
      } else {
        ym += static_cast<W>(beta) * cm;
      }
    }
    if constexpr (kIsNarrowFloat<T>) MatrixMap<T>(y->mutable_data<T>(), m, n) = ym.template cast<T>();
    return Status::OK();
  });
}

/// Calls product(a, b, y, rows) for each matrix product of numpy.matmul's broadcast batch, where
/// a is (rows, k), b is (k, n) and y is (rows, n), all row-major.
template <typename T, typename Product>
void matmul_batches(const T* pa, const T* pb, T* py, const Shape& batch_a, const Shape& batch_b, const Shape& batch,
                    int64_t m, int64_t k, int64_t n, Product&& product) {
  const int64_t batches = shape_numel(batch);
  if (shape_numel(batch_b) == 1 && shape_numel(batch_a) == batches) {
    // B is one matrix shared by every batch: fold A's batch into M for a single large product.
    product(pa, pb, py, batches * m);
    return;
  }
  const Shape strides[] = {broadcast_strides(batch_a, batch), broadcast_strides(batch_b, batch)};
  const StridedLoop loop(batch, strides);
  const int64_t sa_inner = loop.inner_stride(0);
  const int64_t sb_inner = loop.inner_stride(1);
  loop.for_each_row([&](int64_t dense, const int64_t* off) {
    for (int64_t i = 0; i < loop.row_size(); ++i) {
      product(pa + (off[0] + i * sa_inner) * m * k, pb + (off[1] + i * sb_inner) * k * n, py + (dense + i) * m * n, m);
    }
  });
}

/// Output 0 = matmul(a, b) for tensors of one type from Types.
template <typename Types>
Status matmul_tensors(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.rank() < 1 || b.rank() < 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "inputs must have rank >= 1, got {} and {}", shape_to_string(a.shape()),
                    shape_to_string(b.shape()));
  }
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "A ({}) and B ({}) must have the same type", dtype_name(a.dtype()),
                    dtype_name(b.dtype()));
  }
  // numpy.matmul: a 1-D A is a row vector (1, K), a 1-D B a column vector (K, 1); the added
  // dimension is removed from the result.
  Shape sa = a.shape();
  Shape sb = b.shape();
  if (a.rank() == 1) sa.insert(sa.begin(), 1);
  if (b.rank() == 1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2];
  const int64_t k = sa.back();
  const int64_t k_b = sb[sb.size() - 2];
  const int64_t n = sb.back();
  if (k != k_b) {
    return ctx.fail(StatusCode::kShapeMismatch, "inner dimensions differ: A {} has K = {} but B {} has K = {}",
                    shape_to_string(a.shape()), k, shape_to_string(b.shape()), k_b);
  }
  const Shape batch_a(sa.begin(), sa.end() - 2);
  const Shape batch_b(sb.begin(), sb.end() - 2);
  Result<Shape> batch = broadcast_shapes(batch_a, batch_b);
  if (!batch.ok()) {
    return ctx.fail(StatusCode::kShapeMismatch, "batch dimensions of A {} and B {} do not broadcast: {}",
                    shape_to_string(a.shape()), shape_to_string(b.shape()), batch.status().message());
  }
  Shape out_shape = *batch;
  if (a.rank() > 1) out_shape.push_back(m);
  if (b.rank() > 1) out_shape.push_back(n);

  return dispatch_types(Types{}, ctx, a.dtype(), [&]<typename T>() -> Status {
    if constexpr (kIsNarrowFloat<T>) {
      // The float32 products of the widened operands, rounded once (ordered_product).
      Tensor yf(DType::kFloat32, out_shape);
      VN_ASSIGN_OR_RETURN(Tensor af, tensor_cast(a, DType::kFloat32));
      VN_ASSIGN_OR_RETURN(Tensor bf, tensor_cast(b, DType::kFloat32));
      if (yf.numel() > 0) {
        matmul_batches(af.data<float>(), bf.data<float>(), yf.mutable_data<float>(), batch_a, batch_b, *batch, m, k, n,
                       [&](const float* pa, const float* pb, float* py, int64_t rows) {
                         ordered_product(pa, pb, py, rows, k, n, ctx.num_threads());
                       });
      }
      VN_ASSIGN_OR_RETURN(Tensor y, tensor_cast(yf, a.dtype()));
      ctx.set_output(0, std::move(y));
      return Status::OK();
    } else {
      // Each product overwrites its part of y, and the parts cover it.
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, dtype_of<T>, out_shape));
      if (y->numel() == 0) return Status::OK();
      if constexpr (std::is_same_v<T, float>) {
        // Every product of the batch has the same shape (`rows` is m, or all of A's rows when
        // the batch folds into one product); sgemm_batched spreads them over the threads.
        GemmShape shape{false, false, m, n, k, k, n, n};
        std::vector<GemmOperands> products;
        matmul_batches(a.data<float>(), b.data<float>(), y->mutable_data<float>(), batch_a, batch_b, *batch, m, k, n,
                       [&](const float* pa, const float* pb, float* py, int64_t rows) {
                         shape.m = rows;
                         products.push_back({pa, pb, py});
                       });
        // B is the model's constant only when every product reads it whole: one 2-D B.
        const Tensor* b_constant = b.rank() == 2 && &b == &ctx.input(1) ? ctx.constant_input(1) : nullptr;
        const KernelContext::OutputEpilogue* epilogue = ctx.output_epilogue(*y);
        if (epilogue != nullptr && products.size() == 1) {
          // One product (a linear layer, its batch folded into the rows): the epilogue runs on each
          // block of y as the product completes it, while in cache.
          float* py = y->mutable_data<float>();
          const GemmFinish finish = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
            epilogue->apply(py, i0 * n + j0, i1 - i0, n, j1 - j0);
          };
          sgemm(shape, products[0].a, products[0].b, products[0].c, ctx.num_threads(), nullptr, b_constant,
                Narrow::kNone, &finish);
          ctx.mark_epilogue_applied();
          return Status::OK();
        }
        sgemm_batched(shape, products, ctx.num_threads(), nullptr, b_constant);
        return Status::OK();
      }
      matmul_batches(a.data<T>(), b.data<T>(), y->mutable_data<T>(), batch_a, batch_b, *batch, m, k, n,
                     [&](const T* pa, const T* pb, T* py, int64_t rows) {
                       MatrixMap<T>(py, rows, n).noalias() = ConstMatrixMap<T>(pa, rows, k) * ConstMatrixMap<T>(pb, k, n);
                     });
      return Status::OK();
    }
  });
}

Status matmul(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  return matmul_tensors<ArithmeticHalfTypes>(ctx, ctx.input(0), ctx.input(1));
}

/// `t` (int8 or uint8) minus its zero point as an int32 tensor. `zp` is null (zero), a scalar, or
/// a 1-D tensor of `per_count` values indexed by (flat index / per_stride) % per_count: A's rows
/// (stride K) or B's columns (stride 1).
Result<Tensor> centered(const KernelContext& ctx, const Tensor& t, const Tensor* zp, int64_t per_count,
                        int64_t per_stride, std::string_view what) {
  if (t.dtype() != DType::kInt8 && t.dtype() != DType::kUInt8) {
    return unsupported_dtype(ctx, t.dtype(), {DType::kInt8, DType::kUInt8});
  }
  std::vector<int64_t> zero{0};
  if (zp) {
    if (zp->dtype() != t.dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "{}_zero_point ({}) must have the type of {} ({})", what,
                      dtype_name(zp->dtype()), what, dtype_name(t.dtype()));
    }
    if (!(zp->numel() == 1 && zp->rank() <= 1) && !(zp->rank() == 1 && zp->dim(0) == per_count)) {
      return ctx.fail(StatusCode::kShapeMismatch, "{}_zero_point of shape {} must be a scalar or hold {} values", what,
                      shape_to_string(zp->shape()), per_count);
    }
    VN_ASSIGN_OR_RETURN(zero, tensor_to_int64s(*zp));
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> v, tensor_to_int64s(t));
  Tensor out(DType::kInt32, t.shape());
  int32_t* po = t.numel() > 0 ? out.mutable_data<int32_t>() : nullptr;
  const auto zn = static_cast<int64_t>(zero.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t z = zn == 1 ? zero[0] : zero[static_cast<size_t>((static_cast<int64_t>(i) / per_stride) % zn)];
    po[i] = static_cast<int32_t>(v[i] - z);
  }
  return out;
}

// MatMulInteger-10: matmul of (A - a_zero_point) and (B - b_zero_point) with int32 output.
// a_zero_point may hold one value per row of A, b_zero_point one per column of B.
Status matmul_integer(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() < 1 || b.rank() < 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "inputs must have rank >= 1, got {} and {}", shape_to_string(a.shape()),
                    shape_to_string(b.shape()));
  }
  const int64_t k = a.dim(a.rank() - 1);
  const int64_t rows = a.rank() > 1 ? a.dim(a.rank() - 2) : 1;
  const int64_t cols = b.rank() > 1 ? b.dim(b.rank() - 1) : 1;
  VN_ASSIGN_OR_RETURN(Tensor ac,
                      centered(ctx, a, ctx.has_input(2) ? &ctx.input(2) : nullptr, rows, std::max<int64_t>(k, 1), "a"));
  VN_ASSIGN_OR_RETURN(Tensor bc, centered(ctx, b, ctx.has_input(3) ? &ctx.input(3) : nullptr, cols, 1, "b"));
  return matmul_tensors<TypeList<int32_t>>(ctx, ac, bc);
}

}  // namespace

void register_gemm_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6}) registry.add("Gemm", v, gemm<true>);
  for (int64_t v : {7, 9, 11, 13}) registry.add("Gemm", v, gemm<false>);
  for (int64_t v : {1, 9, 13}) registry.add("MatMul", v, matmul);
  registry.add("MatMulInteger", 10, matmul_integer);
}

}  // namespace vn::ops
