// SPDX-License-Identifier: Apache-2.0
// vector_math.cpp's exp formula and erf's two formulas, with their constants (see there), written
// once for every width of lanes they run on: scalars and AVX2 there, AVX-512 in vector_math_avx512.cpp.
// Internal to core/ops.
#pragma once

#include <cstddef>

namespace vn::ops::vmath::exp_detail {

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;
/// Adding 1.5 * 2^52 rounds a double of magnitude below 2^51 to an integer, which then sits in the
/// low bits of the sum.
constexpr double kShifter = 0x1.8p52;
/// P(r) ~ (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], highest degree first.
constexpr double kExpP[] = {0x1.af389eeb9e5e9p-26, 0x1.28917ca046b86p-22, 0x1.71de0db2eafc6p-19, 0x1.a019b9148739fp-16,
                            0x1.a01a01a7c2f2ep-13, 0x1.6c16c17889f40p-10, 0x1.11111111109b5p-7,  0x1.5555555553d68p-5,
                            0x1.5555555555556p-3,  0x1.0000000000001p-1};
/// exp of a float beyond these rounds to +inf (above 88.7228...) or +0 (below -103.97...).
constexpr double kExpMin = -104.0;
constexpr double kExpMax = 89.0;

// erf's (vector_math.cpp says how they are used).
constexpr double kTwoOverSqrtPiHi = 0x1.20dd750429b6dp+0;
constexpr double kTwoOverSqrtPiLo = 0x1.1ae3a914fed80p-56;
/// Q(u) ~ (erf(sqrt u) / sqrt u - 2/sqrt(pi)) / u on [0, 2.25], highest degree first.
constexpr double kErfQ[] = {-0x1.50eb1e5ede979p-39, 0x1.2fc27767987dbp-34,  -0x1.37c56564237a4p-30,
                            0x1.f46982dce9144p-27,  -0x1.5e83ca06a9d4fp-23, 0x1.b9c076965d04bp-20,
                            -0x1.f4ce0747483a4p-17, 0x1.f9a2cf56ab133p-14,  -0x1.c02daf4c468ddp-11,
                            0x1.565bcce4b1a1ap-8,   -0x1.b82ce310d1efbp-6,  0x1.ce2f21a0399d9p-4,
                            -0x1.812746b0378d5p-2};
constexpr double kErfSplit = 1.5;
constexpr double kErfMax = 6.0;
constexpr double kErfcCenter = 3.75;
/// L(v) ~ log(erfc(x)) + x^2 for v = x - 3.75, x in [1.5, 6], highest degree first.
constexpr double kErfcL[] = {
    0x1.10a797e8ab844p-30, 0x1.93d1413489e11p-27,  0x1.19c14a8a14c4dp-24, 0x1.f441405f0fca4p-23,  0x1.d6a342e0d0007p-22,
    0x1.35ba7fea9b086p-20, -0x1.29734a320ef37p-19, 0x1.3bc43ae4349dcp-16, -0x1.e3f07b124d19ep-14, 0x1.74687380810f8p-11,
    -0x1.22c85bcdb3198p-8, 0x1.e5848e6e89587p-6,   -0x1.0069ec23882a9p-2, -0x1.ed4d6e21a10c9p+0};
constexpr double kInvSqrt2 = 0x1.6a09e667f3bcdp-1;

// The formulas take the lanes as `V`: its type `D` (a double or a vector of them) and set1, add,
// sub, mul, div, fmadd (an explicit fused multiply-add: the files that use them are compiled with
// -ffp-contract=off, so every width computes the same bits) and scale(y, t): y with t's low bits
// added to its exponent.

/// c[0] x^(N-1) + ... + c[N-1], by Horner's rule.
template <typename V, size_t N>
typename V::D horner_lanes(const double (&c)[N], typename V::D x) {
  typename V::D p = V::set1(c[0]);
  for (size_t i = 1; i < N; ++i) p = V::fmadd(p, x, V::set1(c[i]));
  return p;
}

/// The parts of e^x: x = k ln2 + r with |r| <= ln2 / 2, `q` = e^r - 1 = r + r^2 P(r), and `t`, whose
/// low bits hold k (V::scale(y, t) multiplies y by 2^k).
template <typename V>
struct ExpParts {
  typename V::D q, t;
};
template <typename V>
ExpParts<V> exp_parts(typename V::D x) {
  using D = typename V::D;
  const D shifter = V::set1(kShifter);
  const D t = V::fmadd(x, V::set1(kInvLn2), shifter);
  const D k = V::sub(t, shifter);
  D r = V::fmadd(k, V::set1(-kLn2Hi), x);
  r = V::fmadd(k, V::set1(-kLn2Lo), r);
  return {V::fmadd(V::mul(r, r), horner_lanes<V>(kExpP, r), r), t};
}

/// e^x for x in [kExpMin, kExpMax]: 2^k (1 + q), the exponent added to.
template <typename V>
typename V::D exp_lanes(typename V::D x) {
  const ExpParts<V> p = exp_parts<V>(x);
  return V::scale(V::add(V::set1(1.0), p.q), p.t);
}

/// tanh of a float beyond this is 1 once rounded to float (1 - tanh(a) ~ 2e^(-2a) falls below half
/// a unit in the last place below 1 from a ~ 9.01 on).
constexpr double kTanhMax = 10.0;

/// tanh(a) for a in [0, kTanhMax], through e = e^(2a) - 1 and e / (e + 2), which cancels nowhere
/// for a >= 0: with exp_parts of 2a, e = 2^k q + (2^k - 1) in one fused step (2^k - 1 is exact).
/// Near 0, k is 0 and e is q itself, so tiny arguments keep their relative precision. `div` is
/// the lanes' division.
template <typename V>
typename V::D tanh_lanes(typename V::D a) {
  using D = typename V::D;
  const ExpParts<V> p = exp_parts<V>(V::add(a, a));
  const D s = V::scale(V::set1(1.0), p.t);
  const D e = V::fmadd(s, p.q, V::sub(s, V::set1(1.0)));
  return V::div(e, V::add(e, V::set1(2.0)));
}

/// erf(x) for |x| < kErfSplit, u = x^2: x (2/sqrt(pi) + u Q(u)), 2/sqrt(pi) in two parts.
template <typename V>
typename V::D erf_small_lanes(typename V::D x, typename V::D u) {
  const typename V::D q = V::fmadd(u, horner_lanes<V>(kErfQ, u), V::set1(kTwoOverSqrtPiLo));
  return V::fmadd(x, V::set1(kTwoOverSqrtPiHi), V::mul(x, q));
}

/// erfc(a) for a = |x| in [kErfSplit, kErfMax], u = a^2: exp(L(a - 3.75) - u).
template <typename V>
typename V::D erfc_lanes(typename V::D a, typename V::D u) {
  return exp_lanes<V>(V::sub(horner_lanes<V>(kErfcL, V::sub(a, V::set1(kErfcCenter))), u));
}

}  // namespace vn::ops::vmath::exp_detail
