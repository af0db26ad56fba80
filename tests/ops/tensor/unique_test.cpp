// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Unique, SortedFlattenedWithAllOutputs) {
  OpTester t("Unique", 11);
  t.input<float>({6}, {2, 1, 1, 3, 4, 3});
  t.output<float>({4}, {1, 2, 3, 4});
  t.output<int64_t>({4}, {1, 0, 3, 4});
  t.output<int64_t>({6}, {1, 0, 0, 2, 3, 2});
  t.output<int64_t>({4}, {2, 1, 2, 1});
  t.run();
}

TEST(Unique, UnsortedKeepsFirstOccurrenceOrder) {
  OpTester t("Unique", 11);
  t.attr("sorted", int64_t{0});
  t.input<int32_t>({2, 3}, {2, 1, 1, 3, 4, 3});
  t.output<int32_t>({4}, {2, 1, 3, 4});
  t.output<int64_t>({4}, {0, 1, 3, 4});
  t.output<int64_t>({6}, {0, 1, 1, 2, 3, 2});
  t.output<int64_t>({4}, {1, 2, 2, 1});
  t.run();
}

TEST(Unique, SlicesAlongAnAxis) {
  OpTester rows("Unique", 11);
  rows.attr("axis", int64_t{0});
  rows.input<float>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  rows.output<float>({2, 3}, {1, 0, 0, 2, 3, 4});
  rows.output<int64_t>({2}, {0, 2});
  rows.output<int64_t>({3}, {0, 0, 1});
  rows.output<int64_t>({2}, {2, 1});
  rows.run();
  // Columns (0, 0) < (1, 0) lexicographically; only Y and counts are requested.
  OpTester cols("Unique", 11);
  cols.attr("axis", int64_t{-1});
  cols.input<int64_t>({2, 3}, {1, 0, 1, 0, 0, 0});
  cols.output<int64_t>({2, 2}, {0, 1, 0, 0});
  cols.omitted_output().omitted_output();
  cols.output<int64_t>({2}, {1, 2});
  cols.run();
}

TEST(Unique, NaNsAreOneValueSortedLastAndStringsWork) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("Unique", 11);
  t.input<float>({3}, {nan, 1, nan});
  t.output<float>({2}, {1, nan});
  t.output<int64_t>({2}, {1, 0});
  t.output<int64_t>({3}, {1, 0, 1});
  t.output<int64_t>({2}, {1, 2});
  t.run();
  OpTester s("Unique", 11);
  s.input<std::string>({3}, {"b", "a", "b"});
  s.output<std::string>({2}, {"a", "b"});
  s.run();
  OpTester e("Unique", 11);
  e.input<float>({0}, {});
  e.output<float>({0}, {});
  e.output<int64_t>({0}, {});
  e.run();
}

TEST(Unique, ErrorsNameTheProblem) {
  OpTester a("Unique", 11);
  a.attr("axis", int64_t{2});
  a.input<float>({2, 2}, {1, 2, 3, 4});
  a.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester s("Unique", 11);
  s.attr("axis", int64_t{0});
  s.input<float>({}, {1});
  s.expect_failure(StatusCode::kShapeMismatch, "axis is set but the input is a scalar");
}

}  // namespace
}  // namespace vn::ops::testing
