// SPDX-License-Identifier: Apache-2.0
// The float32 matrix product of MatMul and Gemm, for the reference backend and the engine: B is
// packed into the panels of sgemm.h (by all threads) and the products run on sgemm_packed's
// kernel (AVX-512 where the machine has it), in tasks of row blocks and column panels shared
// among the threads.
//
// Every element of C is the sum of its k products in an order fixed by k alone (sgemm_packed's
// passes over k, each in k order, from zero): the result is the same at any thread count and for
// any split of the work, and the same whether a product runs alone or in a batch.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

namespace vn::ops {

/// The shape and layout shared by the products of a batch: op(A) is m x k and op(B) k x n, A
/// stored with rows lda apart (m x k, or k x m when trans_a), B with rows ldb apart (k x n, or
/// n x k when trans_b), C (m x n) with rows ldc apart.
struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
};

/// The operands of one product.
struct GemmOperands {
  const float* a;
  const float* b;
  float* c;
};

/// Applied to B's values once they are packed (a span of whole packed panels, zero padding
/// included), before any product reads them: an elementwise rounding, such as the engine's to its
/// operand format, costs a pass over packed panels that are in cache rather than a copy of B.
using PanelTransform = std::function<void(std::span<float>)>;

/// C = op(A) · op(B) on up to `threads` threads, B's values passed through `transform_b` when
/// given. C is overwritten, never read (zero when k is 0).
void sgemm(const GemmShape& shape, const float* a, const float* b, float* c, int threads,
           const PanelTransform* transform_b = nullptr);

/// sgemm for each product of `batch`, the products spread over the threads when there are enough
/// of them, else each product's work.
void sgemm_batched(const GemmShape& shape, std::span<const GemmOperands> batch, int threads,
                   const PanelTransform* transform_b = nullptr);

}  // namespace vn::ops
