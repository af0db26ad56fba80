// SPDX-License-Identifier: Apache-2.0
// The double formulas behind vector_math.h, on scalars (the definition, and the path for array
// tails and builds without AVX2) and on four doubles at a time (exp's formula is written once, for
// every width, in vector_math_exp.h; erf's twice here). Every multiply-add is an explicit fma and
// the file is compiled with -ffp-contract=off, so that the compiler fuses nothing on either side
// and the paths give the same bits.
//
// exp(x): x = k ln2 + r with k = round(x / ln2), |r| <= ln2/2; e^r = 1 + r + r^2 P(r), P of degree
// 9 (error below 2^-56 relative); 2^k goes into the exponent bits. For a float x, x - k ln2_hi is
// exact (x's last bit is at or above 2^-25 whenever k != 0, so the difference is a multiple of
// 2^-53 below 1/2), and ln2_lo's term leaves r within 2^-55.
//
// erf(x), |x| < 1.5: x (2/sqrt(pi) + x^2 Q(x^2)), Q of degree 12, 2/sqrt(pi) in two parts so that
// small x lose nothing to its rounding (relative error below 2^-51.6 over the range, 2^-53 for
// small x). 1.5 <= |x| <= 6: 1 - erfc(|x|) with the sign of x, erfc(x) = exp(L(x) - x^2), L of
// degree 13 around 3.75 (absolute error below 2^-54); above 6 erf is 1 in double. The
// coefficients are near-minimax fits computed with mpmath (Chebyshev interpolation, and for erf
// iteratively reweighted least squares), checked in the same precision with the double
// evaluation simulated.
#include "core/ops/vector_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define VN_VMATH_AVX2 1
#endif

#include "core/ops/sgemm.h"
#include "core/ops/vector_math_exp.h"

#ifdef VN_HAVE_SGEMM_AVX512
extern "C" int64_t vn_exp_array_avx512(const float* x, float shift, float* y, int64_t n, const float* q, double d,
                                       float* z);
extern "C" int64_t vn_exp_array_float_avx512(const float* x, float shift, float* y, int64_t n, const float* q, float d,
                                             float* z);
extern "C" int64_t vn_sigmoid_array_avx512(const float* x, float* y, int64_t n);
extern "C" int64_t vn_silu_array_avx512(const float* x, float* y, int64_t n);
extern "C" int64_t vn_erf_array_avx512(const float* x, float* y, int64_t n);
extern "C" int64_t vn_gelu_array_avx512(const float* x, float* y, int64_t n);
#endif

