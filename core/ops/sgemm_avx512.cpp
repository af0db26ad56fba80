// SPDX-License-Identifier: Apache-2.0
// vn_sgemm_packed_avx512: sgemm_packed's AVX-512 kernel, the only code of Vernier built with
// AVX-512 (see sgemm.h). It lives in a shared library built with hidden visibility, so that the
// inline functions it shares with the rest of the program keep their AVX-512 instances to it.
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "core/ops/sgemm_impl.h"

namespace {

using vn::ops::kPackCols;
using vn::ops::kPackRows;
using vn::ops::sgemm_detail::ALayout;
using vn::ops::sgemm_detail::BLayout;

static_assert(kPackCols == 32, "a tile row is two 16-float vectors");
static_assert(kPackRows == 12, "any_tile covers one to twelve rows");

/// R rows x `cols` (<= 32) columns of C over `depth` steps: 2R accumulators (24 of the 32
/// registers at R = 12), two loads of B and R broadcasts of A per step for 2R fused multiply-adds
/// (R of each when Half: `cols` <= 16, the last panel of a plane whose width leaves it half
/// empty). A is packed, or rows `lda` apart; B's rows are `ldb` apart, and when Direct (B read
/// where it lies) only its `cols` columns are loaded.
template <int R, bool Packed, bool Half, bool Direct>
void tile(int64_t depth, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int cols,
          const float* bias, bool accumulate, const float* next_a) {
  const auto mask = [](int n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1); };
  const __mmask16 lo_mask = mask(cols), hi_mask = mask(cols - 16);
  __m512 lo[R], hi[R];
  for (int r = 0; r < R; ++r) {
    if (accumulate) {
      lo[r] = _mm512_maskz_loadu_ps(lo_mask, c + r * ldc);
      hi[r] = _mm512_maskz_loadu_ps(hi_mask, c + r * ldc + 16);
    } else {
      lo[r] = hi[r] = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
    }
  }
  for (int64_t p = 0; p < depth; ++p) {
    // Every 16 steps, the next block's A for the next 16 steps: a cache line of each of its rows,
    // or (packed) the 12 lines those steps fill (prefetches never fault: a last block of fewer
    // rows costs a few useless ones).
    if (next_a != nullptr && p % 16 == 0) {
      for (int r = 0; r < kPackRows; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(Packed ? next_a + p * kPackRows + r * 16 : next_a + r * lda + p),
                     _MM_HINT_T0);
      }
    }
    // B's panel comes from L2 (A's slice stays in L1 across a group's panels): its lines eight
    // steps ahead are asked for now (+5-8% on ResNet's and BERT's shapes, 1 KiB ahead as good
    // as 512 B or 2 KiB).
    const int64_t b_step = Direct ? ldb : kPackCols;
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * b_step), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * b_step + 16), _MM_HINT_T0);
    const __m512 b0 = Direct ? _mm512_maskz_loadu_ps(lo_mask, b) : _mm512_loadu_ps(b);
    const __m512 b1 = Half ? b0 : Direct ? _mm512_maskz_loadu_ps(hi_mask, b + 16) : _mm512_loadu_ps(b + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(Packed ? a[r] : a[r * lda]);
      lo[r] = _mm512_fmadd_ps(ar, b0, lo[r]);
      if (!Half) hi[r] = _mm512_fmadd_ps(ar, b1, hi[r]);
    }
    a += Packed ? kPackRows : 1;
    b += b_step;
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, lo_mask, lo[r]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, hi_mask, hi[r]);
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, int, const float*, bool,
                        const float*);

/// tile<R> for R = 1 to kPackRows, at index R - 1.
template <bool Packed, bool Half, bool Direct, int... Rm1>
constexpr std::array<TileFn, sizeof...(Rm1)> tiles_by_rows(std::integer_sequence<int, Rm1...>) {
  return {&tile<Rm1 + 1, Packed, Half, Direct>...};
}

/// tile<rows> (rows from 1 to kPackRows).
template <bool Packed, bool Half, bool Direct>
void rows_tile(int rows, int64_t depth, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
               int cols, const float* bias, bool accumulate, const float* next_a) {
  static constexpr auto kTiles = tiles_by_rows<Packed, Half, Direct>(std::make_integer_sequence<int, kPackRows>());
  kTiles[static_cast<size_t>(rows - 1)](depth, a, lda, b, ldb, c, ldc, cols, bias, accumulate, next_a);
}

template <bool Direct>
void layout_tile(int rows, int64_t depth, const float* a, ALayout layout, const float* b, int64_t ldb, float* c,
                 int64_t ldc, int cols, const float* bias, bool accumulate, const float* next_a) {
  const bool half = cols <= 16;
  if (layout.step == 1) {
    (half ? rows_tile<false, true, Direct> : rows_tile<false, false, Direct>)(rows, depth, a, layout.row, b, ldb, c,
                                                                              ldc, cols, bias, accumulate, next_a);
  } else {
    (half ? rows_tile<true, true, Direct> : rows_tile<true, false, Direct>)(rows, depth, a, 0, b, ldb, c, ldc, cols,
                                                                            bias, accumulate, next_a);
  }
}

void any_tile(int rows, int64_t depth, const float* a, ALayout layout, const float* b, BLayout b_layout, float* c,
              int64_t ldc, int cols, const float* bias, bool accumulate, const float* next_a) {
  (b_layout.direct ? layout_tile<true> : layout_tile<false>)(rows, depth, a, layout, b, b_layout.step, c, ldc, cols,
                                                             bias, accumulate, next_a);
}

}  // namespace

/// sgemm_packed (ldb 0) and sgemm_direct_b (B's rows ldb apart), sgemm.h.
extern "C" __attribute__((visibility("default"))) void vn_sgemm_packed_avx512(int64_t m, int64_t n, int64_t k,
                                                                              const float* a, int64_t lda,
                                                                              const float* b, int64_t ldb,
                                                                              const float* bias, float* c, int64_t ldc,
                                                                              const vn::ops::TileFinish* finish) {
  vn::ops::sgemm_detail::sgemm_blocked(m, n, k, a, lda, b, ldb, bias, c, ldc, any_tile, finish);
}
