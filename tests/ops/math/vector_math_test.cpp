// SPDX-License-Identifier: Apache-2.0
// core/ops/vector_math.h: special values, a sample of float bit patterns against the double
// function rounded to float (the correctly rounded value in practice), and the vector and scalar
// paths bit for bit (an array of fewer than 8 elements runs the scalar path).
#include "core/ops/vector_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

namespace vn::ops::vmath {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

float exp_rounded(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
float erf_rounded(float x) { return static_cast<float>(std::erf(static_cast<double>(x))); }
float tanh_rounded(float x) { return static_cast<float>(std::tanh(static_cast<double>(x))); }

/// f over x through the arrays (8 or 16 at a time, the vector paths where the build and the
/// machine have them) and one by one through arrays of one (the scalar path); fails on any
/// difference of bits.
template <typename F>
std::vector<float> both_paths(const std::vector<float>& x, F f) {
  std::vector<float> y(x.size()), one(x.size());
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) f(&x[i], &one[i], 1);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(bits(y[i]), bits(one[i])) << "x = " << x[i] << " (" << std::hex << bits(x[i]) << ")";
  }
  return y;
}

/// Every 4099th float bit pattern: about a million, over every exponent, both signs, NaNs.
std::vector<float> sample_patterns() {
  std::vector<float> x;
  for (uint64_t p = 0; p < (uint64_t{1} << 32); p += 4099) x.push_back(from_bits(static_cast<uint32_t>(p)));
  return x;
}

/// f over sample_patterns() against `rounded` (the double function rounded to float): no value
/// may differ (NaN matching NaN); the first that does is reported.
template <typename F>
void expect_sample_correctly_rounded(const char* name, F f, float (*rounded)(float)) {
  const std::vector<float> x = sample_patterns();
  const std::vector<float> y = both_paths(x, f);
  int64_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = rounded(x[i]);
    if (std::isnan(want) ? !std::isnan(y[i]) : bits(y[i]) != bits(want)) ++wrong;
    if (wrong == 1 && bits(y[i]) != bits(want)) ADD_FAILURE() << name << "(" << x[i] << ") = " << y[i] << ", not " << want;
  }
  EXPECT_EQ(wrong, 0) << name;
}

void expect_same(float got, float want, float x) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << "x = " << x;
  } else {
    EXPECT_EQ(bits(got), bits(want)) << "x = " << x << ": " << got << " vs " << want;
  }
}

TEST(VectorMath, ExpSpecialValues) {
  const std::vector<float> x = {0.0f,
                                -0.0f,
                                kInf,
                                -kInf,
                                1.0f,
                                -1.0f,
                                from_bits(0x42b17217),
                                from_bits(0x42b17218),
                                88.8f,
                                1e30f,
                                -87.0f,
                                -100.0f,
                                -103.9f,
                                -103.98f,
                                -104.0f,
                                -1e30f,
                                0x1p-24f,
                                -0x1p-25f,
                                0x1p-149f,
                                -0x1p-149f};
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { exp(a, b, n); });
  EXPECT_EQ(bits(y[0]), bits(1.0f));
  EXPECT_EQ(bits(y[1]), bits(1.0f));
  EXPECT_EQ(y[2], kInf);
  EXPECT_EQ(bits(y[3]), bits(0.0f));
  // The largest float whose exp is finite, and the next one.
  EXPECT_EQ(y[6], exp_rounded(x[6]));
  EXPECT_LT(y[6], kInf);
  EXPECT_EQ(y[7], kInf);
  EXPECT_EQ(y[8], kInf);
  EXPECT_EQ(y[9], kInf);
  // Subnormal results are the correctly rounded ones, down to +0 below -103.97.
  for (size_t i = 10; i <= 13; ++i) expect_same(y[i], exp_rounded(x[i]), x[i]);
  EXPECT_GT(y[12], 0.0f);
  EXPECT_LT(y[12], std::numeric_limits<float>::min());
  EXPECT_EQ(bits(y[14]), bits(0.0f));
  EXPECT_EQ(bits(y[15]), bits(0.0f));
  // Just past a halfway point between floats near 1: exp(2^-24) rounds up, exp(-2^-25) to 1.
  EXPECT_EQ(y[16], 1.0f + 0x1p-23f);
  EXPECT_EQ(y[17], 1.0f);
  EXPECT_EQ(y[18], 1.0f);
  EXPECT_EQ(y[19], 1.0f);
}

