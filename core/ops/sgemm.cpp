// SPDX-License-Identifier: Apache-2.0
#include "core/ops/sgemm.h"

#include <algorithm>
#include <array>
#include <utility>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "core/ops/sgemm_impl.h"

#ifdef VN_HAVE_SGEMM_AVX512
extern "C" void vn_sgemm_packed_avx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                       int64_t ldb, const float* bias, float* c, int64_t ldc,
                                       const vn::ops::TileFinish* finish);
#endif

namespace vn::ops {
namespace {

using sgemm_detail::ALayout;
using sgemm_detail::BLayout;

#if defined(__AVX2__) && defined(__FMA__)

/// Lanes [0, n) of an eight-float vector, as a mask for maskload/maskstore.
__m256i lanes_below(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// R rows x `cols` (<= 8V) columns of C over `depth` steps, in R x V eight-float accumulators
/// (at most 12 of the sixteen registers: 6 x 16 or 3 x 32; the rest hold B and a broadcast). A is
/// packed (rows 1 apart, steps kPackRows) or rows `lda` apart; B's steps are `ldb` apart, and when
/// Masked (B read where it lies, fewer than 8V columns left) only its `cols` columns are loaded.
/// Each element's sum is one chain of fused multiply-adds along k from its start, as in every
/// kernel of sgemm_packed, so the tile shape does not change a bit. Twelve independent chains
/// cover the multiply-add's latency on two pipes; the 4 x 16 tiles this replaced had eight and
/// ran a third of the machine's peak on Zen 3 (1024^3: 15.8 GFMA/s).
template <int R, int V, bool Packed, bool Masked>
void micro_tile(int64_t depth, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                int cols, const float* bias, bool accumulate, const float* next_a) {
  __m256i mask[V];
  for (int v = 0; v < V; ++v) mask[v] = lanes_below(cols - 8 * v);
  const bool full = cols == 8 * V;
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      if (!accumulate) {
        acc[r][v] = bias ? _mm256_set1_ps(bias[r]) : _mm256_setzero_ps();
      } else {
        acc[r][v] = full ? _mm256_loadu_ps(c + r * ldc + 8 * v) : _mm256_maskload_ps(c + r * ldc + 8 * v, mask[v]);
      }
    }
  }
  for (int64_t p = 0; p < depth; ++p) {
    // The next row block's A for the next 16 steps, as the AVX-512 kernel asks for it
    // (sgemm_impl.h). B's panel is left to the hardware prefetcher: asking for its lines ahead,
    // as the AVX-512 kernel does, cost Zen 3 4-20% (load slots).
    if (next_a != nullptr && p % 16 == 0) {
      for (int r = 0; r < kPackRows; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(Packed ? next_a + p * kPackRows + r * 16 : next_a + r * lda + p),
                     _MM_HINT_T0);
      }
    }
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = Masked ? _mm256_maskload_ps(b + 8 * v, mask[v]) : _mm256_loadu_ps(b + 8 * v);
    for (int r = 0; r < R; ++r) {
      const __m256 ar = _mm256_broadcast_ss(Packed ? a + r : a + r * lda);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(ar, bv[v], acc[r][v]);
    }
    a += Packed ? kPackRows : 1;
    b += ldb;
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      if (full) {
        _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
      } else {
        _mm256_maskstore_ps(c + r * ldc + 8 * v, mask[v], acc[r][v]);
      }
    }
  }
}

using MicroTile = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, int, const float*,
                           bool, const float*);

// Accumulators a micro-tile holds at most (of the sixteen registers; the rest hold B and A).
constexpr int kMostChains = 12;

/// micro_tile<R, V, Packed, Masked> for R = 1 to the sequence's length, at index R - 1.
template <int V, bool Packed, bool Masked, int... Rm1>
constexpr std::array<MicroTile, sizeof...(Rm1)> tiles_by_rows(std::integer_sequence<int, Rm1...>) {
  return {&micro_tile<Rm1 + 1, V, Packed, Masked>...};
}

/// micro_tile<rows, V> (rows from 1 to kMostChains / V) for the layouts at hand.
template <int V>
MicroTile pick(int rows, bool packed, bool masked) {
  static constexpr auto kRows = std::make_integer_sequence<int, kMostChains / V>();
  static constexpr std::array kTables = {tiles_by_rows<V, false, false>(kRows), tiles_by_rows<V, false, true>(kRows),
                                         tiles_by_rows<V, true, false>(kRows), tiles_by_rows<V, true, true>(kRows)};
  return kTables[static_cast<size_t>(2 * packed + masked)][static_cast<size_t>(rows - 1)];
}