namespace vn::ops::vmath {
namespace {

using namespace exp_detail;

// ---- Scalar definitions ---------------------------------------------------------------------------

struct ScalarLanes {
  using D = double;
  static D set1(double v) { return v; }
  static D add(D a, D b) { return a + b; }
  static D sub(D a, D b) { return a - b; }
  static D mul(D a, D b) { return a * b; }
  static D div(D a, D b) { return a / b; }
  static D fmadd(D a, D b, D c) { return std::fma(a, b, c); }
  static D scale(D y, D t) {
    return std::bit_cast<double>(std::bit_cast<uint64_t>(y) + (std::bit_cast<uint64_t>(t) << 52));
  }
};

/// e^x for x in [kExpMin, kExpMax].
double exp_core(double x) { return exp_lanes<ScalarLanes>(x); }

/// erf(x) for x not NaN.
double erf_core(double x) {
  const double a = std::min(std::fabs(x), kErfMax);
  const double u = a * a;
  if (a < kErfSplit) {
    return erf_small_lanes<ScalarLanes>(x, u);
  }
  const double e = erfc_lanes<ScalarLanes>(a, u);
  return std::copysign(1.0 - e, x);
}

float exp_of_float(float x) {
  if (std::isnan(x)) return x + x;
  return static_cast<float>(exp_core(std::min(std::max(static_cast<double>(x), kExpMin), kExpMax)));
}

float gelu_of_float(float x) {
  const double xd = x;
  return static_cast<float>(0.5 * xd * (1.0 + erf_core(xd * kInvSqrt2)));
}

// ---- AVX2 ---------------------------------------------------------------------------------------

#ifdef VN_VMATH_AVX2

struct Avx2Lanes {
  using D = __m256d;
  static D set1(double v) { return _mm256_set1_pd(v); }
  static D add(D a, D b) { return _mm256_add_pd(a, b); }
  static D sub(D a, D b) { return _mm256_sub_pd(a, b); }
  static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static D div(D a, D b) { return _mm256_div_pd(a, b); }
  static D fmadd(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static D scale(D y, D t) {
    return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(y), _mm256_slli_epi64(_mm256_castpd_si256(t), 52)));
  }
};

// The helpers below are inlined into the array loops, which take two vectors per step: called
// through a function, one vector at a time, the lanes' long chains of multiply-adds overlapped
// little (sigmoid on Zen 3: 1.84 ns a value, 1.39 inlined two at a time).
#define VN_VMATH_INLINE __attribute__((always_inline)) inline
#define VN_VMATH_INLINE_LAMBDA __attribute__((always_inline))

VN_VMATH_INLINE __m256d exp_core(__m256d x) { return exp_lanes<Avx2Lanes>(x); }

/// erf_core's formula for |x| < 1.5 on four lanes (u = x^2).
VN_VMATH_INLINE __m256d erf_small(__m256d x, __m256d u) { return erf_small_lanes<Avx2Lanes>(x, u); }

/// erf_core on four lanes; a NaN lane gives ±1 (callers replace it).
VN_VMATH_INLINE __m256d erf_core(__m256d x) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d a = _mm256_min_pd(_mm256_andnot_pd(sign, x), _mm256_set1_pd(kErfMax));
  const __m256d u = _mm256_mul_pd(a, a);
  const __m256d large = _mm256_cmp_pd(a, _mm256_set1_pd(kErfSplit), _CMP_GE_OQ);
  const int mask = _mm256_movemask_pd(large);
  // Only the formulas some lane needs are evaluated: most activations are below 1.5.
  if (mask == 0) return erf_small(x, u);
  const __m256d e = erfc_lanes<Avx2Lanes>(a, u);
  const __m256d big = _mm256_or_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), e), _mm256_and_pd(sign, x));
  return mask == 0xF ? big : _mm256_blendv_pd(erf_small(x, u), big, large);
}

/// r, with x + x (x's NaN, quieted) in the lanes where x is NaN.
VN_VMATH_INLINE __m256 keep_nan(__m256 x, __m256 r) {
  return _mm256_blendv_ps(r, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/// exp_of_float on eight floats. The clamps keep a NaN (maxps and minps return their second operand
/// when one is NaN), and a NaN goes through exp_core unchanged: its payload sits above the low 29
/// bits of the double, so the exponent shift adds nothing, and the result is x + x as on scalars.
VN_VMATH_INLINE __m256 exp_of_floats(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(static_cast<float>(kExpMax)),
                    _mm256_max_ps(_mm256_set1_ps(static_cast<float>(kExpMin)), x));
  const __m128 lo = _mm256_cvtpd_ps(exp_core(_mm256_cvtps_pd(_mm256_castps256_ps128(x))));
  const __m128 hi = _mm256_cvtpd_ps(exp_core(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
  return _mm256_set_m128(hi, lo);
}

/// float(double(q) / d) on eight floats, or q / d in float.
VN_VMATH_INLINE __m256 quotients(const float* q, double d) {
  const __m256d dv = _mm256_set1_pd(d);
  const __m128 lo = _mm256_cvtpd_ps(_mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(q)), dv));
  const __m128 hi = _mm256_cvtpd_ps(_mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(q + 4)), dv));
  return _mm256_set_m128(hi, lo);
}
VN_VMATH_INLINE __m256 quotients(const float* q, float d) {
  return _mm256_div_ps(_mm256_loadu_ps(q), _mm256_set1_ps(d));
}

