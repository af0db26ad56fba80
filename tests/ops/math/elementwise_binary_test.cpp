// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/ops/kernel_context.h"
#include "core/ops/op_registry.h"
#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(BinaryMath, SameShapeFloat) {
  const std::vector<float> a = {1.5f, -2.0f, 3.0f, 0.25f};
  const std::vector<float> b = {0.5f, 4.0f, -1.0f, 2.0f};
  struct Case {
    const char* op;
    std::vector<float> y;
  };
  const Case cases[] = {{"Add", {2.0f, 2.0f, 2.0f, 2.25f}},
                        {"Sub", {1.0f, -6.0f, 4.0f, -1.75f}},
                        {"Mul", {0.75f, -8.0f, -3.0f, 0.5f}},
                        {"Div", {3.0f, -0.5f, -3.0f, 0.125f}}};
  for (const Case& c : cases) {
    for (int64_t opset : {7, 13, 14}) {
      OpTester t(c.op, opset);
      t.input<float>({2, 2}, a).input<float>({2, 2}, b);
      t.output<float>({2, 2}, c.y);
      t.run();
    }
  }
}

TEST(BinaryMath, BroadcastRowColumnAndScalar) {
  OpTester row("Add", 14);
  row.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {10, 20, 30});
  row.output<float>({2, 3}, {11, 22, 33, 14, 25, 36});
  row.run();
  OpTester col("Sub", 14);
  col.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2, 1}, {1, 2});
  col.output<float>({2, 3}, {0, 1, 2, 2, 3, 4});
  col.run();
  OpTester scalar_left("Div", 14);
  scalar_left.input<float>({}, {12}).input<float>({3}, {1, 2, 4});
  scalar_left.output<float>({3}, {12, 6, 3});
  scalar_left.run();
  OpTester outer("Mul", 14);
  outer.input<float>({3, 1}, {1, 2, 3}).input<float>({1, 2}, {10, 100});
  outer.output<float>({3, 2}, {10, 100, 20, 200, 30, 300});
  outer.run();
}

TEST(BinaryMath, BroadcastRank4BiasAgainstOracle) {
  // An NCHW tensor plus a per-channel bias (C, 1, 1) and a 4-D vs 3-D broadcast in both directions.
  const std::vector<float> x = random_floats(2 * 3 * 4 * 5, 1);
  const std::vector<float> bias = random_floats(3, 2);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] + bias[(i / 20) % 3];
  OpTester t("Add", 14);
  t.input<float>({2, 3, 4, 5}, x).input<float>({3, 1, 1}, bias);
  t.output<float>({2, 3, 4, 5}, y);
  t.run();

  const std::vector<float> a = random_floats(2 * 1 * 4 * 1, 3);
  const std::vector<float> b = random_floats(3 * 1 * 5, 4);
  std::vector<float> z;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 5; ++w) z.push_back(a[n * 4 + h] * b[c * 5 + w]);
  OpTester m("Mul", 14);
  m.input<float>({2, 1, 4, 1}, a).input<float>({3, 1, 5}, b);
  m.output<float>({2, 3, 4, 5}, z);
  m.run();
}

TEST(BinaryMath, LargeTensorsSplitAmongThreads) {
  // Same shapes (one row, cut into chunks) and a per-channel scale (rows shared out), each large
  // enough for two threads.
  const std::vector<float> x = random_floats(2 * 16 * 48 * 48, 5), s = random_floats(16, 6),
                           u = random_floats(x.size(), 7);
  std::vector<float> prod(x.size()), sum(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    prod[i] = x[i] * s[(i / (48 * 48)) % 16];
    sum[i] = x[i] + u[i];
  }
  OpTester m("Mul", 14);
  m.input<float>({2, 16, 48, 48}, x).input<float>({16, 1, 1}, s).output<float>({2, 16, 48, 48}, prod);
  m.threads(2).run();
  OpTester a("Add", 14);
  a.input<float>({2, 16, 48, 48}, x).input<float>({2, 16, 48, 48}, u).output<float>({2, 16, 48, 48}, sum);
  a.threads(2).run();
}

