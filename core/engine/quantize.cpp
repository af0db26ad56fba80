// SPDX-License-Identifier: Apache-2.0
#include "core/engine/quantize.h"

#include <algorithm>
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace vn::engine {

float scale_from_amax(double amax) {
  if (!(amax > 0) || !std::isfinite(amax)) return 1.0f / static_cast<float>(kInt8Max);
  return static_cast<float>(amax / kInt8Max);
}

namespace {

#if defined(__AVX2__)
/// Division by a scale, eight values at a time. A division costs several multiplications, so when
/// 1 / scale is a normal float the quotients are taken as products by it, which differ from them
/// by at most 2^-23 of their magnitude (two roundings and the reciprocal's): below 256 that is
/// under 2^-15, so a product more than 2^-12 away from any half-integer rounds to the integer the
/// quotient rounds to. Eight products of which one lies closer (about one value in 2000) are
/// divided after all; larger magnitudes saturate either way. The integers are quantize_value's.
struct Divisor {
  explicit Divisor(float scale)
      : scale(_mm256_set1_ps(scale)),
        recip(_mm256_set1_ps(1.0f / scale)),
        by_product(std::isnormal(scale) && std::isnormal(1.0f / scale)) {}
  __m256 scale, recip;
  bool by_product;
};

/// quantize_value of eight values, as floats: the same division, rounding to nearest even
/// (nearbyint's default mode), NaN to 0, saturation, and -0 as 0 (the integer has no sign).
inline __m256 quantize8(const float* x, const Divisor& d) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m256 v = _mm256_loadu_ps(x);
  __m256 q;
  bool divide = !d.by_product;
  if (d.by_product) {
    const __m256 y = _mm256_mul_ps(v, d.recip);
    q = _mm256_round_ps(y, kNearest);
    // |y - q| is at most 1/2. NaN and infinity make it NaN, which compares unordered: they take
    // the division too, so that only it needs to turn NaN into 0.
    const __m256 off = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(y, q));
    divide = _mm256_movemask_ps(_mm256_cmp_ps(off, _mm256_set1_ps(0.5f - 0x1p-12f), _CMP_NLE_UQ)) != 0;
  }
  if (divide) {
    q = _mm256_round_ps(_mm256_div_ps(v, d.scale), kNearest);
    q = _mm256_and_ps(q, _mm256_cmp_ps(q, q, _CMP_ORD_Q));
  }
  q = _mm256_min_ps(_mm256_max_ps(q, _mm256_set1_ps(kInt8Min)), _mm256_set1_ps(kInt8Max));
  return _mm256_add_ps(q, _mm256_setzero_ps());
}
#endif

}  // namespace

void fake_quantize_in_place(std::span<float> values, float scale) {
  size_t i = 0;
#if defined(__AVX2__)
  const Divisor d(scale);
  for (; i + 8 <= values.size(); i += 8) _mm256_storeu_ps(&values[i], _mm256_mul_ps(d.scale, quantize8(&values[i], d)));
#endif
  for (; i < values.size(); ++i) values[i] = scale * static_cast<float>(quantize_value(values[i], scale));
}

void quantize_to_int8(std::span<const float> values, float scale, int8_t* out) {
  size_t i = 0;
#if defined(__AVX2__)
  const Divisor s(scale);
  // 32 at a time: the four vectors of integers (already within int8) narrowed by two saturating
  // packs, which interleave 128-bit lanes; the permutation puts the bytes back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (; i + 32 <= values.size(); i += 32) {
    const __m256i q0 = _mm256_cvtps_epi32(quantize8(&values[i], s));
    const __m256i q1 = _mm256_cvtps_epi32(quantize8(&values[i + 8], s));
    const __m256i q2 = _mm256_cvtps_epi32(quantize8(&values[i + 16], s));
    const __m256i q3 = _mm256_cvtps_epi32(quantize8(&values[i + 24], s));
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  alignas(32) int32_t q[8];
  for (; i + 8 <= values.size(); i += 8) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(q), _mm256_cvtps_epi32(quantize8(&values[i], s)));
    for (int l = 0; l < 8; ++l) out[i + static_cast<size_t>(l)] = static_cast<int8_t>(q[l]);
  }
#endif
  for (; i < values.size(); ++i) out[i] = static_cast<int8_t>(quantize_value(values[i], scale));
}

void quantize_to_float(std::span<const float> values, float scale, float* out) {
  size_t i = 0;
#if defined(__AVX2__)
  const Divisor s(scale);
  for (; i + 8 <= values.size(); i += 8) _mm256_storeu_ps(out + i, quantize8(&values[i], s));
#endif
  for (; i < values.size(); ++i) out[i] = static_cast<float>(quantize_value(values[i], scale));
}

void grid_to_float(std::span<const float> values, float scale, float* out) {
  const float recip = 1.0f / scale;
  if (!std::isnormal(scale) || !std::isnormal(recip)) return quantize_to_float(values, scale, out);
  size_t i = 0;
#if defined(__AVX2__)
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m256 r = _mm256_set1_ps(recip);
  const __m256 lo = _mm256_set1_ps(kInt8Min), hi = _mm256_set1_ps(kInt8Max);
  // The clamp keeps the integers of grid values that overflowed to infinity (127 times a scale
  // near FLT_MAX / 127); + 0 turns -0 into 0, as the integer 0 converts.
  for (; i + 8 <= values.size(); i += 8) {
    const __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(&values[i]), r), kNearest);
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_min_ps(_mm256_max_ps(q, lo), hi), _mm256_setzero_ps()));
  }
#endif
  for (; i < values.size(); ++i) {
    out[i] = std::clamp(std::nearbyint(values[i] * recip), static_cast<float>(kInt8Min), static_cast<float>(kInt8Max)) +
             0.0f;
  }
}

std::vector<float> per_channel_scales(std::span<const double> weights, int64_t channels) {
  std::vector<float> scales(static_cast<size_t>(channels));
  const size_t per_channel = channels > 0 ? weights.size() / static_cast<size_t>(channels) : 0;
  for (size_t c = 0; c < scales.size(); ++c) {
    double amax = 0;
    for (size_t i = 0; i < per_channel; ++i) amax = std::max(amax, std::abs(weights[c * per_channel + i]));
    scales[c] = scale_from_amax(amax);
  }
  return scales;
}

std::vector<int8_t> quantize_per_channel(std::span<const double> weights, std::span<const float> scales) {
  std::vector<int8_t> out(weights.size());
  const size_t per_channel = scales.empty() ? 0 : weights.size() / scales.size();
  for (size_t c = 0; c < scales.size(); ++c) {
    for (size_t i = 0; i < per_channel; ++i) {
      const size_t k = c * per_channel + i;
      out[k] = static_cast<int8_t>(quantize_value(static_cast<float>(weights[k]), scales[c]));
    }
  }
  return out;
}

}  // namespace vn::engine