/// step(j) for j = i, i + 8, ... while j + 8 <= n, two steps per iteration; returns the first j
/// not taken. `step` should be an always-inline lambda (VN_VMATH_INLINE_LAMBDA).
template <typename Step>
VN_VMATH_INLINE int64_t in_pairs(int64_t i, int64_t n, Step step) {
  for (; i + 16 <= n; i += 16) {
    step(i);
    step(i + 8);
  }
  for (; i + 8 <= n; i += 8) step(i);
  return i;
}

#endif

template <typename D>
float quotient(float q, D d) {
  if constexpr (std::is_same_v<D, double>) {
    return static_cast<float>(static_cast<double>(q) / d);
  } else {
    return q / d;
  }
}

/// y[i] = exp(x[i] - shift) (exp(x[i]) unless kShifted) and, when q is not null, z[i] = q[i] / d
/// as `quotient` takes it, for i < n.
template <bool kShifted, typename D>
void exp_array(const float* x, float shift, float* y, int64_t n, const float* q, D d, float* z) {
  int64_t i = 0;
#ifdef VN_HAVE_SGEMM_AVX512
  // The same formula on sixteen lanes where the machine has AVX-512 (vector_math_avx512.cpp):
  // twice the lanes of the polynomial's multiply-adds, the same bits.
  if (sgemm_uses_avx512()) {
    if constexpr (std::is_same_v<D, double>) {
      i = vn_exp_array_avx512(x, kShifted ? shift : 0.0f, y, n, q, d, z);
    } else {
      i = vn_exp_array_float_avx512(x, kShifted ? shift : 0.0f, y, n, q, d, z);
    }
  }
#endif
#ifdef VN_VMATH_AVX2
  const __m256 s = _mm256_set1_ps(shift);
  i = in_pairs(i, n, [&](int64_t j) VN_VMATH_INLINE_LAMBDA {
    __m256 v = _mm256_loadu_ps(x + j);
    if constexpr (kShifted) v = _mm256_sub_ps(v, s);
    _mm256_storeu_ps(y + j, exp_of_floats(v));
    if (q != nullptr) _mm256_storeu_ps(z + j, quotients(q + j, d));
  });
#endif
  for (; i < n; ++i) {
    y[i] = exp_of_float(kShifted ? x[i] - shift : x[i]);
    if (q != nullptr) z[i] = quotient(q[i], d);
  }
}

template <typename D>
void divide_array(const float* x, D d, float* y, int64_t n) {
  int64_t i = 0;
#ifdef VN_VMATH_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, quotients(x + i, d));
#endif
  for (; i < n; ++i) y[i] = quotient(x[i], d);
}

}  // namespace

float exp(float x) { return exp_of_float(x); }

void exp(const float* x, float* y, int64_t n) { exp_array<false>(x, 0.0f, y, n, nullptr, 0.0, nullptr); }

void exp_shifted(const float* x, float shift, float* y, int64_t n) {
  exp_array<true>(x, shift, y, n, nullptr, 0.0, nullptr);
}

void exp_shifted_divide(const float* x, float shift, float* y, int64_t n, const float* q, double d, float* z) {
  exp_array<true>(x, shift, y, n, q, d, z);
}

void exp_shifted_divide_float(const float* x, float shift, float* y, int64_t n, const float* q, float d, float* z) {
  exp_array<true>(x, shift, y, n, q, d, z);
}

float erf(float x) {
  if (std::isnan(x)) return x + x;
  return static_cast<float>(erf_core(static_cast<double>(x)));
}