TEST(BinaryMath, ZeroSizedBroadcast) {
  OpTester t("Add", 14);
  t.input<float>({0, 3}, {}).input<float>({1, 3}, {1, 2, 3});
  t.output<float>({0, 3}, {});
  t.run();
}

TEST(BinaryMath, IncompatibleBroadcastNamesShapes) {
  OpTester t("Add", 14);
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2}, {1, 2});
  t.expect_failure(StatusCode::kShapeMismatch, "shapes (2, 3) and (2,) cannot be broadcast together");
}

TEST(BinaryMath, MixedTypesFail) {
  OpTester t("Mul", 14);
  t.input<float>({1}, {1}).input<int64_t>({1}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "inputs A (float32) and B (int64) must have the same type");
}

TEST(BinaryMath, IntegerArithmeticWraps) {
  OpTester add("Add", 14);
  add.input<int32_t>({2}, {std::numeric_limits<int32_t>::max(), -5}).input<int32_t>({2}, {1, 3});
  add.output<int32_t>({2}, {std::numeric_limits<int32_t>::min(), -2});
  add.run();
  OpTester mul("Mul", 14);
  mul.input<uint8_t>({2}, {200, 3}).input<uint8_t>({2}, {2, 5});
  mul.output<uint8_t>({2}, {144, 15});
  mul.run();
  OpTester sub("Sub", 13);
  sub.input<int64_t>({2}, {std::numeric_limits<int64_t>::min(), 10}).input<int64_t>({}, {1});
  sub.output<int64_t>({2}, {std::numeric_limits<int64_t>::max(), 9});
  sub.run();
}

TEST(BinaryMath, IntegerDivTruncatesTowardZero) {
  // C/ONNX-reference truncation, not numpy floor division: -7 / 2 = -3.
  OpTester t("Div", 14);
  t.input<int64_t>({5}, {7, -7, 7, -7, std::numeric_limits<int64_t>::min()}).input<int64_t>({5}, {2, 2, -2, -2, -1});
  t.output<int64_t>({5}, {3, -3, -3, 3, std::numeric_limits<int64_t>::min()});
  t.run();
  OpTester u("Div", 14);
  u.input<uint32_t>({2}, {7, 4000000000u}).input<uint32_t>({}, {2});
  u.output<uint32_t>({2}, {3, 2000000000u});
  u.run();
}

TEST(BinaryMath, IntegerDivisionByZeroIsAnError) {
  OpTester t("Div", 14);
  t.input<int32_t>({3}, {1, 2, 3}).input<int32_t>({3}, {1, 0, 1});
  t.expect_failure(StatusCode::kNumericFailure, "integer division by zero");
}

TEST(BinaryMath, FloatDivisionByZeroGivesInf) {
  OpTester t("Div", 14);
  t.input<float>({3}, {1, -1, 0}).input<float>({}, {0});
  t.output<float>({3}, {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN()});
  t.run();
}

TEST(BinaryMath, DoubleAndInt8) {
  OpTester d("Sub", 14);
  d.input<double>({2}, {0.1, 0.2}).input<double>({2}, {0.3, 0.3});
  d.output<double>({2}, {0.1 - 0.3, 0.2 - 0.3});
  d.run();
  OpTester i("Add", 14);
  i.input<int8_t>({2}, {127, -100}).input<int8_t>({2}, {1, -100});
  i.output<int8_t>({2}, {-128, 56});
  i.run();
}

TEST(BinaryMath, LegacyBroadcastOpset6) {
  // Opset < 7: B matches a run of A's dims starting at `axis` (default: the trailing dims).
  OpTester trailing("Add", 6);
  trailing.attr("broadcast", int64_t{1});
  trailing.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {10, 20, 30});
  trailing.output<float>({2, 3}, {11, 22, 33, 14, 25, 36});
  trailing.run();
  OpTester axis0("Mul", 6);
  axis0.attr("broadcast", int64_t{1}).attr("axis", int64_t{0});
  axis0.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({2}, {10, 100});
  axis0.output<float>({2, 3}, {10, 20, 30, 400, 500, 600});
  axis0.run();
  OpTester channel("Add", 1);
  channel.attr("broadcast", int64_t{1}).attr("axis", int64_t{1});
  channel.input<float>({1, 2, 2}, {1, 2, 3, 4}).input<float>({2}, {10, 20});
  channel.output<float>({1, 2, 2}, {11, 12, 23, 24});
  channel.run();
}

