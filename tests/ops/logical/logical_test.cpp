// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

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

}  // namespace
}  // namespace vn::ops::testing