void erf(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef VN_HAVE_SGEMM_AVX512
  // Twice the lanes where the machine has AVX-512 (vector_math_avx512.cpp), the same bits.
  if (sgemm_uses_avx512()) i = vn_erf_array_avx512(x, y, n);
#endif
#ifdef VN_VMATH_AVX2
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 split = _mm256_set1_ps(static_cast<float>(kErfSplit));
  i = in_pairs(i, n, [&](int64_t j) VN_VMATH_INLINE_LAMBDA {
    const __m256 v = _mm256_loadu_ps(x + j);
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    __m128 rlo, rhi;
    if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(v, abs_mask), split, _CMP_GE_OQ)) == 0) {
      rlo = _mm256_cvtpd_ps(erf_small(lo, _mm256_mul_pd(lo, lo)));
      rhi = _mm256_cvtpd_ps(erf_small(hi, _mm256_mul_pd(hi, hi)));
    } else {
      rlo = _mm256_cvtpd_ps(erf_core(lo));
      rhi = _mm256_cvtpd_ps(erf_core(hi));
    }
    _mm256_storeu_ps(y + j, keep_nan(v, _mm256_set_m128(rhi, rlo)));
  });
#endif
  for (; i < n; ++i) y[i] = erf(x[i]);
}

float sigmoid(float x) {
  const float e = exp(-std::fabs(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

namespace {

/// vmath::sigmoid (and with kTimesX vmath::silu) over [0, n).
template <bool kTimesX>
void sigmoid_array(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef VN_HAVE_SGEMM_AVX512
  // In one pass of sixteen lanes where the machine has AVX-512 (vector_math_avx512.cpp).
  if (sgemm_uses_avx512()) i = kTimesX ? vn_silu_array_avx512(x, y, n) : vn_sigmoid_array_avx512(x, y, n);
#endif
#ifdef VN_VMATH_AVX2
  // Eight lanes at a time in one pass, the scalar formula's operations lane for lane (the three
  // passes below, which g++ left scalar past exp, cost EfficientNetV2-S a fifth of its run on
  // Zen 3).
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  i = in_pairs(i, n, [&](int64_t j) VN_VMATH_INLINE_LAMBDA {
    const __m256 v = _mm256_loadu_ps(x + j);
    const __m256 e = exp_of_floats(_mm256_xor_ps(_mm256_and_ps(v, abs_mask), _mm256_set1_ps(-0.0f)));
    const __m256 s = _mm256_div_ps(_mm256_blendv_ps(e, one, _mm256_cmp_ps(v, zero, _CMP_GE_OQ)), _mm256_add_ps(one, e));
    _mm256_storeu_ps(y + j, kTimesX ? _mm256_mul_ps(v, s) : s);
  });
#endif
  // Elsewhere in three passes over blocks that stay in L1 (EfficientNetV2-S: 14.8 -> 12.3 ms
  // against one element at a time). y is written after x is read at each element only.
  constexpr int64_t kBlock = 1024;
  alignas(32) float e[kBlock];
  for (; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    const float* xb = x + i;
    for (int64_t j = 0; j < m; ++j) e[j] = -std::fabs(xb[j]);
    exp(e, e, m);
    for (int64_t j = 0; j < m; ++j) {
      const float s = (xb[j] >= 0.0f ? 1.0f : e[j]) / (1.0f + e[j]);
      y[i + j] = kTimesX ? xb[j] * s : s;
    }
  }
}

}  // namespace

void sigmoid(const float* x, float* y, int64_t n) { sigmoid_array<false>(x, y, n); }

void silu(const float* x, float* y, int64_t n) { sigmoid_array<true>(x, y, n); }

float tanh(float x) {
  if (std::isnan(x)) return x + x;
  const double a = std::min(std::fabs(static_cast<double>(x)), kTanhMax);
  return static_cast<float>(std::copysign(tanh_lanes<ScalarLanes>(a), static_cast<double>(x)));
}

void tanh(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef VN_VMATH_AVX2
  // The scalar formula on |x| in four double lanes at a time, x's sign put back on the float: the
  // same bits, as rounding commutes with the sign. A NaN lane is clamped to kTanhMax (minps returns
  // its second operand) and replaced at the end.
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 bound = _mm256_set1_ps(static_cast<float>(kTanhMax));
  i = in_pairs(i, n, [&](int64_t j) VN_VMATH_INLINE_LAMBDA {
    const __m256 v = _mm256_loadu_ps(x + j);
    const __m256 a = _mm256_min_ps(_mm256_andnot_ps(sign, v), bound);
    const __m128 lo = _mm256_cvtpd_ps(tanh_lanes<Avx2Lanes>(_mm256_cvtps_pd(_mm256_castps256_ps128(a))));
    const __m128 hi = _mm256_cvtpd_ps(tanh_lanes<Avx2Lanes>(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1))));
    _mm256_storeu_ps(y + j, keep_nan(v, _mm256_or_ps(_mm256_set_m128(hi, lo), _mm256_and_ps(sign, v))));
  });
#endif
  for (; i < n; ++i) y[i] = tanh(x[i]);
}

void gelu_erf(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef VN_HAVE_SGEMM_AVX512
  if (sgemm_uses_avx512()) i = vn_gelu_array_avx512(x, y, n);
#endif
#ifdef VN_VMATH_AVX2
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  // Below 2.1, x / sqrt 2 is below 1.5: erf_core would take erf_small for every lane.
  const __m256 small_bound = _mm256_set1_ps(2.1f);
  const __m256d inv_sqrt2 = _mm256_set1_pd(kInvSqrt2), half = _mm256_set1_pd(0.5), one = _mm256_set1_pd(1.0);
  i = in_pairs(i, n, [&](int64_t j) VN_VMATH_INLINE_LAMBDA {
    // A NaN lane stays NaN: 0.5 x carries it whatever erf gives.
    const __m256 v = _mm256_loadu_ps(x + j);
    const bool small = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(v, abs_mask), small_bound, _CMP_LT_OQ)) == 0xFF;
    __m128 r[2];
    for (int h = 0; h < 2; ++h) {
      const __m256d xd = _mm256_cvtps_pd(h == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
      const __m256d t = _mm256_mul_pd(xd, inv_sqrt2);
      const __m256d e = small ? erf_small(t, _mm256_mul_pd(t, t)) : erf_core(t);
      r[h] = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_mul_pd(half, xd), _mm256_add_pd(one, e)));
    }
    _mm256_storeu_ps(y + j, _mm256_set_m128(r[1], r[0]));
  });
