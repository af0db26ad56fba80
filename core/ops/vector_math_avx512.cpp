// SPDX-License-Identifier: Apache-2.0
// vn_exp_array_avx512: vector_math.cpp's exp_array (exp of x - shift, and beside it the quotients
// float(double(q) / d)) on sixteen floats at a time, vn_sigmoid_array_avx512 and
// vn_silu_array_avx512 (vmath::sigmoid and silu, tails under a mask), and
// vn_erf_array_avx512 and vn_gelu_array_avx512 (vmath::erf and gelu_erf, their AVX2 code on eight
// doubles a vector), built into the AVX-512 library (sgemm.h says
// why it is one of its own). The same double formula, every multiply-add an explicit fma and the
// file compiled with -ffp-contract=off as vector_math.cpp is: the same bits as the AVX2 and scalar
// paths.
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "core/ops/vector_math_exp.h"

namespace {

using namespace vn::ops::vmath::exp_detail;

struct Avx512Lanes {
  using D = __m512d;
  static D set1(double v) { return _mm512_set1_pd(v); }
  static D add(D a, D b) { return _mm512_add_pd(a, b); }
  static D sub(D a, D b) { return _mm512_sub_pd(a, b); }
  static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  static D div(D a, D b) { return _mm512_div_pd(a, b); }
  static D fmadd(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static D scale(D y, D t) {
    return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(y), _mm512_slli_epi64(_mm512_castpd_si512(t), 52)));
  }
};

__m512d exp_core(__m512d x) { return exp_lanes<Avx512Lanes>(x); }

/// exp of sixteen floats clamped as vector_math.cpp's exp_of_floats (a NaN kept: min and max
/// return their second operand when one is NaN).
__m512 exp_of_floats(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(static_cast<float>(kExpMax)),
                    _mm512_max_ps(_mm512_set1_ps(static_cast<float>(kExpMin)), x));
  const __m256 lo = _mm512_cvtpd_ps(exp_core(_mm512_cvtps_pd(_mm512_castps512_ps256(x))));
  const __m256 hi = _mm512_cvtpd_ps(exp_core(_mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1))));
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

__m512 quotients(const float* q, double d) {
  const __m512d dv = _mm512_set1_pd(d);
  const __m256 lo = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(q)), dv));
  const __m256 hi = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(q + 8)), dv));
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/// vector_math.cpp's erf_small (|x| < 1.5, u = x^2) on eight lanes.
__m512d erf_small(__m512d x, __m512d u) { return erf_small_lanes<Avx512Lanes>(x, u); }

/// vector_math.cpp's erf_core on eight lanes; a NaN lane gives ±1 (callers replace it).
__m512d erf_core(__m512d x) {
  const __m512d sign = _mm512_set1_pd(-0.0);
  const __m512d a = _mm512_min_pd(_mm512_andnot_pd(sign, x), _mm512_set1_pd(kErfMax));
  const __m512d u = _mm512_mul_pd(a, a);
  const __mmask8 large = _mm512_cmp_pd_mask(a, _mm512_set1_pd(kErfSplit), _CMP_GE_OQ);
  if (large == 0) return erf_small(x, u);
  const __m512d e = erfc_lanes<Avx512Lanes>(a, u);
  const __m512d big = _mm512_or_pd(_mm512_sub_pd(_mm512_set1_pd(1.0), e), _mm512_and_pd(sign, x));
  return large == 0xFF ? big : _mm512_mask_blend_pd(large, erf_small(x, u), big);
}

/// The eight floats of `r` (lanes 0-7) and `s` (lanes 8-15) as one vector.
__m512 join(__m256 r, __m256 s) { return _mm512_insertf32x8(_mm512_castps256_ps512(r), s, 1); }

/// y[i] = exp(x[i] - shift) and, when q is not null, z[i] = q[i] / d (D double: float(double(q[i])
/// / d); D float: in float), for the i below n in whole sixteens; returns how many it did.
template <typename D>
int64_t exp_array(const float* x, float shift, float* y, int64_t n, const float* q, D d, float* z) {
  const __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_sub_ps(_mm512_loadu_ps(x + i), s);
    _mm512_storeu_ps(y + i, exp_of_floats(v));
    if (q != nullptr) {
      if constexpr (std::is_same_v<D, double>) {
        _mm512_storeu_ps(z + i, quotients(q + i, d));
      } else {
        _mm512_storeu_ps(z + i, _mm512_div_ps(_mm512_loadu_ps(q + i), _mm512_set1_ps(d)));
      }
    }
  }
  return i;
}

/// vmath::sigmoid of the sixteen floats v (vmath::silu's with kTimesX): e = exp(-|x|) as
/// exp_of_floats takes it (-|x| is x with its sign bit set, a NaN included), then (x >= 0 ? 1 : e)
/// / (1 + e) in float, times x after that rounding for SiLU.
template <bool kTimesX>
__m512 sigmoid_of_floats(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = exp_of_floats(_mm512_or_ps(v, _mm512_set1_ps(-0.0f)));
  const __m512 numerator = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ), e, one);
  const __m512 s = _mm512_div_ps(numerator, _mm512_add_ps(one, e));
  return kTimesX ? _mm512_mul_ps(v, s) : s;
}

