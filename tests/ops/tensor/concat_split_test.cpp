// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- Concat ------------------------------------------------------------------------------------

TEST(Concat, AlongEachAxis) {
  for (int64_t opset : {4, 11, 13}) {
    OpTester a0("Concat", opset);
    a0.attr("axis", int64_t{0});
    a0.input<float>({1, 2}, {1, 2}).input<float>({2, 2}, {3, 4, 5, 6});
    a0.output<float>({3, 2}, {1, 2, 3, 4, 5, 6});
    a0.run();
    OpTester a1("Concat", opset);
    a1.attr("axis", int64_t{1});
    a1.input<float>({2, 1}, {1, 2}).input<float>({2, 2}, {3, 4, 5, 6}).input<float>({2, 0}, {});
    a1.output<float>({2, 3}, {1, 3, 4, 2, 5, 6});
    a1.run();
  }
}

TEST(Concat, NegativeAxisAndShapeArithmetic) {
  OpTester t("Concat", 13);
  t.attr("axis", int64_t{-1});
  t.input<int64_t>({1}, {-1}).input<int64_t>({2}, {3, 4}).input<int64_t>({0}, {});
  t.output<int64_t>({3}, {-1, 3, 4});
  t.run();
}

TEST(Concat, Opset1DefaultsToAxis1) {
  OpTester t("Concat", 1);
  t.input<float>({1, 1}, {1}).input<float>({1, 2}, {2, 3});
  t.output<float>({1, 3}, {1, 2, 3});
  t.run();
}

TEST(Concat, ThreeDimensionalMiddleAxis) {
  OpTester t("Concat", 13);
  t.attr("axis", int64_t{1});
  t.input<int32_t>({2, 1, 2}, {1, 2, 3, 4}).input<int32_t>({2, 2, 2}, {5, 6, 7, 8, 9, 10, 11, 12});
  t.output<int32_t>({2, 3, 2}, {1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12});
  t.run();
}

TEST(Concat, ManyInputsSplitOverThreadsByRangesOfTheOutput) {
  // 33 inputs of 0 to 40 channels (DenseNet's growing features, with empty ones among them) in 3
  // outer blocks, on 4 threads: ranges of the output start and end inside inputs and blocks.
  constexpr int64_t kOuter = 3, kInner = 100;
  OpTester t("Concat", 13);
  t.attr("axis", int64_t{1}).threads(4);
  std::vector<std::vector<float>> inputs;
  int64_t channels = 0;
  for (int64_t i = 0; i < 33; ++i) {
    const int64_t c = i % 5 == 3 ? 0 : (i * 7) % 41;
    std::vector<float> v(static_cast<size_t>(kOuter * c * kInner));
    for (size_t j = 0; j < v.size(); ++j) v[j] = static_cast<float>(i * 100000 + static_cast<int64_t>(j));
    t.input<float>({kOuter, c, kInner}, v);
    inputs.push_back(std::move(v));
    channels += c;
  }
  std::vector<float> want;
  for (int64_t o = 0; o < kOuter; ++o) {
    for (const std::vector<float>& v : inputs) {
      const auto block = static_cast<int64_t>(v.size()) / kOuter;
      want.insert(want.end(), v.begin() + o * block, v.begin() + (o + 1) * block);
    }
  }
  ASSERT_GT(static_cast<int64_t>(want.size()), 4 * (int64_t{1} << 15));  // enough for 4 threads
  t.output<float>({kOuter, channels, kInner}, want);
  t.run();
}

TEST(Concat, ErrorsNameTheProblem) {
  OpTester shape("Concat", 13);
  shape.attr("axis", int64_t{0});
  shape.input<float>({1, 2}, {1, 2}).input<float>({1, 3}, {1, 2, 3});
  shape.expect_failure(StatusCode::kShapeMismatch, "input 1 has shape (1, 3) but input 0 has (1, 2)");
  OpTester type("Concat", 13);
  type.attr("axis", int64_t{0});
  type.input<float>({1}, {1}).input<int64_t>({1}, {1});
  type.expect_failure(StatusCode::kInvalidModel, "input 1 is int64 but input 0 is float32");
  OpTester axis("Concat", 13);
  axis.attr("axis", int64_t{2});
  axis.input<float>({1, 2}, {1, 2});
  axis.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester missing("Concat", 4);
  missing.input<float>({1}, {1});
  missing.expect_failure(StatusCode::kInvalidModel, "attribute axis is required");
  OpTester negative("Concat", 4);
  negative.attr("axis", int64_t{-1});
  negative.input<float>({1}, {1});
  negative.expect_failure(StatusCode::kInvalidModel, "negative axes need opset 11");
}

// ---- Split -------------------------------------------------------------------------------------

TEST(Split, EqualPartsByDefault) {
  for (int64_t opset : {2, 11, 13}) {
    OpTester t("Split", opset);
    t.attr("axis", int64_t{1});
    t.input<float>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    t.output<float>({2, 2}, {1, 2, 5, 6});
    t.output<float>({2, 2}, {3, 4, 7, 8});
    t.run();
  }
}

TEST(Split, SizesAsAttributeBefore13AndInputFrom13) {
  OpTester a("Split", 11);
  a.attr("split", Shape{1, 3});
  a.input<float>({4}, {1, 2, 3, 4});
  a.output<float>({1}, {1});
  a.output<float>({3}, {2, 3, 4});
  a.run();
  OpTester i("Split", 13);
  i.attr("axis", int64_t{-1});
  i.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({3}, {2, 0, 1});
  i.output<float>({2, 2}, {1, 2, 4, 5});
  i.output<float>({2, 0}, {});
  i.output<float>({2, 1}, {3, 6});
  i.run();
  OpTester one("Split", 1);
  one.input<float>({3}, {1, 2, 3}).input<int64_t>({2}, {2, 1});
  one.output<float>({2}, {1, 2});
  one.output<float>({1}, {3});
  one.run();
}

TEST(Split, ErrorsNameTheProblem) {
  OpTester uneven("Split", 13);
  uneven.input<float>({5}, {1, 2, 3, 4, 5});
  uneven.unchecked_output().unchecked_output();
  uneven.expect_failure(StatusCode::kShapeMismatch, "axis 0 of size 5 cannot be split evenly into 2 outputs");
  OpTester sum("Split", 13);
  sum.input<float>({4}, {1, 2, 3, 4}).input<int64_t>({2}, {1, 2});
  sum.unchecked_output().unchecked_output();
  sum.expect_failure(StatusCode::kShapeMismatch, "split has 2 sizes summing to 3, but there are 2 outputs");
  OpTester axis("Split", 11);
  axis.attr("axis", int64_t{1});
  axis.input<float>({4}, {1, 2, 3, 4});
  axis.unchecked_output();
  axis.expect_failure(StatusCode::kInvalidModel, "axis 1 is not in valid range [-1, 0]");
}

}  // namespace
}  // namespace vn::ops::testing
