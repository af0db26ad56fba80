// SPDX-License-Identifier: Apache-2.0
// vn_exp_array_avx512: vector_math.cpp's exp_array (exp of x - shift, and beside it the quotients
// float(double(q) / d)) on sixteen floats at a time, built into the AVX-512 library (sgemm.h says
// why it is one of its own). The same double formula, every multiply-add an explicit fma and the
// file compiled with -ffp-contract=off as vector_math.cpp is: the same bits as the AVX2 and scalar
// paths.
#include <immintrin.h>

#include <cstdint>

#include "core/ops/vector_math_exp.h"

namespace {

using namespace vn::ops::vmath::exp_detail;

struct Avx512Lanes {
  using D = __m512d;
  static D set1(double v) { return _mm512_set1_pd(v); }
  static D add(D a, D b) { return _mm512_add_pd(a, b); }
  static D sub(D a, D b) { return _mm512_sub_pd(a, b); }
  static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
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

}  // namespace

/// y[i] = exp(x[i] - shift) (the subtraction in float; shift 0 subtracts nothing an exp would see)
/// and, when q is not null, z[i] = float(double(q[i]) / d), for the i below n in whole sixteens;
/// returns how many it did.
extern "C" __attribute__((visibility("default"))) int64_t vn_exp_array_avx512(const float* x, float shift, float* y,
                                                                             int64_t n, const float* q, double d,
                                                                             float* z) {
  const __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_sub_ps(_mm512_loadu_ps(x + i), s);
    _mm512_storeu_ps(y + i, exp_of_floats(v));
    if (q != nullptr) _mm512_storeu_ps(z + i, quotients(q + i, d));
  }
  return i;
}
