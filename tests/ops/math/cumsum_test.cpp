// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(CumSum, InclusiveExclusiveReverse) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const struct {
    int64_t exclusive, reverse;
    std::vector<double> y;
  } cases[] = {
      {0, 0, {1, 3, 6, 10, 15}}, {1, 0, {0, 1, 3, 6, 10}}, {0, 1, {15, 14, 12, 9, 5}}, {1, 1, {14, 12, 9, 5, 0}}};
  for (const auto& c : cases) {
    for (int64_t opset : {11, 14}) {
      OpTester t("CumSum", opset);
      t.attr("exclusive", c.exclusive).attr("reverse", c.reverse);
      t.input<double>({5}, x).input<int32_t>({}, {0});
      t.output<double>({5}, c.y);
      t.run();
    }
  }
}

TEST(CumSum, AlongAnInnerAxisWithNegativeIndex) {
  OpTester t("CumSum", 14);
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({1}, {-1});
  t.output<float>({2, 3}, {1, 3, 6, 4, 9, 15});
  t.run();
  OpTester a("CumSum", 11);
  a.input<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({}, {0});
  a.output<int32_t>({2, 3}, {1, 2, 3, 5, 7, 9});
  a.run();
}

TEST(CumSum, Float32AccumulatesInDoubleAndIntegersWrap) {
  // In float32 order 1e8 + 1 + 1 + ... would stay 1e8; the double running sum is exact.
  std::vector<float> x(5, 1.0f);
  x[0] = 1e8f;
  OpTester t("CumSum", 14);
  t.input<float>({5}, x).input<int64_t>({}, {0});
  t.output<float>({5}, {1e8f, 100000001.0f, 100000002.0f, 100000003.0f, 100000004.0f});
  t.tolerance(0, 0);
  t.run();
  OpTester w("CumSum", 14);
  w.input<int32_t>({2}, {2147483647, 1}).input<int64_t>({}, {0});
  w.output<int32_t>({2}, {2147483647, -2147483647 - 1});
  w.run();
}

TEST(CumSum, EmptyAndErrors) {
  OpTester e("CumSum", 14);
  e.input<float>({0, 2}, {}).input<int64_t>({}, {1});
  e.output<float>({0, 2}, {});
  e.run();
  OpTester a("CumSum", 14);
  a.input<float>({2}, {1, 2}).input<int64_t>({2}, {0, 0});
  a.expect_failure(StatusCode::kInvalidModel, "axis must be an int32 or int64 scalar, got int64 (2,)");
  OpTester r("CumSum", 14);
  r.input<float>({2}, {1, 2}).input<int64_t>({}, {1});
  r.expect_failure(StatusCode::kInvalidModel, "axis 1 is not in valid range [-1, 0]");
  OpTester d("CumSum", 11);
  d.input<int8_t>({2}, {1, 2}).input<int64_t>({}, {0});
  d.expect_failure(StatusCode::kUnsupportedDType, "int8");
}

TEST(CumProd, InclusiveExclusiveReverseAndAxis) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const struct {
    int64_t exclusive, reverse;
    std::vector<double> y;
  } cases[] = {
      {0, 0, {1, 2, 6, 24, 120}}, {1, 0, {1, 1, 2, 6, 24}}, {0, 1, {120, 120, 60, 20, 5}}, {1, 1, {120, 60, 20, 5, 1}}};
  for (const auto& c : cases) {
    OpTester t("CumProd", 26);
    t.attr("exclusive", c.exclusive).attr("reverse", c.reverse);
    t.input<double>({5}, x).input<int32_t>({}, {0});
    t.output<double>({5}, c.y);
    t.run();
  }
  OpTester a("CumProd", 26);
  a.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({}, {-1});
  a.output<float>({2, 3}, {1, 2, 6, 4, 20, 120});
  a.run();
  // Integer products wrap modulo 2^32: 65536 * 65536 = 0.
  OpTester w("CumProd", 26);
  w.input<int32_t>({3}, {65536, 65536, 3}).input<int64_t>({}, {0});
  w.output<int32_t>({3}, {65536, 0, 0});
  w.run();
  OpTester n("CumProd", 26);
  n.input<int64_t>({3}, {-2, 3, -4}).input<int64_t>({}, {0});
  n.output<int64_t>({3}, {-2, -6, 24});
  n.run();
}

}  // namespace
}  // namespace vn::ops::testing
