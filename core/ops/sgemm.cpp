// SPDX-License-Identifier: Apache-2.0
#include "core/ops/sgemm.h"

#include <algorithm>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "core/ops/sgemm_impl.h"

#ifdef VN_HAVE_SGEMM_AVX512
extern "C" void vn_sgemm_packed_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                       int64_t ldb, const float* bias, float* c, int64_t ldc);
#endif

namespace vn::ops {
namespace {

using sgemm_detail::ALayout;
using sgemm_detail::BLayout;

#if defined(__AVX2__) && defined(__FMA__)

/// R (<= 4) rows x `cols` (<= 16) columns of C over `depth` steps; b's rows are lb.step apart,
/// only `cols` of them read when lb.direct. Eight-float vectors: 2R accumulators leave room for B
/// and a broadcast in the sixteen registers.
template <int R>
void sub_tile(int64_t depth, const float* a, ALayout la, const float* b, BLayout lb, float* c, int64_t ldc, int cols,
              const float* bias, bool accumulate) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lo_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), lanes);
  const __m256i hi_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8), lanes);
  __m256 lo[R], hi[R];
  alignas(32) float row[16];
  for (int r = 0; r < R; ++r) {
    if (accumulate) {
      std::fill_n(row, 16, 0.0f);
      std::copy_n(c + r * ldc, cols, row);
      lo[r] = _mm256_load_ps(row);
      hi[r] = _mm256_load_ps(row + 8);
    } else {
      lo[r] = hi[r] = bias ? _mm256_set1_ps(bias[r]) : _mm256_setzero_ps();
    }
  }
  for (int64_t p = 0; p < depth; ++p) {
    const __m256 b0 = lb.direct ? _mm256_maskload_ps(b, lo_mask) : _mm256_loadu_ps(b);
    const __m256 b1 = lb.direct ? _mm256_maskload_ps(b + 8, hi_mask) : _mm256_loadu_ps(b + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + r * la.row);
      lo[r] = _mm256_fmadd_ps(ar, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(ar, b1, hi[r]);
    }
    a += la.step;
    b += lb.step;
  }
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(row, lo[r]);
    _mm256_store_ps(row + 8, hi[r]);
    std::copy_n(row, cols, c + r * ldc);
  }
}

void portable_tile(int rows, int64_t depth, const float* a, ALayout la, const float* b, BLayout lb, float* c,
                   int64_t ldc, int cols, const float* bias, bool accumulate,
                   const float* /*next_a: no prefetch here*/) {
  for (int r0 = 0; r0 < rows; r0 += 4) {
    const float* ar = a + r0 * la.row;
    const float* br = bias ? bias + r0 : nullptr;
    for (int c0 = 0; c0 < cols; c0 += 16) {
      float* cr = c + r0 * ldc + c0;
      const int w = std::min(16, cols - c0);
      switch (std::min(4, rows - r0)) {
        case 4:
          sub_tile<4>(depth, ar, la, b + c0, lb, cr, ldc, w, br, accumulate);
          break;
        case 3:
          sub_tile<3>(depth, ar, la, b + c0, lb, cr, ldc, w, br, accumulate);
          break;
        case 2:
          sub_tile<2>(depth, ar, la, b + c0, lb, cr, ldc, w, br, accumulate);
          break;
        default:
          sub_tile<1>(depth, ar, la, b + c0, lb, cr, ldc, w, br, accumulate);
          break;
      }
    }
  }
}

#else

/// Without AVX2 and FMA: plain loops the compiler vectorizes over the panel's columns (B's columns
/// past `cols` taken as zero: they are not there to read when B is read where it lies).
void portable_tile(int rows, int64_t depth, const float* a, ALayout la, const float* b, BLayout lb, float* c,
                   int64_t ldc, int cols, const float* bias, bool accumulate,
                   const float* /*next_a: no prefetch here*/) {
  float acc[kPackRows][kPackCols];
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < kPackCols; ++j) {
      acc[r][j] = accumulate ? (j < cols ? c[r * ldc + j] : 0.0f) : bias ? bias[r] : 0.0f;
    }
  }
  for (int64_t p = 0; p < depth; ++p) {
    for (int r = 0; r < rows; ++r) {
      const float ar = a[r * la.row + p * la.step];
      for (int j = 0; j < kPackCols; ++j) acc[r][j] += ar * (j < cols ? b[p * lb.step + j] : 0.0f);
    }
  }
  for (int r = 0; r < rows; ++r) std::copy_n(acc[r], cols, c + r * ldc);
}

#endif

}  // namespace

void pack_a(int64_t m, int64_t k, const float* a, int64_t lda, int64_t block0, int64_t block1, float* packed) {
  for (int64_t blk = block0; blk < block1; ++blk) {
    float* dst = packed + blk * k * kPackRows;
    const int64_t i0 = blk * kPackRows;
    for (int64_t r = 0; r < kPackRows; ++r) {
      if (i0 + r < m) {
        const float* src = a + (i0 + r) * lda;
        for (int64_t p = 0; p < k; ++p) dst[p * kPackRows + r] = src[p];
      } else {
        for (int64_t p = 0; p < k; ++p) dst[p * kPackRows + r] = 0.0f;
      }
    }
  }
}

bool sgemm_uses_avx512() {
#ifdef VN_HAVE_SGEMM_AVX512
  // Asked of the CPU, not of the build machine: valgrind, for one, hides AVX-512.
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return avx512;
#else
  return false;
#endif
}

void detail::sgemm_packed_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                                   const float* packed_b, const float* bias, float* c, int64_t ldc) {
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, packed_b, 0, bias, c, ldc, portable_tile);
}

void detail::sgemm_direct_b_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                     int64_t ldb, const float* bias, float* c, int64_t ldc) {
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, b, ldb, bias, c, ldc, portable_tile);
}

namespace {

/// sgemm_packed (ldb 0) or sgemm_direct_b on the kernel this machine runs.
void sgemm_any_b(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                 const float* bias, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#ifdef VN_HAVE_SGEMM_AVX512
  if (sgemm_uses_avx512()) {
    vn_sgemm_packed_avx512(m, n, k, a, lda, b, ldb, bias, c, ldc);
    return;
  }
#endif
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, b, ldb, bias, c, ldc, portable_tile);
}

}  // namespace

void sgemm_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                  const float* bias, float* c, int64_t ldc) {
  sgemm_any_b(m, n, k, a, lda, packed_b, 0, bias, c, ldc);
}

void sgemm_direct_b(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                    const float* bias, float* c, int64_t ldc) {
  sgemm_any_b(m, n, k, a, lda, b, ldb, bias, c, ldc);
}

}  // namespace vn::ops