TEST(BinaryMath, LegacyWithoutBroadcastNeedsEqualShapes) {
  OpTester t("Add", 6);
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {1, 2, 3});
  t.expect_failure(StatusCode::kShapeMismatch, "broadcast=0");
  OpTester ok("Sub", 6);
  ok.input<float>({2}, {5, 6}).input<float>({2}, {1, 2});
  ok.output<float>({2}, {4, 4});
  ok.run();
}

TEST(BinaryMath, LegacyBadAxisFails) {
  OpTester t("Add", 6);
  t.attr("broadcast", int64_t{1}).attr("axis", int64_t{2});
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({3}, {1, 2, 3});
  t.expect_failure(StatusCode::kInvalidModel, "axis 2 does not place B");
}

// ---- Pow ---------------------------------------------------------------------------------------

TEST(Pow, FloatWithBroadcast) {
  OpTester t("Pow", 7);
  t.input<float>({2, 2}, {2, 3, 4, -2}).input<float>({2}, {2, 0.5f});
  t.output<float>({2, 2}, {4, std::sqrt(3.0f), 16, std::numeric_limits<float>::quiet_NaN()});
  t.run();
}

TEST(Pow, MixedTypesAtOpset12) {
  OpTester f("Pow", 12);
  f.input<float>({3}, {2, 3, 0.5f}).input<int64_t>({3}, {3, -1, 2});
  f.output<float>({3}, {8, 1.0f / 3.0f, 0.25f});
  f.run();
  OpTester i("Pow", 15);
  i.input<int32_t>({4}, {2, -3, 4, 9}).input<float>({4}, {10, 3, 0.5f, 0.5f});
  i.output<int32_t>({4}, {1024, -27, 2, 3});
  i.run();
}

TEST(Pow, IntegerExponentiationIsExact) {
  OpTester t("Pow", 13);
  t.input<int64_t>({5}, {3, -2, 1, -1, 5}).input<int64_t>({5}, {39, 3, -4, -3, -1});
  t.output<int64_t>({5}, {4052555153018976267LL, -8, 1, -1, 0});
  t.run();
}

TEST(Pow, ZeroToNegativeIntegerPowerFails) {
  OpTester t("Pow", 13);
  t.input<int32_t>({2}, {0, 2}).input<int32_t>({}, {-1});
  t.expect_failure(StatusCode::kNumericFailure, "0 raised to a negative power");
}

TEST(Pow, SweepAgainstStdPow) {
  const std::vector<float> base = random_floats(50, 11, 0.1f, 4.0f);
  const std::vector<float> expo = random_floats(50, 12, -3.0f, 3.0f);
  std::vector<float> y;
  for (size_t i = 0; i < base.size(); ++i) y.push_back(static_cast<float>(std::pow(double(base[i]), double(expo[i]))));
  OpTester t("Pow", 15);
  t.input<float>({50}, base).input<float>({50}, expo);
  t.output<float>({50}, y);
  t.tolerance(1e-6, 2e-6);
  t.run();
}

