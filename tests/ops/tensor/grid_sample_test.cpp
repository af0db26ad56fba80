// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(GridSample, BilinearAlignCorners) {
  // With align_corners the corners of [-1, 1] are the corner pixels' centres.
  OpTester t("GridSample", 16);
  t.attr("align_corners", int64_t{1});
  t.input<float>({1, 1, 2, 2}, {0, 1, 2, 3});
  t.input<float>({1, 1, 4, 2}, {0, 0, -1, -1, 1, -1, 0.5f, 1});
  t.output<float>({1, 1, 1, 4}, {1.5f, 0, 1, 2.75f});
  t.run();
}

TEST(GridSample, PaddingModesOutsideTheMap) {
  // (-1, -1) without align_corners is pixel (-0.5, -0.5): zeros padding weighs the one real
  // neighbour by 1/4, border and reflection both land on pixel (0, 0).
  const std::vector<float> x = {4, 8, 12, 16};
  const struct {
    const char* padding;
    float expected;
  } cases[] = {{"zeros", 1}, {"border", 4}, {"reflection", 4}};
  for (const auto& c : cases) {
    OpTester t("GridSample", 16);
    t.attr("padding_mode", c.padding);
    t.input<float>({1, 1, 2, 2}, x).input<float>({1, 1, 1, 2}, {-1, -1});
    t.output<float>({1, 1, 1, 1}, {c.expected});
    t.run();
  }
  // Far outside, border padding clamps to the edge: the corner, and row-interpolated column 0.
  OpTester far("GridSample", 16);
  far.attr("padding_mode", "border");
  far.input<float>({1, 1, 2, 2}, x).input<float>({1, 1, 2, 2}, {10, 10, -1e30f, 0});
  far.output<float>({1, 1, 1, 2}, {16, 8});
  far.run();
}

TEST(GridSample, NearestRoundsHalfToEven) {
  // Grid (0.2, -0.2) is pixel (0.7, 0.3) -> (1, 0); grid (0, 0) is pixel (0.5, 0.5) -> (0, 0).
  OpTester t("GridSample", 16);
  t.attr("mode", "nearest");
  t.input<float>({1, 1, 2, 2}, {4, 8, 12, 16}).input<float>({1, 1, 2, 2}, {0.2f, -0.2f, 0, 0});
  t.output<float>({1, 1, 1, 2}, {8, 4});
  t.run();
}

TEST(GridSample, BicubicUsesKeysWeights) {
  // Pixel x = 1.5 of [0, 1, 4, 9] with a = -0.75: weights (-3/32, 19/32, 19/32, -3/32) give 2.125.
  OpTester t("GridSample", 16);
  t.attr("mode", "bicubic").attr("align_corners", int64_t{1});
  t.input<double>({1, 1, 1, 4}, {0, 1, 4, 9}).input<double>({1, 1, 2, 2}, {0, 0, -1, 1});
  t.output<double>({1, 1, 1, 2}, {2.125, 0});
  t.run();
}

TEST(GridSample, ErrorsNameTheProblem) {
  OpTester g("GridSample", 16);
  g.input<float>({1, 1, 2, 2}, {0, 1, 2, 3}).input<float>({1, 1, 1, 3}, {0, 0, 0});
  g.expect_failure(StatusCode::kShapeMismatch, "grid must be (N, H_out, W_out, 2) with N = 1, got shape (1, 1, 1, 3)");
  OpTester m("GridSample", 16);
  m.attr("mode", "linear");
  m.input<float>({1, 1, 2, 2}, {0, 1, 2, 3}).input<float>({1, 1, 1, 2}, {0, 0});
  m.expect_failure(StatusCode::kInvalidModel, "mode 'linear' is not one of bilinear, nearest, bicubic");
}

}  // namespace
}  // namespace vn::ops::testing
