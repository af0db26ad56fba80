// SPDX-License-Identifier: Apache-2.0
// igemm_packed on AVX2 without VNNI (igemm_avx2.h). vpmaddwd multiplies 16 pairs of int16 and adds
// each pair into an int32 lane: two products a sum, exact (|a·b| <= 2^14), and the int32 sums wrap
// rather than saturate, so C is exact whenever the true sum fits (igemm.h). On Zen 3 a tile of 6
// rows by 16 columns sums 1.6 times the products a float32 FMA tile does in the same time.
#include "core/ops/igemm_avx2.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/ops/igemm.h"
#include "core/ops/scratch.h"

namespace vn::ops::detail {
namespace {

constexpr int kRows = 6;                              // rows of A per tile
constexpr int64_t kChunkRows = 8 * kRows;             // rows of A widened at once
constexpr int kHalf = 16;                             // columns per tile: half a panel
constexpr int64_t kPairBytes = 4 * kInt8PackCols;     // one pair of rows of a panel
constexpr int64_t kHalfBytes = kPairBytes / 2;        // one pair of rows of half a panel

#if defined(__AVX2__)
/// R rows x `cols` (<= 16) columns of C over all `pairs` pairs of depth: per pair, two loads of B,
/// R broadcasts of A's pair (two int16 as one int32), 2R vpmaddwd.
template <int R>
void tile(int64_t pairs, const int16_t* a, int64_t lda, const uint8_t* b, int32_t* c, int64_t ldc, int cols) {
  // Every loop over the rows unrolled, so that the sums stay in registers.
  __m256i lo[R], hi[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
  for (int64_t p = 0; p < pairs; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32));
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      int32_t pair;  // two int16 of A's row, as vpmaddwd pairs them
      std::memcpy(&pair, a + r * lda + 2 * p, sizeof(pair));
      const __m256i ar = _mm256_set1_epi32(pair);
      lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(ar, b0));
      hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(ar, b1));
    }
    b += kPairBytes;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    int32_t* row = c + r * ldc;
    if (cols == kHalf) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), lo[r]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 8), hi[r]);
    } else {
      alignas(32) int32_t sums[kHalf];
      _mm256_store_si256(reinterpret_cast<__m256i*>(sums), lo[r]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8), hi[r]);
      std::copy_n(sums, cols, row);
    }
  }
}

void rows_tile(int rows, int64_t pairs, const int16_t* a, int64_t lda, const uint8_t* b, int32_t* c, int64_t ldc,
               int cols) {
  switch (rows) {
    case 6:
      return tile<6>(pairs, a, lda, b, c, ldc, cols);
    case 5:
      return tile<5>(pairs, a, lda, b, c, ldc, cols);
    case 4:
      return tile<4>(pairs, a, lda, b, c, ldc, cols);
    case 3:
      return tile<3>(pairs, a, lda, b, c, ldc, cols);
    case 2:
      return tile<2>(pairs, a, lda, b, c, ldc, cols);
    default:
      return tile<1>(pairs, a, lda, b, c, ldc, cols);
  }
}
#endif

}  // namespace

void pack_int16_panel(int64_t k, const int8_t* b, int64_t ldb, int cols, uint8_t* dst) {
  auto* out = reinterpret_cast<int16_t*>(dst);
  for (int64_t p = 0; p < (k + 1) / 2; ++p) {
    const int8_t* r0 = b + 2 * p * ldb;
    const int8_t* r1 = 2 * p + 1 < k ? r0 + ldb : nullptr;
    int16_t* pair = out + p * 2 * kInt8PackCols;
#if defined(__AVX2__)
    if (cols == kInt8PackCols && r1 != nullptr) {
      // Eight columns at a time: both rows widened to int16, interleaved column by column.
      for (int j = 0; j < kInt8PackCols; j += 8) {
        const __m128i w0 = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + j)));
        const __m128i w1 = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1 + j)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(pair + 2 * j), _mm_unpacklo_epi16(w0, w1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(pair + 2 * j + 8), _mm_unpackhi_epi16(w0, w1));
      }
      continue;
    }
#endif
    for (int j = 0; j < kInt8PackCols; ++j) {
      pair[2 * j] = j < cols ? r0[j] : int16_t{0};
      pair[2 * j + 1] = j < cols && r1 != nullptr ? r1[j] : int16_t{0};
    }
  }
}

void igemm_avx2(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b, int32_t* c,
                int64_t ldc) {
#if defined(__AVX2__)
  // A's rows widened to int16 a chunk at a time, each chunk for all the columns: each pair of a
  // row is one int32 to broadcast (a row of odd k ends with a zero). A chunk stays in cache while
  // the half panels of B pass, each half panel in L1 while the chunk's tiles read it; all of A
  // widened at once (3136 x 768 in a MatMul of ViT-B/16's: 4.8 MB) left the cache and was a fresh
  // buffer at every call.
  const int64_t pairs = (k + 1) / 2;
  const int64_t panel = int8_panel_bytes(k);
  const int64_t width = 2 * pairs;  // int16 of a widened row
  Scratch<int16_t> wide(static_cast<size_t>(std::min<int64_t>(m, kChunkRows) * width), ScratchSlot::kGemmA);
  for (int64_t i0 = 0; i0 < m; i0 += kChunkRows) {
    const int64_t rows = std::min(kChunkRows, m - i0);
    for (int64_t i = 0; i < rows; ++i) {
      int16_t* row = wide.data() + i * width;
      const int8_t* src = a + (i0 + i) * lda;
      int64_t p = 0;
      for (; p + 16 <= k; p += 16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + p),
                            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + p))));
      }
      for (; p < k; ++p) row[p] = src[p];
      if (k % 2 != 0) row[k] = 0;
    }
    for (int64_t j = 0; j < n; j += kHalf) {
      const uint8_t* b = packed_b + j / kInt8PackCols * panel + j % kInt8PackCols / kHalf * kHalfBytes;
      const int cols = static_cast<int>(std::min<int64_t>(kHalf, n - j));
      for (int64_t i = 0; i < rows; i += kRows) {
        rows_tile(static_cast<int>(std::min<int64_t>(kRows, rows - i)), pairs, wide.data() + i * width, width, b,
                  c + (i0 + i) * ldc + j, ldc, cols);
      }
    }
  }
#else
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)packed_b, (void)c, (void)ldc;
#endif
}

}  // namespace vn::ops::detail