TEST(Pow, ScalarExponentTwoIsTheExactlyRoundedSquare) {
  // Wide values whose squares need rounding; bit-exact against x*x (a correctly rounded product),
  // for a float exponent, an int64 one (opset 12 mixed types) and a double base.
  const std::vector<float> x = random_floats(4096, 21, -3e3f, 3e3f);
  std::vector<float> squares;
  for (float v : x) squares.push_back(v * v);
  OpTester f("Pow", 15);
  f.input<float>({64, 64}, x).input<float>({1}, {2.0f});
  f.output<float>({64, 64}, squares);
  f.tolerance(0, 0);
  f.run();
  OpTester i("Pow", 15);
  i.input<float>({64, 64}, x).input<int64_t>({}, {2});
  i.output<float>({64, 64}, squares);
  i.tolerance(0, 0);
  i.run();
  std::vector<double> xd, squares_d;
  for (float v : x) xd.push_back(static_cast<double>(v) * 1.000000123), squares_d.push_back(xd.back() * xd.back());
  OpTester d("Pow", 15);
  d.input<double>({4096}, xd).input<double>({}, {2.0});
  d.output<double>({4096}, squares_d);
  d.tolerance(0, 0);
  d.run();
  // An exponent of higher rank still broadcasts the output up to it.
  OpTester b("Pow", 15);
  b.input<float>({2}, {3, -4}).input<float>({1, 1}, {2.0f});
  b.output<float>({1, 2}, {9, 16});
  b.run();
}

TEST(Pow, Opset1LegacyBroadcast) {
  OpTester t("Pow", 1);
  t.attr("broadcast", int64_t{1});
  t.input<float>({2, 2}, {1, 2, 3, 4}).input<float>({}, {2});
  t.output<float>({2, 2}, {1, 4, 9, 16});
  t.run();
}

TEST(Mod, IntegerSignFollowsTheDivisorUnlessFmod) {
  const std::vector<int32_t> a = {-4, 7, 5, 4, -7, 8, -2147483647 - 1};
  const std::vector<int32_t> b = {2, -3, 8, -2, 3, 5, -1};
  OpTester t("Mod", 13);
  t.input<int32_t>({7}, a).input<int32_t>({7}, b);
  t.output<int32_t>({7}, {0, -2, 5, 0, 2, 3, 0});
  t.run();
  OpTester f("Mod", 10);
  f.attr("fmod", int64_t{1});
  f.input<int32_t>({7}, a).input<int32_t>({7}, b);
  f.output<int32_t>({7}, {0, 1, 5, 0, -1, 3, 0});
  f.run();
}

TEST(Mod, UnsignedAndBroadcast) {
  OpTester t("Mod", 13);
  t.input<uint8_t>({2, 2}, {250, 7, 9, 0}).input<uint8_t>({2}, {7, 4});
  t.output<uint8_t>({2, 2}, {5, 3, 2, 0});
  t.run();
}

TEST(Mod, FloatFmodKeepsTheDividendSign) {
  OpTester t("Mod", 13);
  t.attr("fmod", int64_t{1});
  t.input<float>({4}, {-4.3f, 7.2f, 5.0f, -0.0f}).input<float>({4}, {2.1f, -3.4f, 8.0f, 1.0f});
  t.output<float>({4}, {std::fmod(-4.3f, 2.1f), std::fmod(7.2f, -3.4f), 5.0f, -0.0f});
  t.run();
  OpTester h("Mod", 13);
  h.attr("fmod", int64_t{1});
  h.input(Tensor::from_vector<Eigen::half>({3}, {Eigen::half(-4.5f), Eigen::half(7.0f), Eigen::half(3.0f)}));
  h.input(Tensor::from_vector<Eigen::half>({3}, {Eigen::half(2.0f), Eigen::half(-3.0f), Eigen::half(-2.5f)}));
  h.output(Tensor::from_vector<Eigen::half>({3}, {Eigen::half(-0.5f), Eigen::half(1.0f), Eigen::half(0.5f)}));
  h.run();
}

