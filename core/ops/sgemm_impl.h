// SPDX-License-Identifier: Apache-2.0
// The blocking of sgemm_packed around a micro-kernel, shared by the AVX-512 library and the
// portable build (each compiles it for its own instruction set; see sgemm.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/ops/sgemm.h"

namespace vn::ops::sgemm_detail {

// The depth of one pass over k: a tile's slices of A (12 rows) and of B (32 columns) at this
// depth, 12 and 32 KiB, fit L1 together. Depths of 128, 192 and 384 were no better.
inline constexpr int64_t kMaxDepth = 256;

// Bytes of B's depth slice that one sweep over the row blocks covers: the panels of a group stay
// in L2 while each row block runs across all of them, so that a row block's slice of A is read
// once from L2 per group and C is written along its rows rather than down a column of panels.
// Against a panel at a time down all rows (1 thread, ResNet, Whisper and BERT shapes): 1504 x 1500
// x 64 38 -> 70 GFMA/s, 256 x 3136 x 64 42 -> 72, 1504 x 384 x 1536 62 -> 77, 200 x 2304 x 768
// 71 -> 76; 1 MiB groups were no better, and only 1024 x 196 x 256 lost (82 -> 74).
inline constexpr int64_t kGroupBytes = int64_t{512} << 10;

/// A's element (r, p) of a micro-tile is a[r * row + p * step]: row 1 and step kPackRows when
/// packed, row lda and step 1 when read where it lies.
struct ALayout {
  int64_t row, step;
};

/// B's element (p, j) of a micro-tile is b[p * step + j]: step kPackCols in a packed panel (whose
/// columns past n are zero), or ldb when B is read where it lies (`direct`: its columns past the
/// tile's are not there to read).
struct BLayout {
  int64_t step;
  bool direct;
};

/// C = A * B (+ bias) with B packed (ldb 0) or rows ldb apart, one micro-tile (up to kPackRows x
/// kPackCols) at a time: `tile(rows, depth, a, a_layout, b, b_layout, c, ldc, cols, bias,
/// accumulate, next_a)` computes a rows x cols tile of C over `depth` steps of k, starting from C
/// itself when `accumulate`, else from the bias (or zero). In the last pass over k, `finish` (when
/// given) gets each row block's columns of a group once its tiles are done. Each element's sum is
/// the same, in the same order, whichever layout B has. The first tile of each row block gets in
/// next_a the same slice of the next block's rows (else null; rows lda apart, or packed), for the
/// tile to prefetch while it works: weights used for few columns (a 7 x 7 map's 49) come from
/// memory in a block's short strided runs, which the hardware prefetcher barely starts on
/// (EfficientNetV2-S's 1536 x 256 1x1 convolution: 0.39 ms with its weights in cache, 0.6 in the
/// network); packed weights kept from run to run come from memory too (ResNet-50's deep layers: 4%
/// of its run without the prefetch).
template <typename Tile>
void sgemm_blocked(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                   const float* bias, float* c, int64_t ldc, Tile tile, const TileFinish* finish) {
  const ALayout layout = lda == 0 ? ALayout{1, kPackRows} : ALayout{lda, 1};
  const BLayout b_layout = ldb == 0 ? BLayout{kPackCols, false} : BLayout{ldb, true};
  // Passes of even depth: 576 = 3 x 192 rather than 256 + 256 + 64.
  const int64_t passes = std::max<int64_t>((k + kMaxDepth - 1) / kMaxDepth, 1);
  const int64_t depth = (k + passes - 1) / passes;
  const int64_t blocks = (m + kPackRows - 1) / kPackRows;
  int64_t p0 = 0;
  do {  // once when k is 0: C is the bias
    const int64_t d = std::min(depth, k - p0);
    const bool accumulate = p0 > 0;
    const bool last = p0 + d >= k;
    const int64_t group =
        std::max<int64_t>(kGroupBytes / (std::max<int64_t>(d, 1) * kPackCols * int64_t{sizeof(float)}), 1) * kPackCols;
    for (int64_t g0 = 0; g0 < n; g0 += group) {
      const int64_t g1 = std::min(n, g0 + group);
      for (int64_t blk = 0; blk < blocks; ++blk) {
        // Packed A comes in blocks of kPackRows rows; A read where it lies is cut into blocks as
        // even as can be, none over kPackRows rows: a last block of a few rows (ViT's 197 = 16 x
        // 12 + 5) reads as much of B for a fraction of the multiply-adds.
        const int64_t i = lda == 0 ? blk * kPackRows : blk * m / blocks;
        const int rows = static_cast<int>(lda == 0 ? std::min(kPackRows, m - i) : (blk + 1) * m / blocks - i);
        // Block i / kPackRows starts i * k floats into packed A.
        const float* a0 = lda == 0 ? a + i * k + p0 * kPackRows : a + i * lda + p0;
        const float* next_a = i + rows >= m ? nullptr : lda != 0 ? a0 + rows * lda : a0 + kPackRows * k;
        for (int64_t j = g0; j < g1; j += kPackCols) {
          const int cols = static_cast<int>(std::min(kPackCols, n - j));
          const float* b0 = ldb == 0 ? b + j * k + p0 * kPackCols : b + p0 * ldb + j;
          tile(rows, d, a0, layout, b0, b_layout, c + i * ldc + j, ldc, cols, bias && !accumulate ? bias + i : nullptr,
               accumulate, j == g0 ? next_a : nullptr);
        }
        if (last && finish != nullptr) finish->fn(finish->context, i, rows, g0, g1 - g0);
      }
    }
    p0 += depth;
  } while (p0 < k);
}

}  // namespace vn::ops::sgemm_detail