/// micro_tile for R rows and V vectors: 1 vector for R = 1 to 12, 2 for R = 1 to 6, 4 for R <= 3.
MicroTile pick(int rows, int vectors, bool packed, bool masked) {
  switch (vectors) {
    case 1:
      return pick<1>(rows, packed, masked);
    case 2:
      return pick<2>(rows, packed, masked);
    default:
      return pick<4>(rows, packed, masked);
  }
}

/// A tile of up to kPackRows x kPackCols as micro-tiles: its rows in one group of up to six, or
/// two even groups (12 = 6 + 6, 8 = 4 + 4, 7 = 4 + 3: no group of one or two rows, whose few chains
/// would wait on the multiply-add's latency); a group of four or more rows takes the columns
/// sixteen at a time, each half of B's panel read from L2 once and again from L1 for the other
/// group; a group of three or fewer rows takes all 32 at once. A last chunk of at most 8 columns
/// (a 7 x 7 map's 49 = 32 + 16 + 1, a 14 x 14 map's 196 = 192 + 4) takes all the rows at once in
/// one vector each, rather than sixteen columns' multiply-adds for a few.
void portable_tile(int rows, int64_t depth, const float* a, ALayout la, const float* b, BLayout lb, float* c,
                   int64_t ldc, int cols, const float* bias, bool accumulate, const float* next_a) {
  const bool packed = la.step != 1;
  const int groups = rows > 6 ? 2 : 1;
  const int first = (rows + groups - 1) / groups;
  const int width = (first <= 3 ? 32 : 16);
  for (int c0 = 0; c0 < cols; c0 += width) {
    const int w = std::min(width, cols - c0);
    if (w <= 8) {
      pick(rows, 1, packed, lb.direct && w < 8)(depth, a, la.row, b + c0, lb.step, c + c0, ldc, w, bias, accumulate,
                                                c0 == 0 ? next_a : nullptr);
      continue;
    }
    const int vectors = w > 16 ? 4 : 2;
    for (int g = 0, r0 = 0; g < groups; ++g) {
      const int r = g == 0 ? first : rows - first;
      const MicroTile tile = pick(r, vectors, packed, lb.direct && w < 8 * vectors);
      tile(depth, a + r0 * la.row, la.row, b + c0, lb.step, c + r0 * ldc + c0, ldc, w, bias ? bias + r0 : nullptr,
           accumulate, c0 == 0 && g == 0 ? next_a : nullptr);
      r0 += r;
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

void detail::sgemm_packed_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                                   const float* bias, float* c, int64_t ldc, const TileFinish* finish) {
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, packed_b, 0, bias, c, ldc, portable_tile, finish);
}

void detail::sgemm_direct_b_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                     int64_t ldb, const float* bias, float* c, int64_t ldc, const TileFinish* finish) {
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, b, ldb, bias, c, ldc, portable_tile, finish);
}

namespace {

/// sgemm_packed (ldb 0) or sgemm_direct_b on the kernel this machine runs.
void sgemm_any_b(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                 const float* bias, float* c, int64_t ldc, const TileFinish* finish) {
  if (m <= 0 || n <= 0) return;
#ifdef VN_HAVE_SGEMM_AVX512
  if (sgemm_uses_avx512()) {
    vn_sgemm_packed_avx512(m, n, k, a, lda, b, ldb, bias, c, ldc, finish);
    return;
  }
#endif
  sgemm_detail::sgemm_blocked(m, n, k, a, lda, b, ldb, bias, c, ldc, portable_tile, finish);
}

}  // namespace

void sgemm_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                  const float* bias, float* c, int64_t ldc, const TileFinish* finish) {
  sgemm_any_b(m, n, k, a, lda, packed_b, 0, bias, c, ldc, finish);
}

void sgemm_direct_b(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                    const float* bias, float* c, int64_t ldc, const TileFinish* finish) {
  sgemm_any_b(m, n, k, a, lda, b, ldb, bias, c, ldc, finish);
}

}  // namespace vn::ops
