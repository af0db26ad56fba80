// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

const std::vector<float> kX = {1, 2, 3, 4, 5, 6};  // shape (2, 3)

TEST(Pad, ConstantInputForm) {
  for (int64_t opset : {11, 13}) {
    OpTester t("Pad", opset);
    t.input<float>({2, 3}, kX).input<int64_t>({4}, {0, 1, 1, 0}).input<float>({}, {9});
    t.output<float>({3, 4}, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
    t.run();
  }
  OpTester z("Pad", 11);  // constant_value omitted: 0
  z.input<float>({2, 3}, kX).input<int64_t>({4}, {1, 0, 0, 0});
  z.output<float>({3, 3}, {0, 0, 0, 1, 2, 3, 4, 5, 6});
  z.run();
}

TEST(Pad, ReflectAndEdge) {
  OpTester r("Pad", 11);
  r.attr("mode", "reflect");
  r.input<float>({2, 3}, kX).input<int64_t>({4}, {0, 2, 0, 1});
  r.output<float>({2, 6}, {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
  r.run();
  OpTester e("Pad", 11);
  e.attr("mode", "edge");
  e.input<float>({2, 3}, kX).input<int64_t>({4}, {1, 2, 1, 1});
  e.output<float>({4, 6}, {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6});
  e.run();
}

TEST(Pad, ReflectWiderThanInputFoldsRepeatedly) {
  // numpy.pad([1, 2, 3], 5, mode='reflect') = [2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2]
  OpTester t("Pad", 11);
  t.attr("mode", "reflect");
  t.input<int32_t>({3}, {1, 2, 3}).input<int64_t>({2}, {5, 5});
  t.output<int32_t>({13}, {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
  t.run();
}

TEST(Pad, NegativePadsCrop) {
  OpTester t("Pad", 11);
  t.input<float>({2, 3}, kX).input<int64_t>({4}, {0, -1, -1, 1}).input<float>({}, {7});
  t.output<float>({1, 3}, {2, 3, 7});
  t.run();
}

TEST(Pad, Opset2AttributeFormAndOpset1Paddings) {
  OpTester t("Pad", 2);
  t.attr("pads", Shape{1, 1, 0, 0}).attr("value", 1.5f);
  t.input<float>({2, 3}, kX);
  t.output<float>({3, 4}, {1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1, 2, 3, 1.5f, 4, 5, 6});
  t.run();
  OpTester o("Pad", 1);
  o.attr("paddings", Shape{0, 0, 0, 1}).attr("mode", "edge");
  o.input<float>({2, 3}, kX);
  o.output<float>({2, 4}, {1, 2, 3, 3, 4, 5, 6, 6});
  o.run();
}

TEST(Pad, IntegerAndFourDimensional) {
  OpTester t("Pad", 13);
  t.input<int64_t>({1, 1, 2, 2}, {1, 2, 3, 4}).input<int64_t>({8}, {0, 0, 1, 1, 0, 0, 1, 1});
  t.output<int64_t>({1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0});
  t.run();
}

TEST(Pad, ErrorsNameTheProblem) {
  OpTester len("Pad", 11);
  len.input<float>({2, 3}, kX).input<int64_t>({2}, {1, 1});
  len.expect_failure(StatusCode::kShapeMismatch, "pads has 2 entries but input (2, 3) needs 2 * rank = 4");
  OpTester mode("Pad", 11);
  mode.attr("mode", "wrap");
  mode.input<float>({2, 3}, kX).input<int64_t>({4}, {0, 0, 0, 0});
  mode.expect_failure(StatusCode::kInvalidModel, "mode 'wrap' is not one of constant, reflect, edge");
  OpTester crop("Pad", 11);
  crop.input<float>({2, 3}, kX).input<int64_t>({4}, {-2, 0, -1, 0});
  crop.expect_failure(StatusCode::kShapeMismatch, "crop axis 0 of size 2 below zero");
  OpTester value("Pad", 11);
  value.input<float>({2, 3}, kX).input<int64_t>({4}, {0, 0, 0, 0}).input<double>({}, {1});
  value.expect_failure(StatusCode::kInvalidModel, "constant_value must be a float32 scalar");
  OpTester empty("Pad", 11);
  empty.attr("mode", "edge");
  empty.input<float>({0}, {}).input<int64_t>({2}, {1, 1});
  empty.expect_failure(StatusCode::kShapeMismatch, "edge padding of axis 0 needs at least one input element");
  OpTester attr("Pad", 2);
  attr.input<float>({2, 3}, kX);
  attr.expect_failure(StatusCode::kInvalidModel, "attribute pads is required");
}

TEST(CenterCropPad, CropsAndPadsAroundTheCentre) {
  // Axis 0: 5 -> 3 crops one from each end; axis 1: 2 -> 5 pads 1 before and 2 after.
  OpTester t("CenterCropPad", 18);
  t.input<int32_t>({5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}).input<int64_t>({2}, {3, 5});
  t.output<int32_t>({3, 5}, {0, 3, 4, 0, 0, 0, 5, 6, 0, 0, 0, 7, 8, 0, 0});
  t.run();
  // An odd crop leaves the extra element at the end; axes (negative too) name the resized axes.
  OpTester a("CenterCropPad", 18);
  a.attr("axes", Shape{-1});
  a.input<float>({1, 4}, {1, 2, 3, 4}).input<int64_t>({1}, {1});
  a.output<float>({1, 1}, {2});
  a.run();
  OpTester e("CenterCropPad", 18);
  e.input<float>({2}, {1, 2}).input<int64_t>({2}, {1, 1});
  e.expect_failure(StatusCode::kShapeMismatch, "shape has 2 values for 1 axes");
}

}  // namespace
}  // namespace vn::ops::testing