TEST(VectorMath, NaNStaysTheSameNaN) {
  // Quiet and signalling, both signs, with payloads: the result is x + x (the NaN, quieted), as
  // from glibc's expf and erff.
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(),
                                -std::numeric_limits<float>::quiet_NaN(),
                                from_bits(0x7fc12345),
                                from_bits(0xffc00001),
                                from_bits(0x7f800001),
                                from_bits(0xff8abcde),
                                from_bits(0x7fa00000),
                                from_bits(0x7fffffff)};
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + x[i];
  const auto check = [&](const std::vector<float>& y) {
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bits(y[i]), bits(want[i])) << std::hex << bits(x[i]);
  };
  check(both_paths(x, [](const float* a, float* b, int64_t n) { exp(a, b, n); }));
  check(both_paths(x, [](const float* a, float* b, int64_t n) { erf(a, b, n); }));
  check(both_paths(x, [](const float* a, float* b, int64_t n) { exp_shifted(a, 0.5f, b, n); }));
  check(both_paths(x, [](const float* a, float* b, int64_t n) { tanh(a, b, n); }));
  for (const float v : x) {
    EXPECT_EQ(bits(exp(v)), bits(v + v));
    EXPECT_EQ(bits(erf(v)), bits(v + v));
    EXPECT_EQ(bits(tanh(v)), bits(v + v));
  }
}

TEST(VectorMath, ErfSpecialValues) {
  const std::vector<float> x = {0.0f,       -0.0f, kInf, -kInf, 0x1p-149f, -0x1p-149f, 0x1p-126f, 1e-20f,
                                1.4999999f, 1.5f,  3.9f, 3.95f, 6.0f,      10.0f,      -10.0f,    1e30f};
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { erf(a, b, n); });
  EXPECT_EQ(bits(y[0]), bits(0.0f));
  EXPECT_EQ(bits(y[1]), bits(-0.0f));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  for (size_t i = 4; i <= 11; ++i) expect_same(y[i], erf_rounded(x[i]), x[i]);
  EXPECT_EQ(y[11], 1.0f);  // saturated: 1 - erf(3.95) is below half a unit in the last place
  EXPECT_EQ(y[12], 1.0f);
  EXPECT_EQ(y[13], 1.0f);
  EXPECT_EQ(y[14], -1.0f);
  EXPECT_EQ(y[15], 1.0f);
}

// bench_vector_math found no difference from the double function rounded to float over every 97th
// pattern (and none over all 2^32); this sample must have none either.
TEST(VectorMath, ExpSampleIsCorrectlyRounded) {
  expect_sample_correctly_rounded("exp", [](const float* a, float* b, int64_t n) { exp(a, b, n); }, exp_rounded);
}

TEST(VectorMath, ErfSampleIsCorrectlyRounded) {
  expect_sample_correctly_rounded("erf", [](const float* a, float* b, int64_t n) { erf(a, b, n); }, erf_rounded);
}

TEST(VectorMath, TanhSpecialValues) {
  const std::vector<float> x = {0.0f,  -0.0f, kInf,  -kInf,  0x1p-149f, -0x1p-149f, 0x1p-126f, 1e-20f,
                                0.25f, -0.5f, 9.0f,  9.02f,  10.0f,     -10.5f,     88.0f,     -1e30f};
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { tanh(a, b, n); });
  EXPECT_EQ(bits(y[0]), bits(0.0f));
  EXPECT_EQ(bits(y[1]), bits(-0.0f));
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  // Subnormal and tiny arguments are their own tanh: e^(2a) - 1 is taken without cancelling.
  for (size_t i = 4; i <= 7; ++i) EXPECT_EQ(bits(y[i]), bits(x[i])) << "x = " << x[i];
  for (size_t i = 8; i <= 11; ++i) expect_same(y[i], tanh_rounded(x[i]), x[i]);
  EXPECT_LT(y[10], 1.0f);  // tanh(9) is the float below 1; from about 9.01 on it rounds to 1
  EXPECT_EQ(y[11], 1.0f);
  EXPECT_EQ(y[12], 1.0f);
  EXPECT_EQ(y[13], -1.0f);
  EXPECT_EQ(y[14], 1.0f);
  EXPECT_EQ(y[15], -1.0f);
}

TEST(VectorMath, TanhSampleIsCorrectlyRounded) {
  expect_sample_correctly_rounded("tanh", [](const float* a, float* b, int64_t n) { tanh(a, b, n); }, tanh_rounded);
}

// An LSTM's gates and cell states: dense over the range where tanh is not yet 1.
TEST(VectorMath, TanhDenseRangeIsCorrectlyRounded) {
  std::vector<float> x;
  for (float v = -9.5f; v <= 9.5f; v += 0.000613f) x.push_back(v);
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { tanh(a, b, n); });
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(bits(y[i]), bits(tanh_rounded(x[i]))) << "x = " << x[i];
}

