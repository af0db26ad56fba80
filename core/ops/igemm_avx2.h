// SPDX-License-Identifier: Apache-2.0
// igemm_packed's kernel on AVX2 machines without VNNI (igemm.h): B packed as int16 pairs, summed
// by vpmaddwd. Internal to core/ops (igemm.cpp).
#pragma once

#include <cstdint>

namespace vn::ops::detail {

/// Packs one panel (kInt8PackCols columns j0.. of B, `cols` of them real) in igemm.h's int16
/// pair layout into `dst` (int8_panel_bytes(k) bytes).
void pack_int16_panel(int64_t k, const int8_t* b, int64_t ldb, int cols, uint8_t* dst);

/// C (m x n int32, rows ldc apart) = A (m x k int8, rows lda apart) · B (packed panels in the int16
/// pair layout, from the first of these n columns), exactly, on the calling thread; k >= 1.
void igemm_avx2(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b, int32_t* c,
                int64_t ldc);

}  // namespace vn::ops::detail