TEST(Mod, Version28FloorModForFloats) {
  // numpy.mod: the sign of the divisor, a zero remainder signed like it, x mod inf = inf for
  // negative x, x mod 0 = NaN.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("Mod", 28);
  t.input<float>({10}, {5.5f, -5.5f, 5.5f, -5.5f, 0.0f, -0.0f, 3.0f, -3.0f, 2.0f, 7.0f});
  t.input<float>({10}, {2.0f, 2.0f, -2.0f, -2.0f, -3.0f, 3.0f, inf, inf, 0.0f, -inf});
  const std::vector<Tensor> out =
      t.output<float>({10}, {1.5f, 0.5f, -0.5f, -1.5f, -0.0f, 0.0f, 3.0f, inf, nan, -inf}).run();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::signbit(out[0].data<float>()[4]));
  EXPECT_FALSE(std::signbit(out[0].data<float>()[5]));
  OpTester d("Mod", 28);
  d.input<double>({2}, {-7.25, 7.25}).input<double>({1}, {2.0});
  d.output<double>({2}, {0.75, 1.25});
  d.run();
  // fmod = 1 and the integers keep their meaning.
  OpTester f("Mod", 28);
  f.attr("fmod", int64_t{1});
  f.input<float>({2}, {-5.5f, 5.5f}).input<float>({2}, {2.0f, -2.0f});
  f.output<float>({2}, {-1.5f, 1.5f});
  f.run();
  OpTester i("Mod", 28);
  i.input<int8_t>({3}, {-4, 7, -7}).input<int8_t>({3}, {3, -3, -3});
  i.output<int8_t>({3}, {2, -2, -1});
  i.run();
}

TEST(Mod, ErrorsNameTheProblem) {
  OpTester f("Mod", 13);
  f.input<float>({1}, {1}).input<float>({1}, {1});
  f.expect_failure(StatusCode::kInvalidModel, "fmod must be 1 for floating-point inputs (float32), got 0");
  OpTester z("Mod", 13);
  z.input<int64_t>({2}, {1, 2}).input<int64_t>({2}, {3, 0});
  z.expect_failure(StatusCode::kNumericFailure, "integer division by zero (divisor B is 0 at flat index 1)");
  OpTester m("Mod", 13);
  m.input<int64_t>({1}, {1}).input<int32_t>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "must have the same type");
}

// float16 results are numpy's (computed in float32, rounded once), on values where the rounding
// matters: ties to even, overflow to inf and results among the subnormals.
TEST(BinaryMath, Float16RoundsOnceToNearestEven) {
  const float kTiny = std::ldexp(1.0f, -24);  // the smallest float16 subnormal
  const float kInf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* op;
    std::vector<float> a, b, y;
  };
  const Case cases[] = {
      // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even, 1; 1 + 3 * 2^-11 goes up to 1 + 2^-9.
      // 65504 + 16 is a tie between the largest float16 and 65536: to even, inf.
      {"Add",
       {1, 1, 65504, 0.0999755859375f},
       {std::ldexp(1.0f, -11), 3 * std::ldexp(1.0f, -11), 16, 0.199951171875f},
       {1, 1.001953125f, kInf, 0.2998046875f}},
      // 2049 and 2051 are ties: to 2048 and 2052, whose last bits are even.
      {"Sub", {2050, 2052, -65504}, {1, 1, 16}, {2048, 2052, -kInf}},
      // Halving the smallest subnormal ties to 0; 3/2 of it ties up to 2^-23.
      {"Mul", {kTiny, 3 * kTiny, 65504}, {0.5f, 0.5f, 2}, {0, 2 * kTiny, kInf}},
      {"Div", {1, kTiny, 1, -1}, {3, 0.5f, 0, 0}, {0.333251953125f, 2 * kTiny, kInf, -kInf}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const int64_t n = static_cast<int64_t>(c.a.size());
    for (int64_t opset : {7, 14}) {
      OpTester t(c.op, opset);
      t.input(narrow_tensor<Eigen::half>({n}, c.a)).input(narrow_tensor<Eigen::half>({n}, c.b));
      t.output(narrow_tensor<Eigen::half>({n}, c.y));
      t.run();
    }
  }
  // Broadcast: a float16 scalar against a row.
  OpTester s("Mul", 14);
  s.input(narrow_tensor<Eigen::half>({}, {0.5f})).input(narrow_tensor<Eigen::half>({3}, {kTiny, 3 * kTiny, 2}));
  s.output(narrow_tensor<Eigen::half>({3}, {0, 2 * kTiny, 1}));
  s.run();
}

