// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(Slice, InputFormWithAxesAndSteps) {
  for (int64_t opset : {10, 11, 13}) {
    OpTester t("Slice", opset);
    t.input<float>({3, 4}, iota(12));
    t.input<int64_t>({2}, {1, 0}).input<int64_t>({2}, {3, 4}).input<int64_t>({2}, {0, 1}).input<int64_t>({2}, {1, 2});
    t.output<float>({2, 2}, {4, 6, 8, 10});
    t.run();
  }
}

TEST(Slice, NegativeStepReverses) {
  OpTester t("Slice", 13);
  t.input<float>({5}, iota(5));
  t.input<int64_t>({1}, {-1}).input<int64_t>({1}, {kMin}).omitted_input().input<int64_t>({1}, {-2});
  t.output<float>({3}, {4, 2, 0});
  t.run();
  OpTester r("Slice", 13);
  r.input<float>({2, 3}, iota(6));
  r.input<int64_t>({1}, {kMax}).input<int64_t>({1}, {-kMax}).input<int64_t>({1}, {1}).input<int64_t>({1}, {-1});
  r.output<float>({2, 3}, {2, 1, 0, 5, 4, 3});
  r.run();
}

TEST(Slice, ClampsOutOfRangeStartsAndEnds) {
  OpTester t("Slice", 13);
  t.input<float>({2, 5}, iota(10));
  t.input<int64_t>({2}, {-10, 2}).input<int64_t>({2}, {kMax, 1000});
  t.output<float>({2, 3}, {2, 3, 4, 7, 8, 9});
  t.run();
  OpTester e("Slice", 13);
  e.input<float>({5}, iota(5));
  e.input<int64_t>({1}, {3}).input<int64_t>({1}, {1});
  e.output<float>({0}, {});
  e.run();
}

TEST(Slice, EmptyAxisWithNegativeStep) {
  OpTester t("Slice", 13);
  t.input<float>({0, 2}, {});
  t.input<int64_t>({1}, {-1}).input<int64_t>({1}, {kMin}).input<int64_t>({1}, {0}).input<int64_t>({1}, {-1});
  t.output<float>({0, 2}, {});
  t.run();
}

TEST(Slice, NegativeAxesAndShapeTensor) {
  // The exported-shape idiom: Slice(Shape(x), [-2], [max]) keeps the last two dims.
  OpTester t("Slice", 13);
  t.input<int64_t>({4}, {1, 3, 224, 224});
  t.input<int64_t>({1}, {-2}).input<int64_t>({1}, {kMax}).input<int32_t>({1}, {-1});
  t.output<int64_t>({2}, {224, 224});
  t.run();
}

TEST(Slice, ThreeDimensionalAgainstOracle) {
  const std::vector<float> x = iota(4 * 5 * 6);
  std::vector<float> y;
  for (int64_t a = 3; a > 0; a -= 2)
    for (int64_t b = 1; b < 5; b += 3)
      for (int64_t c = 0; c < 6; c += 2) y.push_back(x[static_cast<size_t>((a * 5 + b) * 6 + c)]);
  OpTester t("Slice", 13);
  t.input<float>({4, 5, 6}, x);
  t.input<int64_t>({3}, {3, 1, 0}).input<int64_t>({3}, {0, 5, 6}).input<int64_t>({3}, {0, 1, 2});
  t.input<int64_t>({3}, {-2, 3, 2});
  t.output<float>({2, 2, 3}, y);
  t.run();
}

TEST(Slice, Opset1Attributes) {
  OpTester t("Slice", 1);
  t.attr("starts", Shape{0, 1}).attr("ends", Shape{2, -1});
  t.input<float>({3, 4}, iota(12));
  t.output<float>({2, 2}, {1, 2, 5, 6});
  t.run();
  OpTester a("Slice", 1);
  a.attr("starts", Shape{1}).attr("ends", Shape{kMax}).attr("axes", Shape{1});
  a.input<float>({2, 3}, iota(6));
  a.output<float>({2, 2}, {1, 2, 4, 5});
  a.run();
}

TEST(Slice, ErrorsNameTheProblem) {
  OpTester step("Slice", 13);
  step.input<float>({3}, iota(3));
  step.input<int64_t>({1}, {0}).input<int64_t>({1}, {3}).omitted_input().input<int64_t>({1}, {0});
  step.expect_failure(StatusCode::kInvalidModel, "step for axis 0 is 0");
  OpTester len("Slice", 13);
  len.input<float>({3}, iota(3));
  len.input<int64_t>({2}, {0, 0}).input<int64_t>({1}, {3});
  len.expect_failure(StatusCode::kInvalidModel, "starts, ends, axes and steps must have equal lengths");
  OpTester axis("Slice", 13);
  axis.input<float>({3}, iota(3));
  axis.input<int64_t>({1}, {0}).input<int64_t>({1}, {3}).input<int64_t>({1}, {1});
  axis.expect_failure(StatusCode::kInvalidModel, "axis 1 is not in valid range [-1, 0]");
  OpTester dup("Slice", 13);
  dup.input<float>({3}, iota(3));
  dup.input<int64_t>({2}, {0, 0}).input<int64_t>({2}, {3, 3}).input<int64_t>({2}, {0, -1});
  dup.expect_failure(StatusCode::kInvalidModel, "repeated");
  OpTester attrs("Slice", 1);
  attrs.input<float>({3}, iota(3));
  attrs.expect_failure(StatusCode::kInvalidModel, "attributes starts and ends are required");
}

}  // namespace
}  // namespace vn::ops::testing
