// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

const std::vector<float> kSix = {1, 2, 3, 4, 5, 6};

// ---- Reshape -----------------------------------------------------------------------------------

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  for (int64_t opset : {5, 13, 14}) {
    OpTester t("Reshape", opset);
    const Tensor x = Tensor::from_vector<float>({2, 3, 1}, kSix);
    t.input(x).input<int64_t>({3}, {0, -1, 1});
    t.output<float>({2, 3, 1}, kSix);
    const std::vector<Tensor> out = t.run();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].raw(), x.raw()) << "Reshape should be a zero-copy view";
  }
  OpTester flat("Reshape", 13);
  flat.input<float>({2, 3}, kSix).input<int64_t>({1}, {-1});
  flat.output<float>({6}, kSix);
  flat.run();
  OpTester scalar("Reshape", 13);
  scalar.input<float>({1, 1}, {7}).input<int64_t>({0}, {});
  scalar.output<float>({}, {7});
  scalar.run();
}

TEST(Reshape, AllowZeroAtOpset14) {
  OpTester t("Reshape", 14);
  t.attr("allowzero", int64_t{1});
  t.input<float>({0, 3}, {}).input<int64_t>({3}, {3, 0, 4});
  t.output<float>({3, 0, 4}, {});
  t.run();
  // Without allowzero a 0 copies the input dim.
  OpTester c("Reshape", 14);
  c.input<float>({2, 0}, {}).input<int64_t>({3}, {0, 0, 5});
  c.output<float>({2, 0, 5}, {});
  c.run();
}

TEST(Reshape, Opset1ShapeAttribute) {
  OpTester t("Reshape", 1);
  t.attr("shape", Shape{3, -1});
  t.input<float>({6}, kSix);
  t.output<float>({3, 2}, kSix);
  t.run();
}

TEST(Reshape, ErrorsNameTheProblem) {
  OpTester count("Reshape", 13);
  count.input<float>({2, 3}, kSix).input<int64_t>({2}, {4, 2});
  count.expect_failure(StatusCode::kShapeMismatch, "cannot reshape input (2, 3) (6 elements) to [4, 2] (8 elements)");
  OpTester two("Reshape", 13);
  two.input<float>({2, 3}, kSix).input<int64_t>({2}, {-1, -1});
  two.expect_failure(StatusCode::kInvalidModel, "has more than one -1");
  OpTester infer("Reshape", 13);
  infer.input<float>({2, 3}, kSix).input<int64_t>({2}, {4, -1});
  infer.expect_failure(StatusCode::kShapeMismatch, "cannot infer the -1 in [4, -1]");
  OpTester both("Reshape", 14);
  both.attr("allowzero", int64_t{1});
  both.input<float>({0}, {}).input<int64_t>({2}, {0, -1});
  both.expect_failure(StatusCode::kInvalidModel, "both -1 and a literal 0");
  OpTester copy("Reshape", 13);
  copy.input<float>({6}, kSix).input<int64_t>({2}, {6, 0});
  copy.expect_failure(StatusCode::kShapeMismatch, "copies dim 1 (0) but the input (6,) has rank 1");
  OpTester type("Reshape", 13);
  type.input<float>({6}, kSix).input<float>({1}, {6});
  type.expect_failure(StatusCode::kUnsupportedDType, "input 'shape' must be an integer tensor");
}

// ---- Flatten -----------------------------------------------------------------------------------

TEST(Flatten, AxisVariants) {
  const std::vector<float> x(24, 1.0f);
  struct Case {
    int64_t axis;
    Shape out;
  };
  for (const Case& c : {Case{0, {1, 24}}, Case{1, {2, 12}}, Case{2, {6, 4}}, Case{3, {24, 1}}}) {
    OpTester t("Flatten", 9);
    t.attr("axis", c.axis);
    t.input<float>({2, 3, 4}, x);
    t.output<float>(c.out, x);
    t.run();
  }
  OpTester d("Flatten", 1);  // default axis 1
  d.input<float>({2, 3, 4}, x);
  d.output<float>({2, 12}, x);
  d.run();
}

TEST(Flatten, NegativeAxisFromOpset11) {
  OpTester t("Flatten", 13);
  t.attr("axis", int64_t{-1});
  t.input<float>({2, 3}, kSix);
  t.output<float>({2, 3}, kSix);
  t.run();
  OpTester old("Flatten", 9);
  old.attr("axis", int64_t{-1});
  old.input<float>({2, 3}, kSix);
  old.expect_failure(StatusCode::kInvalidModel, "axis -1 is not in valid range [0, 2]");
  OpTester big("Flatten", 13);
  big.attr("axis", int64_t{3});
  big.input<float>({2, 3}, kSix);
  big.expect_failure(StatusCode::kInvalidModel, "axis 3 is not in valid range [-2, 2]");
}

// ---- Squeeze / Unsqueeze -----------------------------------------------------------------------

TEST(Squeeze, AttributeFormBeforeOpset13) {
  for (int64_t opset : {1, 11}) {
    OpTester t("Squeeze", opset);
    t.attr("axes", Shape{0, 2});
    t.input<float>({1, 3, 1, 2}, kSix);
    t.output<float>({3, 2}, kSix);
    t.run();
  }
  OpTester neg("Squeeze", 11);
  neg.attr("axes", Shape{-2});
  neg.input<float>({3, 1, 2}, kSix);
  neg.output<float>({3, 2}, kSix);
  neg.run();
}

