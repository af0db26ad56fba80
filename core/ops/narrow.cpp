// SPDX-License-Identifier: Apache-2.0
#include "core/ops/narrow.h"

#include <Eigen/Core>
#include <bit>

#if defined(__F16C__) && defined(__AVX2__)
#include <immintrin.h>
#endif

namespace vn::ops {

std::string_view narrow_name(Narrow format) {
  switch (format) {
    case Narrow::kFloat16:
      return "float16";
    case Narrow::kBFloat16:
      return "bfloat16";
    case Narrow::kNone:
      break;
  }
  return "none";
}

void widen(Narrow format, const uint16_t* in, int64_t count, float* out) {
  int64_t i = 0;
  if (format == Narrow::kFloat16) {
#if defined(__F16C__) && defined(__AVX2__)
    for (; i + 8 <= count; i += 8) {
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    }
#endif
    for (; i < count; ++i) out[i] = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(in[i]));
    return;
  }
#if defined(__AVX2__)
  // bfloat16 is the upper half of a float32: zero-extended and shifted into place.
  for (; i + 8 <= count; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(wide, 16));
  }
#endif
  for (; i < count; ++i) out[i] = std::bit_cast<float>(static_cast<uint32_t>(in[i]) << 16);
}

void narrow(Narrow format, const float* in, int64_t count, uint16_t* out) {
  int64_t i = 0;
  if (format == Narrow::kFloat16) {
#if defined(__F16C__) && defined(__AVX2__)
    // The hardware conversion rounds as Eigen::half does (engine/precision.cpp's round_in_place).
    for (; i + 8 <= count; i += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                       _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    }
#endif
    for (; i < count; ++i) out[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::half(in[i]));
    return;
  }
  for (; i < count; ++i) out[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(in[i]));
}

}  // namespace vn::ops
