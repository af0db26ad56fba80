// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- OneHot ------------------------------------------------------------------------------------

TEST(OneHot, DefaultAxisIsLast) {
  for (int64_t opset : {9, 11}) {
    OpTester t("OneHot", opset);
    t.input<int64_t>({3}, {0, 2, 1}).input<float>({}, {3}).input<int32_t>({2}, {0, 5});
    t.output<int32_t>({3, 3}, {5, 0, 0, 0, 0, 5, 0, 5, 0});
    t.run();
  }
}

TEST(OneHot, AxisNegativeIndicesAndOutOfRange) {
  // axis 1 of a (2, 2) index tensor gives (2, depth, 2); -1 counts from the end; 4 and -5 are out
  // of [-depth, depth - 1] and leave their vector at off_value.
  OpTester t("OneHot", 11);
  t.attr("axis", int64_t{1});
  t.input<float>({2, 2}, {1.0f, -1.0f, 4.0f, -5.0f}).input<int64_t>({1}, {4}).input<float>({2}, {-1, 1});
  t.output<float>({2, 4, 2}, {-1, -1, 1, -1, -1, -1, -1, 1,  //
                              -1, -1, -1, -1, -1, -1, -1, -1});
  t.run();
}

TEST(OneHot, ErrorsNameTheProblem) {
  OpTester v("OneHot", 11);
  v.input<int64_t>({1}, {0}).input<int64_t>({}, {3}).input<float>({3}, {0, 1, 2});
  v.expect_failure(StatusCode::kShapeMismatch, "values must be [off_value, on_value], got shape (3,)");
  OpTester d("OneHot", 11);
  d.input<int64_t>({1}, {0}).input<int64_t>({}, {0}).input<float>({2}, {0, 1});
  d.expect_failure(StatusCode::kInvalidModel, "depth must be a positive count, got 0");
  OpTester a("OneHot", 11);
  a.attr("axis", int64_t{3});
  a.input<int64_t>({1}, {0}).input<int64_t>({}, {2}).input<float>({2}, {0, 1});
  a.expect_failure(StatusCode::kInvalidModel, "axis 3 is not in valid range [-2, 1]");
}

// ---- NonZero -----------------------------------------------------------------------------------

TEST(NonZero, ListsCoordinatesInRowMajorOrder) {
  for (int64_t opset : {9, 13}) {
    OpTester t("NonZero", opset);
    t.input<bool>({2, 2}, {true, false, true, true});
    t.output<int64_t>({2, 3}, {0, 1, 1, 0, 0, 1});
    t.run();
  }
  OpTester f("NonZero", 13);
  f.input<float>({3}, {0.0f, -0.0f, 2.5f});
  f.output<int64_t>({1, 1}, {2});
  f.run();
  OpTester none("NonZero", 13);
  none.input<int32_t>({2, 3}, {0, 0, 0, 0, 0, 0});
  none.output<int64_t>({2, 0}, {});
  none.run();
  OpTester scalar("NonZero", 13);
  scalar.input<int32_t>({}, {7});
  scalar.output<int64_t>({1, 1}, {0});
  scalar.run();
}

TEST(NonZero, StringsAreNotSupported) {
  OpTester t("NonZero", 13);
  t.input<std::string>({1}, {"a"});
  t.expect_failure(StatusCode::kUnsupportedDType, "input of type string is not supported");
}

// ---- Compress ----------------------------------------------------------------------------------

TEST(Compress, SelectsAlongAnAxisOrTheFlattenedInput) {
  for (int64_t opset : {9, 11}) {
    OpTester t("Compress", opset);
    t.attr("axis", int64_t{0});
    t.input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).input<bool>({2}, {false, true});
    t.output<float>({1, 2}, {3, 4});
    t.run();
  }
  OpTester neg("Compress", 11);
  neg.attr("axis", int64_t{-1});
  neg.input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).input<bool>({2}, {false, true});
  neg.output<float>({3, 1}, {2, 4, 6});
  neg.run();
  OpTester flat("Compress", 11);
  flat.input<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}).input<bool>({5}, {false, true, false, false, true});
  flat.output<int32_t>({2}, {2, 5});
  flat.run();
}

TEST(Compress, ErrorsNameTheProblem) {
  OpTester c("Compress", 11);
  c.attr("axis", int64_t{0});
  c.input<float>({2}, {1, 2}).input<bool>({3}, {false, false, true});
  c.expect_failure(StatusCode::kShapeMismatch, "condition selects index 2 but the axis has size 2");
  OpTester t("Compress", 11);
  t.input<float>({2}, {1, 2}).input<int64_t>({2}, {0, 1});
  t.expect_failure(StatusCode::kInvalidModel, "condition must be a 1-D bool tensor, got int64 (2,)");
}

}  // namespace
}  // namespace vn::ops::testing
