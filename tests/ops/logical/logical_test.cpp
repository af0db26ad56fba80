// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include <Eigen/Core>

#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Logical, ComparisonsOnFloatsWithBroadcast) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {2, 5, 6};
  OpTester eq("Equal", 13);
  eq.input<float>({2, 3}, a).input<float>({3}, b);
  eq.output<bool>({2, 3}, {false, false, false, false, true, true});
  eq.run();
  OpTester lt("Less", 13);
  lt.input<float>({2, 3}, a).input<float>({3}, b);
  lt.output<bool>({2, 3}, {true, true, true, false, false, false});
  lt.run();
  OpTester gt("Greater", 9);
  gt.input<float>({2, 3}, a).input<float>({3}, b);
  gt.output<bool>({2, 3}, {false, false, false, true, false, false});
  gt.run();
}

TEST(Logical, ComparisonsOnIntegersForShapeArithmetic) {
  OpTester eq("Equal", 11);
  eq.input<int64_t>({4}, {1, -1, 0, 7}).input<int64_t>({}, {-1});
  eq.output<bool>({4}, {false, true, false, false});
  eq.run();
  OpTester lt("Less", 9);
  lt.input<int32_t>({3}, {-2, 0, 2}).input<int32_t>({3}, {0, 0, 0});
  lt.output<bool>({3}, {true, false, false});
  lt.run();
  OpTester gt("Greater", 13);
  gt.input<uint64_t>({2}, {1, 18446744073709551615ull}).input<uint64_t>({}, {2});
  gt.output<bool>({2}, {false, true});
  gt.run();
}

TEST(Logical, NaNComparesFalse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Equal", "Less", "Greater"}) {
    OpTester t(op, 13);
    t.input<float>({1}, {nan}).input<float>({1}, {nan});
    t.output<bool>({1}, {false});
    t.run();
  }
}

TEST(Logical, EqualOnBools) {
  OpTester t("Equal", 13);
  t.input<bool>({4}, {true, true, false, false}).input<bool>({4}, {true, false, true, false});
  t.output<bool>({4}, {true, false, false, true});
  t.run();
}

TEST(Logical, AndOrNot) {
  const std::vector<bool> a = {true, true, false, false}, b = {true, false, true, false};
  OpTester and_op("And", 7);
  and_op.input<bool>({4}, a).input<bool>({4}, b);
  and_op.output<bool>({4}, {true, false, false, false});
  and_op.run();
  OpTester or_op("Or", 7);
  or_op.input<bool>({4}, a).input<bool>({4}, b);
  or_op.output<bool>({4}, {true, true, true, false});
  or_op.run();
  OpTester not_op("Not", 1);
  not_op.input<bool>({2, 2}, a);
  not_op.output<bool>({2, 2}, {false, false, true, true});
  not_op.run();
  OpTester bc("Or", 7);
  bc.input<bool>({2, 1}, {true, false}).input<bool>({1, 2}, {false, true});
  bc.output<bool>({2, 2}, {true, true, false, true});
  bc.run();
}

TEST(Logical, Opset1LegacyBroadcast) {
  OpTester t("Greater", 1);
  t.attr("broadcast", int64_t{1});
  t.input<float>({2, 2}, {1, 5, 3, 2}).input<float>({2}, {2, 2});
  t.output<bool>({2, 2}, {false, true, true, false});
  t.run();
  OpTester a("And", 1);
  a.attr("broadcast", int64_t{1}).attr("axis", int64_t{0});
  a.input<bool>({2, 2}, {true, true, true, false}).input<bool>({2}, {false, true});
  a.output<bool>({2, 2}, {false, false, true, false});
  a.run();
}