// The activations of a network: dense around 0, where erf takes its first formula, and out to
// where it takes the second and saturates (the lanes of one vector mixing both).
TEST(VectorMath, ErfDenseRangeIsCorrectlyRounded) {
  std::vector<float> x;
  for (float v = -7.0f; v <= 7.0f; v += 0.000731f) x.push_back(v);
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { erf(a, b, n); });
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(bits(y[i]), bits(erf_rounded(x[i]))) << "x = " << x[i];
}

TEST(VectorMath, ExpShiftedIsExpOfTheFloatDifference) {
  std::vector<float> x;
  for (float v = -120.0f; v <= 100.0f; v += 0.0173f) x.push_back(v);
  x.push_back(kInf);
  x.push_back(-kInf);
  const float shift = 3.7f;
  const std::vector<float> y = both_paths(x, [&](const float* a, float* b, int64_t n) { exp_shifted(a, shift, b, n); });
  for (size_t i = 0; i < x.size(); ++i) expect_same(y[i], exp(x[i] - shift), x[i]);
}

TEST(VectorMath, DivisionIsTheRoundedQuotient) {
  std::vector<float> q;
  for (uint64_t p = 0; p < 0x7f800000u; p += 9973) q.push_back(from_bits(static_cast<uint32_t>(p)));
  q.push_back(0.0f);
  q.push_back(-0.0f);
  for (const double d : {1.0, 3.0, 1499.999999, 1e-300, 7e37}) {
    const std::vector<float> y = both_paths(q, [&](const float* a, float* b, int64_t n) { divide(a, d, b, n); });
    for (size_t i = 0; i < q.size(); ++i) {
      ASSERT_EQ(bits(y[i]), bits(static_cast<float>(static_cast<double>(q[i]) / d))) << q[i] << " / " << d;
    }
  }
  const float df = 3.3f;
  const std::vector<float> y = both_paths(q, [&](const float* a, float* b, int64_t n) { divide_float(a, df, b, n); });
  for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(bits(y[i]), bits(q[i] / df));
}

// Softmax's fused step gives what its two halves give, also in place (z = q).
TEST(VectorMath, ExpShiftedDivideIsBothSteps) {
  std::vector<float> x, q;
  for (int i = 0; i < 1003; ++i) {
    x.push_back(std::sin(static_cast<float>(i)) * 20.0f);
    q.push_back(std::cos(static_cast<float>(i)) * 0.5f + 0.5f);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> e(x.size()), z(q);
  exp_shifted_divide(x.data(), 20.0f, e.data(), n, z.data(), 123.456, z.data());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(bits(e[i]), bits(exp(x[i] - 20.0f)));
    ASSERT_EQ(bits(z[i]), bits(static_cast<float>(static_cast<double>(q[i]) / 123.456)));
  }
  std::vector<float> f(x.size()), zf(q);
  exp_shifted_divide_float(x.data(), 20.0f, f.data(), n, q.data(), 7.5f, zf.data());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(bits(f[i]), bits(e[i]));
    ASSERT_EQ(bits(zf[i]), bits(q[i] / 7.5f));
  }
}

TEST(VectorMath, MaxIgnoresNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(37, -5.0f);
  x[3] = nan;
  x[20] = 4.0f;
  x[36] = nan;
  EXPECT_EQ(max(x.data(), 37), 4.0f);
  EXPECT_EQ(max(x.data(), 3), -5.0f);
  x[30] = kInf;
  EXPECT_EQ(max(x.data(), 37), kInf);
  const std::vector<float> nans(19, nan);
  EXPECT_EQ(max(nans.data(), 19), -kInf);
  EXPECT_EQ(max(nans.data(), 0), -kInf);
}

TEST(VectorMath, MaxFindsTheLargestAtEveryPositionAndLength) {
  // Four vectors of lanes, then single vectors, then single values: the largest value is found in
  // any of them, for every length up to 100 (NaNs scattered among the others never win).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n = 1; n <= 100; ++n) {
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        x[static_cast<size_t>(i)] = i % 7 == 3 ? nan : -static_cast<float>((i * 37) % 101);
      x[static_cast<size_t>(at)] = 3.5f;
      ASSERT_EQ(max(x.data(), n), 3.5f) << "n=" << n << " at=" << at;
    }
  }
}

