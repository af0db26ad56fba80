// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(UnaryMath, FloatSweepsAgainstDoubleOracle) {
  for (int64_t opset : {6, 13}) {
    unary_sweep("Abs", opset, [](double x) { return std::abs(x); });
    unary_sweep("Neg", opset, [](double x) { return -x; });
    unary_sweep("Exp", opset, [](double x) { return std::exp(x); });
    unary_sweep("Log", opset, [](double x) { return std::log(x); });
    unary_sweep("Sqrt", opset, [](double x) { return std::sqrt(x); });
    unary_sweep("Reciprocal", opset, [](double x) { return 1.0 / x; });
    unary_sweep("Floor", opset, [](double x) { return std::floor(x); });
    unary_sweep("Ceil", opset, [](double x) { return std::ceil(x); });
  }
  for (int64_t opset : {9, 13}) unary_sweep("Erf", opset, [](double x) { return std::erf(x); });
}

TEST(UnaryMath, HandComputedValues) {
  OpTester e("Exp", 13);
  e.input<float>({3}, {0.0f, 1.0f, -1.0f});
  e.output<float>({3}, {1.0f, 2.7182817f, 0.36787945f});
  e.run();
  OpTester l("Log", 13);
  l.input<float>({4}, {1.0f, 0.0f, -1.0f, 100.0f});
  l.output<float>({4},
                  {0.0f, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 4.6051702f});
  l.run();
  OpTester f("Floor", 13);
  f.input<float>({4}, {-1.5f, -0.5f, 0.5f, 2.0f});
  f.output<float>({4}, {-2.0f, -1.0f, 0.0f, 2.0f});
  f.run();
  OpTester c("Ceil", 6);
  c.input<float>({4}, {-1.5f, -0.5f, 0.5f, 2.0f});
  c.output<float>({4}, {-1.0f, -0.0f, 1.0f, 2.0f});
  c.run();
  OpTester r("Reciprocal", 13);
  r.input<double>({3}, {2.0, -4.0, 0.0});
  r.output<double>({3}, {0.5, -0.25, std::numeric_limits<double>::infinity()});
  r.run();
  OpTester s("Sqrt", 13);
  s.input<double>({3}, {4.0, 2.0, 0.0});
  s.output<double>({3}, {2.0, std::sqrt(2.0), 0.0});
  s.run();
  OpTester er("Erf", 13);
  er.input<float>({3}, {0.0f, 0.5f, -2.0f});
  er.output<float>({3}, {0.0f, 0.52049988f, -0.99532227f});
  er.run();
}

TEST(UnaryMath, AbsAndNegOnIntegersWrap) {
  OpTester a("Abs", 13);
  a.input<int32_t>({4}, {-5, 0, 7, std::numeric_limits<int32_t>::min()});
  a.output<int32_t>({4}, {5, 0, 7, std::numeric_limits<int32_t>::min()});
  a.run();
  OpTester u("Abs", 13);
  u.input<uint8_t>({2}, {0, 255});
  u.output<uint8_t>({2}, {0, 255});
  u.run();
  OpTester n("Neg", 13);
  n.input<int64_t>({3}, {-5, 9, std::numeric_limits<int64_t>::min()});
  n.output<int64_t>({3}, {5, -9, std::numeric_limits<int64_t>::min()});
  n.run();
  OpTester i8("Neg", 6);
  i8.input<int8_t>({2}, {-128, 127});
  i8.output<int8_t>({2}, {-128, -127});
  i8.run();
}

TEST(UnaryMath, NegRejectsUnsigned) {
  OpTester t("Neg", 13);
  t.input<uint32_t>({1}, {1});
  t.expect_failure(StatusCode::kUnsupportedDType, "uint32");
}

TEST(UnaryMath, ExpRejectsIntegers) {
  OpTester t("Exp", 13);
  t.input<int32_t>({1}, {1});
  t.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(UnaryMath, FloatOnlyOpsNameTheRejectedType) {
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Floor", "Ceil", "Sigmoid", "Tanh", "Selu",
                         "HardSigmoid", "HardSwish", "Softplus", "LeakyRelu"}) {
    OpTester t(op, 14);
    t.input<int32_t>({2}, {1, 2});
    t.expect_failure(StatusCode::kUnsupportedDType,
                     "input of type int32 is not supported (supported: float32, float64, float16, bfloat16)");
  }
}