TEST(Logical, LogicOpsRejectNonBool) {
  OpTester t("And", 7);
  t.input<float>({1}, {1}).input<float>({1}, {1});
  t.expect_failure(StatusCode::kUnsupportedDType, "input of type float32 is not supported (supported: bool)");
  OpTester n("Not", 1);
  n.input<int32_t>({1}, {1});
  n.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(Logical, ComparisonErrors) {
  OpTester mix("Equal", 13);
  mix.input<int64_t>({1}, {1}).input<int32_t>({1}, {1});
  mix.expect_failure(StatusCode::kInvalidModel, "must have the same type");
  OpTester shape("Less", 13);
  shape.input<float>({3}, {1, 2, 3}).input<float>({4}, {1, 2, 3, 4});
  shape.expect_failure(StatusCode::kShapeMismatch, "shapes (3,) and (4,) cannot be broadcast together");
  OpTester str("Less", 13);
  str.input<bool>({1}, {true}).input<bool>({1}, {false});
  str.expect_failure(StatusCode::kUnsupportedDType, "bool");
}

TEST(Logical, GreaterOrEqualAndLessOrEqual) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t opset : {12, 16}) {
    OpTester ge("GreaterOrEqual", opset);
    ge.input<float>({2, 3}, {1, 2, 3, 4, 5, nan}).input<float>({3}, {2, 2, 2});
    ge.output<bool>({2, 3}, {false, true, true, true, true, false});
    ge.run();
    OpTester le("LessOrEqual", opset);
    le.input<int64_t>({4}, {-1, 0, 1, 2}).input<int64_t>({}, {1});
    le.output<bool>({4}, {true, true, true, false});
    le.run();
  }
  OpTester h("LessOrEqual", 16);
  h.input(Tensor::from_vector<Eigen::half>({2}, {Eigen::half(1.5f), Eigen::half(2.5f)}));
  h.input(Tensor::from_vector<Eigen::half>({2}, {Eigen::half(1.5f), Eigen::half(2.0f)}));
  h.output<bool>({2}, {true, false});
  h.run();
}

TEST(Logical, OrEqualComparisonsNeedOneTypeAndBroadcastableShapes) {
  OpTester t("GreaterOrEqual", 16);
  t.input<float>({1}, {1}).input<double>({1}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "inputs A (float32) and B (float64) must have the same type");
  OpTester s("LessOrEqual", 12);
  s.input<int32_t>({2}, {1, 2}).input<int32_t>({3}, {1, 2, 3});
  s.expect_failure(StatusCode::kShapeMismatch, "(2,)");
}

TEST(Logical, XorWithBroadcastAndLegacyAxis) {
  OpTester x("Xor", 7);
  x.input<bool>({2, 2}, {true, true, false, false}).input<bool>({2}, {true, false});
  x.output<bool>({2, 2}, {false, true, true, false});
  x.run();
  OpTester l("Xor", 1);
  l.attr("broadcast", int64_t{1}).attr("axis", int64_t{0});
  l.input<bool>({2, 2}, {true, true, false, false}).input<bool>({2}, {true, false});
  l.output<bool>({2, 2}, {false, false, false, false});
  l.run();
  OpTester f("Xor", 7);
  f.input<int32_t>({1}, {1}).input<int32_t>({1}, {1});
  f.expect_failure(StatusCode::kUnsupportedDType, "input of type int32 is not supported (supported: bool)");
}

TEST(Logical, BitShiftBothDirections) {
  OpTester l("BitShift", 11);
  l.attr("direction", "LEFT");
  l.input<uint8_t>({4}, {1, 255, 3, 1}).input<uint8_t>({4}, {7, 1, 0, 8});
  l.output<uint8_t>({4}, {128, 254, 3, 0});
  l.run();
  OpTester r("BitShift", 11);
  r.attr("direction", "RIGHT");
  r.input<uint64_t>({3}, {0xFFFFFFFFFFFFFFFFull, 16, 5}).input<uint64_t>({}, {4});
  r.output<uint64_t>({3}, {0x0FFFFFFFFFFFFFFFull, 1, 0});
  r.run();
  OpTester w("BitShift", 11);
  w.attr("direction", "RIGHT");
  w.input<uint32_t>({2}, {0x80000000u, 7}).input<uint32_t>({2}, {31, 40});
  w.output<uint32_t>({2}, {1, 0});
  w.run();
}