/// 0.5 x (1 + erf(x / sqrt 2)) with glibc's double erf, rounded once.
float gelu_with_glibc(float x) {
  const double xd = x;
  return static_cast<float>(0.5 * xd * (1.0 + std::erf(xd * (1.0 / std::numbers::sqrt2))));
}

TEST(VectorMath, GeluMatchesItsDoubleFormula) {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.00113f) x.push_back(v);
  for (const float v : {0.0f, -0.0f, kInf, -kInf, 1e-40f, -1e-40f, 1e30f}) x.push_back(v);
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { gelu_erf(a, b, n); });
  int64_t differ = 0, compared = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = gelu_with_glibc(x[i]);
    if (!std::isfinite(want)) {
      expect_same(y[i], want, x[i]);
      continue;
    }
    // 1 + erf(x / sqrt 2) cancels for negative x: both sides carry their erf's error of about one
    // double ulp, which below x = -5 reaches the float result. Elsewhere they are one rounding
    // apart at most, and seldom.
    const double tol = std::abs(static_cast<double>(want)) * 0x1p-23 + std::abs(0.5 * x[i]) * 0x1p-50;
    EXPECT_LE(std::abs(static_cast<double>(y[i]) - want), tol) << "x = " << x[i];
    if (x[i] >= -5.0f) {
      ++compared;
      if (bits(y[i]) != bits(want)) ++differ;
    }
  }
  EXPECT_LT(differ, compared / 10000) << differ << " of " << compared;
  EXPECT_EQ(bits(y[y.size() - 7]), bits(0.0f));
  EXPECT_EQ(bits(y[y.size() - 6]), bits(-0.0f));
  EXPECT_EQ(y[y.size() - 5], kInf);
  EXPECT_TRUE(std::isnan(y[y.size() - 4]));  // -inf * (1 + erf(-inf)) = -inf * 0
}

/// The split form step by step, one element at a time: exp(-|x|), then the float quotient.
float sigmoid_steps(float x) {
  const float e = exp(-std::fabs(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

TEST(VectorMath, SigmoidIsTheSplitFormStepByStep) {
  // Every pattern of the sample (NaNs, infinities, subnormal results below -87), in arrays whose
  // length leaves a tail after the vectors, and in place.
  std::vector<float> x = sample_patterns();
  x.push_back(-0.0f);
  x.push_back(0.0f);
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { sigmoid(a, b, n); });
  for (size_t i = 0; i < x.size(); ++i) {
    // A NaN stays that NaN, quieted, through exp and the division.
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    ASSERT_EQ(bits(y[i]), bits(sigmoid_steps(x[i]))) << "x = " << x[i];
  }
  std::vector<float> in_place = x;
  sigmoid(in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(bits(in_place[i]), bits(y[i])) << "x = " << x[i];
  EXPECT_EQ(y[y.size() - 1], 0.5f);
  EXPECT_EQ(y[y.size() - 2], 0.5f);
}

TEST(VectorMath, SiluIsSigmoidTimesXRoundedOnce) {
  // SiLU's bits are those of a Sigmoid node followed by a Mul: x times the rounded sigmoid, over
  // the sample (NaNs, infinities: -inf * 0 is NaN as the two nodes give it), in place, and
  // through every tail length of the vector paths.
  std::vector<float> x = sample_patterns();
  const std::vector<float> y = both_paths(x, [](const float* a, float* b, int64_t n) { silu(a, b, n); });
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = x[i] * sigmoid_steps(x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i])) << "x = " << x[i];
      continue;
    }
    ASSERT_EQ(bits(y[i]), bits(want)) << "x = " << x[i];
    ASSERT_EQ(bits(sigmoid(x[i])), bits(sigmoid_steps(x[i]))) << "x = " << x[i];
  }
  std::vector<float> in_place = x;
  silu(in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isnan(y[i])) {
      ASSERT_EQ(bits(in_place[i]), bits(y[i])) << "x = " << x[i];
    }
  }
  for (int64_t n = 1; n <= 40; ++n) {
    std::vector<float> v(static_cast<size_t>(n)), s(static_cast<size_t>(n)), w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.37f * static_cast<float>(i - n / 2);
    silu(v.data(), s.data(), n);
    sigmoid(v.data(), w.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float xi = v[static_cast<size_t>(i)];
      ASSERT_EQ(bits(s[static_cast<size_t>(i)]), bits(xi * sigmoid_steps(xi))) << "n = " << n << ", i = " << i;
      ASSERT_EQ(bits(w[static_cast<size_t>(i)]), bits(sigmoid_steps(xi))) << "n = " << n << ", i = " << i;
    }
  }
}

}  // namespace
}  // namespace vn::ops::vmath