/// y[i] = sigmoid_of_floats<kTimesX>(x[i]) for every i < n, the last (n mod 16) under a mask:
/// the lanes are the same formula, so a tail gives the scalar path's bits without its cost (an
/// engine epilogue works plane by plane: 196 values leave 4).
template <bool kTimesX>
int64_t sigmoid_array(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, sigmoid_of_floats<kTimesX>(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, tail, sigmoid_of_floats<kTimesX>(_mm512_maskz_loadu_ps(tail, x + i)));
  }
  return n;
}

}  // namespace

/// y[i] = exp(x[i] - shift) (the subtraction in float; shift 0 subtracts nothing an exp would see)
/// and, when q is not null, z[i] = float(double(q[i]) / d), for the i below n in whole sixteens;
/// returns how many it did.
extern "C" __attribute__((visibility("default"))) int64_t vn_exp_array_avx512(const float* x, float shift, float* y,
                                                                              int64_t n, const float* q, double d,
                                                                              float* z) {
  return exp_array(x, shift, y, n, q, d, z);
}

/// vn_exp_array_avx512 with z[i] = q[i] / d in float.
extern "C" __attribute__((visibility("default"))) int64_t vn_exp_array_float_avx512(const float* x, float shift,
                                                                                    float* y, int64_t n, const float* q,
                                                                                    float d, float* z) {
  return exp_array(x, shift, y, n, q, d, z);
}

/// y[i] = vmath::sigmoid(x[i]) for every i < n, in one pass; returns n. y may be x.
extern "C" __attribute__((visibility("default"))) int64_t vn_sigmoid_array_avx512(const float* x, float* y, int64_t n) {
  return sigmoid_array<false>(x, y, n);
}

/// y[i] = vmath::silu(x[i]) for every i < n, in one pass; returns n. y may be x.
extern "C" __attribute__((visibility("default"))) int64_t vn_silu_array_avx512(const float* x, float* y, int64_t n) {
  return sigmoid_array<true>(x, y, n);
}

/// y[i] = vmath::erf(x[i]) for the i below n in whole thirty-twos; returns how many it did. y may
/// be x.
extern "C" __attribute__((visibility("default"))) int64_t vn_erf_array_avx512(const float* x, float* y, int64_t n) {
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  const __m512 split = _mm512_set1_ps(static_cast<float>(kErfSplit));
  int64_t i = 0;
  // Two vectors a step: four chains of multiply-adds in flight rather than two.
  for (; i + 32 <= n; i += 32) {
    const __m512 v[2] = {_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + 16)};
    __m512d d[4];
    for (int h = 0; h < 2; ++h) {
      d[2 * h] = _mm512_cvtps_pd(_mm512_castps512_ps256(v[h]));
      d[2 * h + 1] = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v[h], 1));
    }
    const bool small = (_mm512_cmp_ps_mask(_mm512_and_ps(v[0], abs_mask), split, _CMP_GE_OQ) |
                        _mm512_cmp_ps_mask(_mm512_and_ps(v[1], abs_mask), split, _CMP_GE_OQ)) == 0;
    __m256 r[4];
    for (int q = 0; q < 4; ++q)
      r[q] = _mm512_cvtpd_ps(small ? erf_small(d[q], _mm512_mul_pd(d[q], d[q])) : erf_core(d[q]));
    for (int h = 0; h < 2; ++h) {
      // A NaN lane gives x + x (x's NaN, quieted), as on scalars.
      const __mmask16 nan = _mm512_cmp_ps_mask(v[h], v[h], _CMP_UNORD_Q);
      _mm512_storeu_ps(y + i + 16 * h,
                       _mm512_mask_blend_ps(nan, join(r[2 * h], r[2 * h + 1]), _mm512_add_ps(v[h], v[h])));
    }
  }
  return i;
}

/// y[i] = vmath::gelu_erf(x[i]) for the i below n in whole sixteens; returns how many it did. y
/// may be x.
extern "C" __attribute__((visibility("default"))) int64_t vn_gelu_array_avx512(const float* x, float* y, int64_t n) {
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  // Below 2.1, x / sqrt 2 is below 1.5: erf_core would take erf_small for every lane.
  const __m512 small_bound = _mm512_set1_ps(2.1f);
  const __m512d inv_sqrt2 = _mm512_set1_pd(kInvSqrt2), half = _mm512_set1_pd(0.5), one = _mm512_set1_pd(1.0);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // A NaN lane stays NaN: 0.5 x carries it whatever erf gives.
    const __m512 v = _mm512_loadu_ps(x + i);
    const bool small = _mm512_cmp_ps_mask(_mm512_and_ps(v, abs_mask), small_bound, _CMP_LT_OQ) == 0xFFFF;
    __m256 r[2];
    for (int h = 0; h < 2; ++h) {
      const __m512d xd = _mm512_cvtps_pd(h == 0 ? _mm512_castps512_ps256(v) : _mm512_extractf32x8_ps(v, 1));
      const __m512d t = _mm512_mul_pd(xd, inv_sqrt2);
      const __m512d e = small ? erf_small(t, _mm512_mul_pd(t, t)) : erf_core(t);
      r[h] = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_mul_pd(half, xd), _mm512_add_pd(one, e)));
    }
    _mm512_storeu_ps(y + i, join(r[0], r[1]));
  }
  return i;
}
