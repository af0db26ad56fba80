// SPDX-License-Identifier: Apache-2.0
#include "core/ops/igemm.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/ops/igemm_avx2.h"
#include "core/ops/kernel_util.h"

#ifdef VN_HAVE_SGEMM_AVX512
extern "C" void vn_igemm_vnni(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int32_t* offsets,
                              const uint8_t* packed_b, int32_t* c, int64_t ldc);
#endif

namespace vn::ops {
namespace {

constexpr int64_t kGroupBytes = 4 * kInt8PackCols;
constexpr int64_t kRowBlock = 12;  // the kernel's rows per tile

/// One group (4 rows r0.. of B, 32 columns j0..) into its 128 bytes, each byte offset by 128.
void pack_group(const int8_t* b, int64_t ldb, int rows, int cols, uint8_t* dst) {
#if defined(__SSE2__)
  if (rows == 4 && cols == kInt8PackCols) {
    const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
    for (int h = 0; h < 2; ++h) {
      const auto row = [&](int q) {
        return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + q * ldb + 16 * h)), flip);
      };
      const __m128i r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
      // Bytes of rows 0/1 and 2/3 paired by column, then the pairs joined: 4 bytes per column.
      const __m128i t0 = _mm_unpacklo_epi8(r0, r1), t1 = _mm_unpackhi_epi8(r0, r1);
      const __m128i t2 = _mm_unpacklo_epi8(r2, r3), t3 = _mm_unpackhi_epi8(r2, r3);
      __m128i* out = reinterpret_cast<__m128i*>(dst + 64 * h);
      _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(t0, t2));
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(t0, t2));
      _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(t1, t3));
      _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(t1, t3));
    }
    return;
  }
#endif
  for (int col = 0; col < kInt8PackCols; ++col) {
    for (int q = 0; q < 4; ++q) {
      dst[col * 4 + q] =
          q < rows && col < cols ? static_cast<uint8_t>(static_cast<uint8_t>(b[q * ldb + col]) ^ 0x80u) : uint8_t{0};
    }
  }
}

}  // namespace

void pack_int8_b(int64_t k, int64_t n, const int8_t* b, int64_t ldb, uint8_t* packed, int threads) {
  const int64_t panels = (n + kInt8PackCols - 1) / kInt8PackCols, groups = (k + 3) / 4;
  const int64_t panel_bytes = int8_panel_bytes(k);
  const bool vnni = igemm_uses_vnni();
  // Packing moves a byte per element: the grain is the product's, in bytes.
  parallel_for(threads_for_work(threads, k * n, kProductGrain), panels, [&](int64_t p) {
    const int64_t j0 = p * kInt8PackCols;
    const int cols = static_cast<int>(std::min(kInt8PackCols, n - j0));
    if (!vnni) return detail::pack_int16_panel(k, b + j0, ldb, cols, packed + p * panel_bytes);
    for (int64_t g = 0; g < groups; ++g) {
      pack_group(b + 4 * g * ldb + j0, ldb, static_cast<int>(std::min<int64_t>(4, k - 4 * g)), cols,
                 packed + p * panel_bytes + g * kGroupBytes);
    }
  });
}

void int8_row_offsets(int64_t m, int64_t k, const int8_t* a, int64_t lda, int32_t* offsets) {
  for (int64_t i = 0; i < m; ++i) {
    int32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p];
    offsets[i] = 128 * sum;
  }
}

bool igemm_uses_vnni() {
#ifdef VN_HAVE_SGEMM_AVX512
  static const bool vnni =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  return vnni;
#else
  return false;
#endif
}

bool igemm_available() {
#if defined(__AVX2__)
  return true;
#else
  return igemm_uses_vnni();
#endif
}

int64_t int8_panel_bytes(int64_t k) {
  return igemm_uses_vnni() ? (k + 3) / 4 * 4 * kInt8PackCols : (k + 1) / 2 * 2 * 2 * kInt8PackCols;
}

void igemm_packed(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const int32_t* offsets,
                  const uint8_t* packed_b, int32_t* c, int64_t ldc, int threads, const Int8Finish* finish) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0);
    if (finish != nullptr) (*finish)(0, m, 0, n);
    return;
  }
  const bool vnni = igemm_uses_vnni();
  // igemm_packed on one thread over rows and columns of C (B's panels from the first column's).
  const auto kernel = [&](int64_t rows, int64_t cols, const int8_t* a_rows, const int32_t* row_offsets,
                          const uint8_t* b_panels, int32_t* c_block) {
#ifdef VN_HAVE_SGEMM_AVX512
    if (vnni) return vn_igemm_vnni(rows, cols, k, a_rows, lda, row_offsets, b_panels, c_block, ldc);
#endif
    // The int16 layout holds B's bytes as they are: no offsets to take back.
    (void)row_offsets;
    detail::igemm_avx2(rows, cols, k, a_rows, lda, b_panels, c_block, ldc);
  };
  const int64_t panels = (n + kInt8PackCols - 1) / kInt8PackCols, blocks = (m + kRowBlock - 1) / kRowBlock;
  // One vpdpbusd does 64 products, four times a float FMA's 16, and vpmaddwd 16 products and their
  // sum in two instructions: the grain is four or two times the float one's.
  const int team = threads_for_work(threads, m * n * k, (vnni ? 4 : 2) * kProductGrain);
  if (team == 1 && finish == nullptr) return kernel(m, n, a, offsets, packed_b, c);
  // Tasks of a run of panels (up to 8: a block of C that stays in cache for `finish`) and a run of
  // row blocks, about four per thread; a thread's consecutive tasks share their rows of A.
  const int64_t group = std::clamp<int64_t>(panels / (4 * team), 1, 8);
  const int64_t groups = (panels + group - 1) / group;
  const int64_t chunks = std::clamp<int64_t>((4 * team + groups - 1) / groups, 1, blocks);
  const int64_t panel_bytes = int8_panel_bytes(k);
  parallel_for(team, chunks * groups, [&](int64_t t) {
    const int64_t chunk = t / groups, first = t % groups * group;
    const int64_t i0 = blocks * chunk / chunks * kRowBlock, i1 = std::min(m, blocks * (chunk + 1) / chunks * kRowBlock);
    const int64_t j0 = first * kInt8PackCols, j1 = std::min(n, (first + group) * kInt8PackCols);
    // Offsets are null where the layout needs none (AVX2): no arithmetic on a null pointer.
    kernel(i1 - i0, j1 - j0, a + i0 * lda, offsets != nullptr ? offsets + i0 : nullptr, packed_b + first * panel_bytes,
           c + i0 * ldc + j0);
    if (finish != nullptr) (*finish)(i0, i1, j0, j1);
  });
}

}  // namespace vn::ops