TEST(BinaryMath, BFloat16RoundsOnceToNearestEven) {
  const float kMax = std::ldexp(255.0f, 120);  // the largest bfloat16, 0x7f7f
  struct Case {
    const char* op;
    std::vector<float> a, b, y;
  };
  const Case cases[] = {
      // 1 + 2^-8 ties to 1; 1 + 3 * 2^-8 ties up to 1 + 2^-6; the largest bfloat16 plus half its
      // last place ties to inf (float32 still holds the sum).
      {"Add",
       {1, 1, kMax},
       {std::ldexp(1.0f, -8), 3 * std::ldexp(1.0f, -8), std::ldexp(1.0f, 119)},
       {1, 1.015625f, std::numeric_limits<float>::infinity()}},
      {"Sub", {1, 258}, {std::ldexp(1.0f, -9), 1}, {1, 256}},
      {"Mul", {3, 1.5f}, {1.0078125f, 1.0078125f}, {3.03125f, 1.515625f}},
      {"Div", {1, 2}, {3, 3}, {0.333984375f, 0.66796875f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const int64_t n = static_cast<int64_t>(c.a.size());
    OpTester t(c.op, 14);
    t.input(narrow_tensor<Eigen::bfloat16>({n}, c.a)).input(narrow_tensor<Eigen::bfloat16>({n}, c.b));
    t.output(narrow_tensor<Eigen::bfloat16>({n}, c.y));
    t.run();
  }
}

TEST(Pow, Float16InFloatAndRoundedOnce) {
  // 3^0.5 = 1.7320508 rounds to 1.7324219, float16's nearest; 2^16 overflows to inf.
  OpTester t("Pow", 15);
  t.input(narrow_tensor<Eigen::half>({3}, {3, 2, -2})).input(narrow_tensor<Eigen::half>({3}, {0.5f, 16, 3}));
  t.output(narrow_tensor<Eigen::half>({3}, {1.732421875f, std::numeric_limits<float>::infinity(), -8}));
  t.run();
  OpTester m("Pow", 15);
  m.input(narrow_tensor<Eigen::half>({1}, {2})).input<int64_t>({1}, {3});
  m.expect_failure(StatusCode::kUnsupportedDType, "a float16 base takes an exponent of its own type only, got int64");
}

TEST(BinaryMath, OutputTakesTheBufferOfADyingOperandOfItsShape) {
  // An SE block's Mul(scale [1,C,1,1], x [1,C,H,W]): the reference marks x dying after its last
  // reader, and the product is written over it rather than into fresh memory, whichever side x is
  // on; the values are those of a fresh output.
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const int big : {0, 1}) {
      Node node;
      node.op_type = op;
      node.inputs = {"a", "b"};
      node.outputs = {"y"};
      std::vector<float> xv(2 * 3 * 4);
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.5f + static_cast<float>(i);
      Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, xv);
      const Tensor scale = Tensor::from_vector<float>({1, 2, 1, 1}, {2.0f, -4.0f});
      const void* x_buffer = x.raw();
      const Tensor* in[2] = {big == 0 ? &x : &scale, big == 0 ? &scale : &x};
      std::vector<Tensor> out(1);
      KernelContext ctx(node, 0, 14, std::span<const Tensor* const>(in), std::span<Tensor>(out));
      const char dying[] = {1, 1};
      ctx.set_dying_inputs(dying);
      const KernelDef* def = reference_registry().find("", op, 14);
      ASSERT_NE(def, nullptr);
      const Status st = def->fn(ctx);
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(out[0].raw(), x_buffer) << op << " with x as input " << big;
      const float* y = out[0].data<float>();
      for (size_t i = 0; i < xv.size(); ++i) {
        const float s = i < 12 ? 2.0f : -4.0f;
        const float a = big == 0 ? xv[i] : s, b = big == 0 ? s : xv[i];
        const std::string name = op;
        const float want = name == "Add" ? a + b : name == "Sub" ? a - b : name == "Mul" ? a * b : a / b;
        ASSERT_EQ(y[i], want) << op << " at " << i << " with x as input " << big;
      }
    }
  }
}

}  // namespace
}  // namespace vn::ops::testing
