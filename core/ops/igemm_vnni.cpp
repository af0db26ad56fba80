// SPDX-License-Identifier: Apache-2.0
// vn_igemm_vnni: igemm_packed's AVX-512 VNNI kernel (igemm.h), built into the AVX-512 library of
// the float kernel (sgemm_avx512.cpp) with VNNI enabled for this file alone.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/ops/igemm.h"

namespace {

using vn::ops::kInt8PackCols;

static_assert(kInt8PackCols == 32, "a tile row is two vectors of 16 int32 sums");

// Rows of A and columns of B in one tile; bytes of depth per block (B's 16 KiB of a panel stay in
// L1 while every row block of A reads them).
constexpr int kRows = 12;
constexpr int64_t kDepthBlock = 512;
constexpr int64_t kGroupBytes = 4 * kInt8PackCols;

/// int8_panel_bytes(k) in the VNNI layout (igemm.h), which this library cannot call.
constexpr int64_t panel_bytes(int64_t k) { return (k + 3) / 4 * kGroupBytes; }

inline __mmask16 lanes(int n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1); }

/// R rows x `cols` (<= 32; <= 16 when Half) columns of C over depth [p0, p1) (multiples of 4;
/// p1 past k only by k's last partial group). C starts from -offsets (the first depth block) or
/// from what it holds. Per group of 4: two loads of B, R broadcasts of 4 bytes of A, 2R vpdpbusd.
template <int R, bool Half>
void tile(int64_t p0, int64_t p1, int64_t k, const int8_t* a, int64_t lda, const uint8_t* b, int32_t* c, int64_t ldc,
          int cols, const int32_t* offsets) {
  const __mmask16 lo_mask = lanes(cols), hi_mask = lanes(cols - 16);
  __m512i lo[R], hi[R];
  for (int r = 0; r < R; ++r) {
    if (offsets != nullptr) {
      lo[r] = hi[r] = _mm512_set1_epi32(-offsets[r]);
    } else {
      lo[r] = _mm512_maskz_loadu_epi32(lo_mask, c + r * ldc);
      hi[r] = _mm512_maskz_loadu_epi32(hi_mask, c + r * ldc + 16);
    }
  }
  const int64_t full = std::min(p1, k & ~int64_t{3});
  int64_t p = p0;
  for (; p < full; p += 4) {
    // B's panel comes from L2 on the first row block: its lines eight groups ahead now.
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kGroupBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kGroupBytes + 64), _MM_HINT_T0);
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = Half ? b0 : _mm512_loadu_si512(b + 64);
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * lda + p, 4);
      const __m512i ar = _mm512_set1_epi32(quad);
      lo[r] = _mm512_dpbusd_epi32(lo[r], b0, ar);
      if (!Half) hi[r] = _mm512_dpbusd_epi32(hi[r], b1, ar);
    }
    b += kGroupBytes;
  }
  if (p < p1) {
    // k's last k % 4 rows: A's bytes past k (past its row, maybe past its buffer) are not read,
    // they count as 0.
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = Half ? b0 : _mm512_loadu_si512(b + 64);
    for (int r = 0; r < R; ++r) {
      int32_t quad = 0;
      std::memcpy(&quad, a + r * lda + p, static_cast<size_t>(k - p));
      const __m512i ar = _mm512_set1_epi32(quad);
      lo[r] = _mm512_dpbusd_epi32(lo[r], b0, ar);
      if (!Half) hi[r] = _mm512_dpbusd_epi32(hi[r], b1, ar);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_epi32(c + r * ldc, lo_mask, lo[r]);
    if (!Half) _mm512_mask_storeu_epi32(c + r * ldc + 16, hi_mask, hi[r]);
  }
}

template <bool Half>
void rows_tile(int rows, int64_t p0, int64_t p1, int64_t k, const int8_t* a, int64_t lda, const uint8_t* b, int32_t* c,
               int64_t ldc, int cols, const int32_t* offsets) {
  switch (rows) {
    case 12:
      return tile<12, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 11:
      return tile<11, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 10:
      return tile<10, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 9:
      return tile<9, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 8:
      return tile<8, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 7:
      return tile<7, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 6:
      return tile<6, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 5:
      return tile<5, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 4:
      return tile<4, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 3:
      return tile<3, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    case 2:
      return tile<2, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
    default:
      return tile<1, Half>(p0, p1, k, a, lda, b, c, ldc, cols, offsets);
  }
}

}  // namespace

/// igemm_packed on one thread, for k >= 1 and B's panels from the first of these n columns.
extern "C" __attribute__((visibility("default"))) void vn_igemm_vnni(int64_t m, int64_t n, int64_t k, const int8_t* a,
                                                                     int64_t lda, const int32_t* offsets,
                                                                     const uint8_t* packed_b, int32_t* c, int64_t ldc) {
  const int64_t depth = (k + 3) / 4 * 4, panel = panel_bytes(k);
  for (int64_t p0 = 0; p0 < depth; p0 += kDepthBlock) {
    const int64_t p1 = std::min(depth, p0 + kDepthBlock);
    for (int64_t j = 0; j < n; j += kInt8PackCols) {
      const uint8_t* b = packed_b + j / kInt8PackCols * panel + p0 / 4 * kGroupBytes;
      const int cols = static_cast<int>(std::min(kInt8PackCols, n - j));
      for (int64_t i = 0; i < m; i += kRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kRows, m - i));
        (cols <= 16 ? rows_tile<true> : rows_tile<false>)(rows, p0, p1, k, a + i * lda, lda, b, c + i * ldc + j, ldc,
                                                          cols, p0 == 0 ? offsets + i : nullptr);
      }
    }
  }
}
