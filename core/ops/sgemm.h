// SPDX-License-Identifier: Apache-2.0
// The float32 matrix product under the reference backend's convolutions, on one thread (callers
// share the work among theirs). B, the im2col matrix, is written straight into its packed layout
// by the convolution (a 1x1 convolution's, its input planes, is read where it lies); A, the
// weights, is packed once per convolution when several tiles of output positions read it, and
// read where it lies when one tile does (the deep layers, whose weights are large and each used
// once), so that no operand is copied again for each product.
//
// On machines with AVX-512 the product runs a kernel compiled for AVX-512 in a shared library of
// its own (sgemm_avx512.cpp): g++ 12 miscompiles ordinary code with AVX-512 on, so only this
// kernel is built with it, behind a C entry point. Elsewhere an AVX2/FMA kernel (or plain C++
// without them) computes the same products on the same layout.
#pragma once

#include <cstdint>

namespace vn::ops {

/// Rows of A per packed block and columns of B per packed panel. A (m x k) is packed in blocks of
/// kPackRows rows, each block k-major (k x kPackRows floats; rows past m are zero). B (k x n) is
/// packed in panels of kPackCols columns, each panel k-major (k x kPackCols floats; columns past
/// n are zero), panel p at packed_b + p * k * kPackCols.
inline constexpr int64_t kPackRows = 12;
inline constexpr int64_t kPackCols = 32;

/// Called on each block of C whose sums are complete (rows [i0, i0 + rows) and columns [j0, j0 +
/// cols) of the call's C), right after its tiles, while it is in cache: an engine's epilogue. A
/// function pointer and its context, which the AVX-512 library (built apart) can call.
struct TileFinish {
  void (*fn)(void* context, int64_t i0, int64_t rows, int64_t j0, int64_t cols);
  void* context;
};

/// Floats of packed A for m x k.
inline int64_t packed_a_size(int64_t m, int64_t k) { return (m + kPackRows - 1) / kPackRows * kPackRows * k; }
/// Floats of packed B for k x n.
inline int64_t packed_b_size(int64_t k, int64_t n) { return (n + kPackCols - 1) / kPackCols * kPackCols * k; }

/// Packs the row blocks [block0, block1) of A (m x k, rows lda apart) into `packed` (laid out for
/// all of A: block b at packed + b * k * kPackRows).
void pack_a(int64_t m, int64_t k, const float* a, int64_t lda, int64_t block0, int64_t block1, float* packed);

/// C (m x n, rows ldc apart) = A * B, plus bias[i] on row i when bias is non-null. A is packed as
/// above when lda is 0, else row-major with rows lda apart; B is packed as above, from its first
/// panel. C is overwritten, never read. `finish`, when given, is called on blocks of C covering it
/// once each (TileFinish).
void sgemm_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                  const float* bias, float* c, int64_t ldc, const TileFinish* finish = nullptr);

/// sgemm_packed with B (k x n) read where it lies, rows `ldb` apart (a 1x1 convolution's input
/// planes, which need no im2col), instead of packed: each element of C is the same sum in the same
/// order, so the same bits. Reads no element of B outside its k rows of n columns.
void sgemm_direct_b(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                    const float* bias, float* c, int64_t ldc, const TileFinish* finish = nullptr);

/// Whether sgemm_packed runs the AVX-512 kernel here (the library was built and the CPU has it).
bool sgemm_uses_avx512();

namespace detail {
/// The kernel sgemm_packed runs where AVX-512 is not available, callable anywhere (for tests).
void sgemm_packed_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                           const float* bias, float* c, int64_t ldc, const TileFinish* finish = nullptr);
/// The same for sgemm_direct_b.
void sgemm_direct_b_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                             const float* bias, float* c, int64_t ldc, const TileFinish* finish = nullptr);
}  // namespace detail

}  // namespace vn::ops