TEST(Squeeze, InputFormAtOpset13) {
  OpTester t("Squeeze", 13);
  t.input<float>({1, 3, 1, 2}, kSix).input<int64_t>({1}, {-2});
  t.output<float>({1, 3, 2}, kSix);
  t.run();
  // At opset 13 the attribute is gone: a leftover axes attribute is refused, not ignored.
  OpTester a("Squeeze", 13);
  a.attr("axes", Shape{0});
  a.input<float>({1, 3, 1, 2}, kSix);
  a.expect_failure(StatusCode::kUnsupportedAttr, "attribute 'axes' of Squeeze-13 is not implemented");
}

TEST(Squeeze, NoAxesRemovesAllOnes) {
  OpTester t("Squeeze", 11);
  t.input<float>({1, 1, 1}, {5});
  t.output<float>({}, {5});
  t.run();
}

TEST(Squeeze, NonUnitAxisFails) {
  OpTester t("Squeeze", 13);
  t.input<float>({2, 3}, kSix).input<int64_t>({1}, {1});
  t.expect_failure(StatusCode::kShapeMismatch, "cannot squeeze axis 1 of input (2, 3): its size is 3, not 1");
  OpTester r("Squeeze", 11);
  r.attr("axes", Shape{2});
  r.input<float>({6, 1}, kSix);
  r.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
}

TEST(Unsqueeze, AttributeAndInputForms) {
  for (int64_t opset : {1, 11}) {
    OpTester t("Unsqueeze", opset);
    t.attr("axes", Shape{0, 3});
    t.input<float>({2, 3}, kSix);
    t.output<float>({1, 2, 3, 1}, kSix);
    t.run();
  }
  OpTester t("Unsqueeze", 13);
  t.input<float>({2, 3}, kSix).input<int64_t>({2}, {-1, 1});
  t.output<float>({2, 1, 3, 1}, kSix);
  t.run();
  OpTester s("Unsqueeze", 13);
  s.input<float>({}, {4}).input<int64_t>({1}, {0});
  s.output<float>({1}, {4});
  s.run();
}

TEST(Unsqueeze, ErrorsNameTheProblem) {
  OpTester dup("Unsqueeze", 13);
  dup.input<float>({2}, {1, 2}).input<int64_t>({2}, {0, -3});
  dup.expect_failure(StatusCode::kInvalidModel, "axis -3 is repeated in axes");
  OpTester range("Unsqueeze", 13);
  range.input<float>({2}, {1, 2}).input<int64_t>({1}, {2});
  range.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester missing("Unsqueeze", 11);
  missing.input<float>({2}, {1, 2});
  missing.expect_failure(StatusCode::kInvalidModel, "attribute axes is required");
  OpTester omitted("Unsqueeze", 13);
  omitted.input<float>({2}, {1, 2});
  omitted.expect_failure(StatusCode::kInvalidModel, "expects at least 2 inputs, got 1");
}

// ---- Identity, Shape, Size ---------------------------------------------------------------------

TEST(Identity, PassesAnyTypeThrough) {
  for (int64_t opset : {1, 13, 14, 16}) {
    OpTester t("Identity", opset);
    t.input<std::string>({2}, {"a", "bc"});
    t.output<std::string>({2}, {"a", "bc"});
    t.run();
  }
  OpTester b("Identity", 16);
  b.input<bool>({0}, {});
  b.output<bool>({0}, {});
  b.run();
}

TEST(Shape, WholeShapeAndStartEnd) {
  OpTester t("Shape", 13);
  t.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  t.output<int64_t>({3}, {2, 3, 4});
  t.run();
  OpTester s("Shape", 15);
  s.attr("start", int64_t{1});
  s.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  s.output<int64_t>({2}, {3, 4});
  s.run();
  OpTester e("Shape", 15);
  e.attr("start", int64_t{-3}).attr("end", int64_t{-1});
  e.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  e.output<int64_t>({2}, {2, 3});
  e.run();
  OpTester clamp("Shape", 15);
  clamp.attr("start", int64_t{-10}).attr("end", int64_t{10});
  clamp.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  clamp.output<int64_t>({3}, {2, 3, 4});
  clamp.run();
  OpTester empty("Shape", 15);
  empty.attr("start", int64_t{2}).attr("end", int64_t{1});
  empty.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  empty.output<int64_t>({0}, {});
  empty.run();
  OpTester scalar("Shape", 1);
  scalar.input<int32_t>({}, {1});
  scalar.output<int64_t>({0}, {});
  scalar.run();
}

TEST(Size, CountsElements) {
  OpTester t("Size", 13);
  t.input<float>({2, 3, 4}, std::vector<float>(24, 0));
  t.output<int64_t>({}, {24});
  t.run();
  OpTester e("Size", 1);
  e.input<bool>({3, 0}, {});
  e.output<int64_t>({}, {0});
  e.run();
}

}  // namespace
}  // namespace vn::ops::testing