TEST(UnaryMath, TrigonometricSweeps) {
  unary_sweep("Sin", 7, [](double x) { return std::sin(x); });
  unary_sweep("Cos", 7, [](double x) { return std::cos(x); });
  unary_sweep("Tan", 7, [](double x) { return std::tan(x); });
  unary_sweep("Atan", 7, [](double x) { return std::atan(x); });
  // asin/acos are NaN outside [-1, 1], acosh below 1 and atanh outside (-1, 1): the sweep covers
  // both sides of each domain edge.
  unary_sweep("Asin", 7, [](double x) { return std::asin(x); });
  unary_sweep("Acos", 7, [](double x) { return std::acos(x); });
}

TEST(UnaryMath, HyperbolicSweeps) {
  unary_sweep("Sinh", 9, [](double x) { return std::sinh(x); });
  unary_sweep("Cosh", 9, [](double x) { return std::cosh(x); });
  unary_sweep("Asinh", 9, [](double x) { return std::asinh(x); });
  unary_sweep("Acosh", 9, [](double x) { return std::acosh(x); });
  unary_sweep("Atanh", 9, [](double x) { return std::atanh(x); });
}

TEST(UnaryMath, TrigonometricDouble) {
  OpTester t("Atanh", 9);
  t.input<double>({3}, {0.0, 0.5, -0.999});
  t.output<double>({3}, {0.0, std::atanh(0.5), std::atanh(-0.999)});
  t.run();
}

TEST(UnaryMath, RoundHalvesToEven) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  OpTester t("Round", 11);
  t.input<float>({11}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f, nan, inf, -0.0f});
  t.output<float>({11}, {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -2.0f, 2.0f, -3.0f, nan, inf, -0.0f});
  t.tolerance(0, 0);
  t.run();
}

TEST(UnaryMath, SignOnFloatsAndIntegers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester f("Sign", 13);
  f.input<float>({5}, {-3.5f, 0.0f, 2.0f, nan, -0.0f});
  f.output<float>({5}, {-1.0f, 0.0f, 1.0f, nan, 0.0f});
  f.run();
  OpTester i("Sign", 9);
  i.input<int8_t>({4}, {-128, 0, 5, 127});
  i.output<int8_t>({4}, {-1, 0, 1, 1});
  i.run();
  OpTester u("Sign", 13);
  u.input<uint32_t>({2}, {0, 4000000000u});
  u.output<uint32_t>({2}, {0, 1});
  u.run();
}

TEST(UnaryMath, IsNaNAndIsInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.0f, nan, inf, -inf, -0.0f};
  OpTester n("IsNaN", 13);
  n.input<float>({5}, x);
  n.output<bool>({5}, {false, true, false, false, false});
  n.run();
  OpTester both("IsInf", 10);
  both.input<float>({5}, x);
  both.output<bool>({5}, {false, false, true, true, false});
  both.run();
  OpTester pos("IsInf", 10);
  pos.attr("detect_negative", int64_t{0});
  pos.input<float>({5}, x);
  pos.output<bool>({5}, {false, false, true, false, false});
  pos.run();
  OpTester neg("IsInf", 10);
  neg.attr("detect_positive", int64_t{0});
  neg.input<double>({3}, {-INFINITY, INFINITY, 0.0});
  neg.output<bool>({3}, {true, false, false});
  neg.run();
}

TEST(UnaryMath, NewFloatOpsRejectIntegers) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                         "Round", "Softsign", "ThresholdedRelu", "IsNaN", "IsInf", "Celu", "Elu"}) {
    OpTester t(op, 13);
    t.input<int32_t>({2}, {1, 2});
    t.expect_failure(StatusCode::kUnsupportedDType,
                     "input of type int32 is not supported (supported: float32, float64, float16, bfloat16)");
  }
}

TEST(UnaryMath, SignAndShrinkRejectBool) {
  for (const char* op : {"Sign", "Shrink"}) {
    OpTester t(op, 13);
    t.input<bool>({1}, {true});
    t.expect_failure(StatusCode::kUnsupportedDType, "input of type bool is not supported");
  }
}

TEST(UnaryMath, KeepsShapeIncludingScalarsAndEmpty) {
  OpTester s("Abs", 13);
  s.input<float>({}, {-2.5f});
  s.output<float>({}, {2.5f});
  s.run();
  OpTester e("Sqrt", 13);
  e.input<float>({2, 0, 4}, {});
  e.output<float>({2, 0, 4}, {});
  e.run();
}