#endif
  for (; i < n; ++i) y[i] = gelu_of_float(x[i]);
}

float max(const float* x, int64_t n) {
  constexpr float kLow = -std::numeric_limits<float>::infinity();
  float m = kLow;
  int64_t i = 0;
#ifdef VN_VMATH_AVX2
  if (n >= 8) {
    // maxps(v, m) is v > m ? v : m, lane by lane. Four vectors of lanes side by side, so that a
    // maximum does not wait on the previous one's latency (a Softmax row's max took as long as its
    // exponentials).
    __m256 lanes[4] = {_mm256_set1_ps(kLow), _mm256_set1_ps(kLow), _mm256_set1_ps(kLow), _mm256_set1_ps(kLow)};
    for (; i + 32 <= n; i += 32) {
      for (int k = 0; k < 4; ++k) lanes[k] = _mm256_max_ps(_mm256_loadu_ps(x + i + 8 * k), lanes[k]);
    }
    for (; i + 8 <= n; i += 8) lanes[0] = _mm256_max_ps(_mm256_loadu_ps(x + i), lanes[0]);
    const __m256 all = _mm256_max_ps(_mm256_max_ps(lanes[0], lanes[1]), _mm256_max_ps(lanes[2], lanes[3]));
    alignas(32) float part[8];
    _mm256_store_ps(part, all);
    for (const float v : part) m = v > m ? v : m;
  }
#endif
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

void divide(const float* x, double d, float* y, int64_t n) { divide_array(x, d, y, n); }

void divide_float(const float* x, float d, float* y, int64_t n) { divide_array(x, d, y, n); }

}  // namespace vn::ops::vmath
