// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- Expand ------------------------------------------------------------------------------------

TEST(Expand, BroadcastsToShape) {
  for (int64_t opset : {8, 13}) {
    OpTester t("Expand", opset);
    t.input<float>({3, 1}, {1, 2, 3}).input<int64_t>({2}, {3, 4});
    t.output<float>({3, 4}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
    t.run();
  }
}

TEST(Expand, ShapeOnesKeepLargerInputDimsAndRankGrows) {
  OpTester t("Expand", 13);
  t.input<float>({3, 1}, {1, 2, 3}).input<int64_t>({3}, {2, 1, 2});
  t.output<float>({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  t.run();
  OpTester s("Expand", 13);
  s.input<int64_t>({}, {7}).input<int64_t>({1}, {3});
  s.output<int64_t>({3}, {7, 7, 7});
  s.run();
  OpTester z("Expand", 13);
  z.input<bool>({1}, {true}).input<int64_t>({2}, {0, 2});
  z.output<bool>({0, 2}, {});
  z.run();
}

TEST(Expand, IncompatibleShapeFails) {
  OpTester t("Expand", 13);
  t.input<float>({3}, {1, 2, 3}).input<int64_t>({1}, {4});
  t.expect_failure(StatusCode::kShapeMismatch, "shapes (3,) and (4,) cannot be broadcast together");
  OpTester n("Expand", 13);
  n.input<float>({1}, {1}).input<int64_t>({1}, {-2});
  n.expect_failure(StatusCode::kInvalidModel, "negative dimension -2");
}

// ---- Where -------------------------------------------------------------------------------------

TEST(Where, SelectsWithBroadcast) {
  for (int64_t opset : {9, 16}) {
    OpTester t("Where", opset);
    t.input<bool>({2, 2}, {true, false, false, true});
    t.input<float>({2, 2}, {1, 2, 3, 4}).input<float>({}, {-1});
    t.output<float>({2, 2}, {1, -1, -1, 4});
    t.run();
  }
  OpTester b("Where", 16);
  b.input<bool>({2, 1}, {true, false}).input<int64_t>({3}, {1, 2, 3}).input<int64_t>({2, 3}, {7, 8, 9, 10, 11, 12});
  b.output<int64_t>({2, 3}, {1, 2, 3, 10, 11, 12});
  b.run();
  OpTester s("Where", 16);
  s.input<bool>({2}, {false, true}).input<std::string>({1}, {"yes"}).input<std::string>({1}, {"no"});
  s.output<std::string>({2}, {"no", "yes"});
  s.run();
}

TEST(Where, ErrorsNameTheProblem) {
  OpTester c("Where", 16);
  c.input<float>({1}, {1}).input<float>({1}, {1}).input<float>({1}, {2});
  c.expect_failure(StatusCode::kUnsupportedDType, "condition must be bool, got float32");
  OpTester t("Where", 16);
  t.input<bool>({1}, {true}).input<float>({1}, {1}).input<double>({1}, {2});
  t.expect_failure(StatusCode::kInvalidModel, "X (float32) and Y (float64) must have the same type");
  OpTester s("Where", 16);
  s.input<bool>({2}, {true, false}).input<float>({3}, {1, 2, 3}).input<float>({1}, {2});
  s.expect_failure(StatusCode::kShapeMismatch, "cannot be broadcast together");
}

}  // namespace
}  // namespace vn::ops::testing
