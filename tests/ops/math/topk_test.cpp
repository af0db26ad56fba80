// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(TopK, LargestAlongLastAxisWithTiesByIndex) {
  OpTester t("TopK", 11);
  t.input<float>({2, 4}, {1, 5, 5, 2, 0, -1, 3, 3}).input<int64_t>({1}, {3});
  t.output<float>({2, 3}, {5, 5, 2, 3, 3, 0});
  t.output<int64_t>({2, 3}, {1, 2, 3, 2, 3, 0});
  t.run();
}

TEST(TopK, SmallestAlongAxis0AndOpset1Attribute) {
  OpTester t("TopK", 11);
  t.attr("largest", int64_t{0}).attr("axis", int64_t{0});
  t.input<int32_t>({3, 2}, {4, 1, 2, 9, 3, 1}).input<int64_t>({1}, {2});
  t.output<int32_t>({2, 2}, {2, 1, 3, 1});
  t.output<int64_t>({2, 2}, {1, 0, 2, 2});
  t.run();
  OpTester one("TopK", 1);
  one.attr("k", int64_t{1});
  one.input<double>({3}, {0.5, 2.5, 1.5});
  one.output<double>({1}, {2.5});
  one.output<int64_t>({1}, {1});
  one.run();
}

TEST(TopK, NaNRanksAboveNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("TopK", 11);
  t.input<float>({4}, {1, nan, 3, 2}).input<int64_t>({1}, {2});
  t.output<float>({2}, {nan, 3});
  t.output<int64_t>({2}, {1, 2});
  t.run();
  OpTester s("TopK", 11);
  s.attr("largest", int64_t{0});
  s.input<float>({4}, {1, nan, 3, 2}).input<int64_t>({1}, {4});
  s.output<float>({4}, {1, 2, 3, nan});
  s.output<int64_t>({4}, {0, 3, 2, 1});
  s.run();
}

TEST(TopK, ZeroKAndErrors) {
  OpTester z("TopK", 10);
  z.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1}, {0});
  z.output<float>({2, 0}, {});
  z.output<int64_t>({2, 0}, {});
  z.run();
  OpTester k("TopK", 11);
  k.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1}, {3});
  k.unchecked_output().unchecked_output();
  k.expect_failure(StatusCode::kInvalidModel, "k = 3 is not in [0, 2] (the size of axis 1 of (2, 2))");
  OpTester a("TopK", 1);
  a.input<float>({2}, {1, 2});
  a.unchecked_output().unchecked_output();
  a.expect_failure(StatusCode::kInvalidModel, "attribute k is required");
}

}  // namespace
}  // namespace vn::ops::testing