TEST(Logical, BitShift28SignedAsNumpy) {
  // Left shifts move the raw bits; right shifts are arithmetic; a negative shift or one by the
  // width or more gives 0, or -1 shifting a negative value right (numpy's values).
  const std::vector<int8_t> x = {-128, -5, 5, 127, -1, 64};
  const std::vector<int8_t> y = {1, 1, 9, -1, 7, 1};
  OpTester l("BitShift", 28);
  l.attr("direction", "LEFT");
  l.input<int8_t>({6}, x).input<int8_t>({6}, y);
  l.output<int8_t>({6}, {0, -10, 0, 0, -128, -128});
  l.run();
  OpTester r("BitShift", 28);
  r.attr("direction", "RIGHT");
  r.input<int8_t>({6}, x).input<int8_t>({6}, y);
  r.output<int8_t>({6}, {-64, -3, 0, 0, -1, 32});
  r.run();
  OpTester w("BitShift", 28);
  w.attr("direction", "RIGHT");
  w.input<int64_t>({2}, {-9, 9}).input<int64_t>({2}, {64, -3});
  w.output<int64_t>({2}, {-1, 0});
  w.run();
  OpTester u("BitShift", 28);
  u.attr("direction", "LEFT");
  u.input<uint16_t>({2}, {0xFFFF, 3}).input<uint16_t>({2}, {15, 16});
  u.output<uint16_t>({2}, {0x8000, 0});
  u.run();
}

TEST(Logical, BitwiseOpsOnIntegers) {
  const std::vector<int16_t> a = {-3, 12}, b = {6, -1};
  const struct {
    const char* op;
    std::vector<int16_t> expected;
  } cases[] = {{"BitwiseAnd", {4, 12}}, {"BitwiseOr", {-1, -1}}, {"BitwiseXor", {-5, -13}}};
  for (const auto& c : cases) {
    OpTester t(c.op, 18);
    t.input<int16_t>({2}, a).input<int16_t>({2}, b);
    t.output<int16_t>({2}, c.expected);
    t.run();
  }
  OpTester bc("BitwiseAnd", 18);
  bc.input<uint64_t>({2, 2}, {0xF0F0, 0xFF, 7, 8}).input<uint64_t>({2}, {0xFF, 0x0F});
  bc.output<uint64_t>({2, 2}, {0xF0, 0x0F, 7, 8});
  bc.run();
  OpTester n("BitwiseNot", 18);
  n.input<int32_t>({3}, {0, -1, 5});
  n.output<int32_t>({3}, {-1, 0, -6});
  n.run();
  OpTester nu("BitwiseNot", 18);
  nu.input<uint8_t>({3}, {0, 255, 5});
  nu.output<uint8_t>({3}, {255, 0, 250});
  nu.run();
  OpTester f("BitwiseOr", 18);
  f.input<float>({1}, {1}).input<float>({1}, {1});
  f.expect_failure(StatusCode::kUnsupportedDType, "float32");
}

TEST(Logical, BitShiftErrors) {
  OpTester d("BitShift", 11);
  d.attr("direction", "UP");
  d.input<uint8_t>({1}, {1}).input<uint8_t>({1}, {1});
  d.expect_failure(StatusCode::kInvalidModel, "attribute direction must be \"LEFT\" or \"RIGHT\", got \"UP\"");
  OpTester s("BitShift", 11);
  s.attr("direction", "LEFT");
  s.input<int32_t>({1}, {1}).input<int32_t>({1}, {1});
  s.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(Logical, EqualOnStringsFromVersion19) {
  OpTester t("Equal", 19);
  t.input<std::string>({2, 2}, {"ab", "", "x", "AB"}).input<std::string>({2}, {"ab", "AB"});
  t.output<bool>({2, 2}, {true, false, false, true});
  t.run();
  OpTester old("Equal", 13);
  old.input<std::string>({1}, {"a"}).input<std::string>({1}, {"a"});
  old.expect_failure(StatusCode::kUnsupportedDType, "input of type string is not supported");
}

}  // namespace
}  // namespace vn::ops::testing
