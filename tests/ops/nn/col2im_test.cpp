// SPDX-License-Identifier: Apache-2.0
// Expected values from a numpy transcription of ONNX's reference col2im (blocks added into the
// image at position * stride - pad_begin + offset * dilation).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<float> count_from_1(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(Col2Im, OverlappingBlocksAddUp) {
  // Two channels of 2x2 blocks at the 2 x 3 positions of a 3 x 4 image.
  OpTester t("Col2Im", 18);
  t.input<float>({1, 8, 6}, count_from_1(48)).input<int64_t>({2}, {3, 4}).input<int64_t>({2}, {2, 2});
  t.output<float>({1, 2, 3, 4},
                  {1, 9, 11, 9, 17, 48, 52, 33, 16, 39, 41, 24, 25, 57, 59, 33, 65, 144, 148, 81, 40, 87, 89, 48});
  t.run();
}

TEST(Col2Im, PadsAndStridesDropWhatFallsOutside) {
  OpTester t("Col2Im", 18);
  t.attr("pads", Shape{1, 1, 1, 1}).attr("strides", Shape{2, 2});
  t.input<double>({1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  t.input<int64_t>({2}, {3, 3}).input<int64_t>({2}, {2, 2});
  t.output<double>({1, 1, 3, 3}, {13, 10, 14, 7, 4, 8, 15, 12, 16});
  t.run();
}

TEST(Col2Im, OneDimensionWithDilation) {
  // Blocks of 2 taps 2 apart over a length-5 signal: 3 positions, taps (p, p + 2).
  OpTester t("Col2Im", 18);
  t.attr("dilations", Shape{2});
  t.input<float>({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  t.input<int64_t>({1}, {5}).input<int64_t>({1}, {2});
  t.output<float>({1, 1, 5}, {1, 2, 13, 20, 30});
  t.run();
}

TEST(Col2Im, ErrorsNameTheProblem) {
  OpTester l("Col2Im", 18);
  l.input<float>({1, 4, 5}, count_from_1(20)).input<int64_t>({2}, {3, 3}).input<int64_t>({2}, {2, 2});
  l.expect_failure(StatusCode::kShapeMismatch,
                   "input dimension 2 must be the number of block positions (2 x 2), got 5");
  OpTester c("Col2Im", 18);
  c.input<float>({1, 3, 4}, count_from_1(12)).input<int64_t>({2}, {3, 3}).input<int64_t>({2}, {2, 2});
  c.expect_failure(StatusCode::kShapeMismatch, "is not a multiple of prod(block_shape) = 4");
  OpTester b("Col2Im", 18);
  b.input<float>({1, 4, 1}, count_from_1(4)).input<int64_t>({2}, {1, 1}).input<int64_t>({2}, {2, 2});
  b.expect_failure(StatusCode::kShapeMismatch, "no block of size 2 fits image dimension 0 of size 1");
  OpTester i("Col2Im", 18);
  i.input<int32_t>({1, 4, 1}, {1, 2, 3, 4}).input<int64_t>({2}, {2, 2}).input<int64_t>({2}, {2, 2});
  i.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

}  // namespace
}  // namespace vn::ops::testing