TEST(UnaryMath, MissingInputFails) {
  OpTester t("Exp", 13);
  t.omitted_input();
  t.unchecked_output();
  t.expect_failure(StatusCode::kInvalidModel, "required input 0 is missing");
}

TEST(UnaryMath, UnknownOpsetHasNoKernel) {
  OpTester t("Erf", 8);
  t.input<float>({1}, {0.0f});
  t.unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedOp, "no reference kernel for Erf at opset 8");
}

TEST(UnaryMath, IsNaNAndIsInfOnHalfTypes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // 65504 and 3.3895e38 are the largest finite float16 and bfloat16: not infinities.
  const std::vector<float> h = {-1.2001953125f, nan, inf, 65504, -inf, 0};
  const std::vector<float> b = {-1.203125f, nan, inf, std::ldexp(255.0f, 120), -inf, 0};
  OpTester n("IsNaN", 20);
  n.input(narrow_tensor<Eigen::half>({6}, h));
  n.output<bool>({6}, {false, true, false, false, false, false});
  n.run();
  OpTester nb("IsNaN", 20);
  nb.input(narrow_tensor<Eigen::bfloat16>({6}, b));
  nb.output<bool>({6}, {false, true, false, false, false, false});
  nb.run();
  OpTester i("IsInf", 20);
  i.input(narrow_tensor<Eigen::half>({6}, h));
  i.output<bool>({6}, {false, false, true, false, true, false});
  i.run();
  OpTester ib("IsInf", 20);
  ib.attr("detect_positive", int64_t{0});
  ib.input(narrow_tensor<Eigen::bfloat16>({6}, b));
  ib.output<bool>({6}, {false, false, false, false, true, false});
  ib.run();
}

// Unary math on float16 and bfloat16 computes in float and rounds once, as numpy's float16 loops
// do (the float16 values are numpy 1.24's): exp(1) = 2.71875, sqrt(2) = 1.4140625, 1/3 =
// 0.333251953125. Abs, Neg and Sign are exact, as Floor on the largest float16.
TEST(UnaryMath, HalfTypesComputeInFloatAndRoundOnce) {
  struct Case {
    const char* op;
    std::vector<float> x, y;
  };
  const std::vector<float> x = {1, 2, 3, -0.5f};
  const std::vector<float> pos = {1, 2, 3, 0.5f};
  const Case cases[] = {{"Exp", x, {2.71875f, 7.390625f, 20.078125f, 0.6064453125f}},
                        {"Sqrt", pos, {1, 1.4140625f, 1.732421875f, 0.70703125f}},
                        {"Log", pos, {0, 0.693359375f, 1.0986328125f, -0.693359375f}},
                        {"Reciprocal", x, {1, 0.5f, 0.333251953125f, -2}},
                        {"Tanh", x, {0.76171875f, 0.9638671875f, 0.9951171875f, -0.462158203125f}},
                        {"Sigmoid", x, {0.73095703125f, 0.880859375f, 0.95263671875f, 0.37744140625f}},
                        {"Neg", x, {-1, -2, -3, 0.5f}},
                        {"Abs", x, {1, 2, 3, 0.5f}},
                        {"Sign", x, {1, 1, 1, -1}},
                        {"Relu", x, {1, 2, 3, 0}}};
  for (const Case& c : cases) {
    OpTester t(c.op, 13);
    t.input(narrow_tensor<Eigen::half>({4}, c.x));
    t.output(narrow_tensor<Eigen::half>({4}, c.y));
    t.run();
  }
  // bfloat16 (8 bits): 1/3 = 0.333984375.
  OpTester b("Reciprocal", 13);
  b.input(narrow_tensor<Eigen::bfloat16>({3}, {3, -65536, 0}));
  b.output(narrow_tensor<Eigen::bfloat16>({3}, {0.333984375f, -std::ldexp(1.0f, -16),
                                                std::numeric_limits<float>::infinity()}));
  b.run();
  OpTester f("Floor", 13);
  f.input(narrow_tensor<Eigen::half>({3}, {65504, -0.5f, 2.5f}));
  f.output(narrow_tensor<Eigen::half>({3}, {65504, -1, 2}));
  f.run();
}

}  // namespace
}  // namespace vn::ops::testing
