// SPDX-License-Identifier: Apache-2.0
// The exact int8 matrix product of the engine's int8 tactics: C (int32) = A (int8) · B (int8),
// every product and sum exact in int32 (the true sum must fit in int32: k up to 2^17 always does).
//
// Two kernels, one chosen per machine (igemm_uses_vnni), each with its layout of packed B:
// - AVX-512 VNNI (vpdpbusd: 64 byte products summed into 16 int32 lanes per instruction), in the
//   AVX-512 library of the float kernel (sgemm.h says why that is a library of its own).
//   vpdpbusd multiplies unsigned bytes by signed ones, so B is packed offset by 128 (b + 128 is an
//   unsigned byte) and each row of C starts from -128 times its row of A's sum:
//   sum a·(b + 128) - 128·sum a = sum a·b.
// - AVX2 (vpmaddwd: 16 products of int16 pairs, each pair summed into an int32 lane), for machines
//   without VNNI: B is packed as int16 pairs, A widened to int16 as the product reads it.
// Their int32 sums wrap rather than saturate, so the result is exact whenever the true sum fits,
// whatever the intermediate values.
#pragma once

#include <cstdint>
#include <functional>

namespace vn::ops {

/// Columns of B per packed int8 panel. B (k x n) is packed in panels of kInt8PackCols columns,
/// panel p starting at packed + p * int8_panel_bytes(k); rows past k and columns past n hold 0.
/// With VNNI a panel holds ceil(k / 4) groups of 4 rows, a group storing the 4 bytes of its column
/// 0, then those of column 1, ... (kInt8PackCols * 4 bytes), each byte b + 128 as unsigned. On
/// AVX2 it holds ceil(k / 2) pairs of rows, a pair storing its two values of column 0 as int16,
/// then those of column 1, ... (kInt8PackCols * 4 bytes).
inline constexpr int64_t kInt8PackCols = 32;

/// Whether the VNNI kernel and layout are used: the AVX-512 library was built and the CPU has
/// AVX-512 VNNI (asked of the CPU at run time).
bool igemm_uses_vnni();

/// Bytes of one packed panel for depth k, in this machine's layout.
int64_t int8_panel_bytes(int64_t k);
/// Bytes of packed B for k x n.
inline int64_t packed_int8_b_size(int64_t k, int64_t n) {
  return (n + kInt8PackCols - 1) / kInt8PackCols * int8_panel_bytes(k);
}

/// Packs B (k x n int8, rows ldb apart) as above into `packed` (packed_int8_b_size(k, n) bytes),
/// on up to `threads` threads.
void pack_int8_b(int64_t k, int64_t n, const int8_t* b, int64_t ldb, uint8_t* packed, int threads = 1);

/// offsets[i] = 128 * (sum of row i of A), for the m rows of A (m x k, rows lda apart): what
/// igemm_packed subtracts from row i of C with VNNI (the AVX2 layout needs none). Computed once
/// for a constant A.
void int8_row_offsets(int64_t m, int64_t k, const int8_t* a, int64_t lda, int32_t* offsets);

/// Whether igemm_packed can run here: VNNI, or AVX2 (in the build). Where it cannot, callers
/// compute their int8 products another exact way.
bool igemm_available();

/// Called on each block of C (rows [i0, i1), columns [j0, j1)) as soon as it is complete, on the
/// thread that computed it, while the block is in that thread's cache. Blocks do not overlap.
using Int8Finish = std::function<void(int64_t i0, int64_t i1, int64_t j0, int64_t j1)>;

/// C (m x n int32, rows ldc apart) = A (m x k int8, rows lda apart) · B (packed by pack_int8_b),
/// exactly; offsets are int8_row_offsets of A (with VNNI; may be null otherwise). C is overwritten. On up to `threads`
/// threads; the result does not depend on their number. `finish`, when given, runs on every block of C (a caller
/// rescales the sums into its output there). Only where igemm_available().
void igemm_packed(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int32_t* offsets,
                  const uint8_t* packed_b, int32_t* c, int64_t ldc, int threads = 1,
                  const Int8Finish* finish = nullptr);

}  // namespace vn::ops
