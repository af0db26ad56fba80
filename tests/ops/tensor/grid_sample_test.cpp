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

// Expected values of the version-20 tests from PyTorch 1.13's grid_sample and affine_grid
// (float64), which ONNX's GridSample and AffineGrid follow, except that nearest rounds half to
// even in 3-D as in ONNX 1.23's expected values (PyTorch 1.13 rounded coordinates 0.5 to 1 there).
TEST(GridSample20, VolumetricMatchesPyTorch) {
  std::vector<double> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i + 1);
  const std::vector<double> grid = {-1, -1, -1, 0.3, -0.2, 0.5, 1.2, 0, -0.4, 0, 0, 0};
  const struct {
    const char* mode;
    const char* padding;
    int64_t align;
    std::vector<double> y;
  } cases[] = {{"linear", "zeros", 0, {0.125, 9.35, 1.02, 6.5}},
               {"linear", "zeros", 1, {1, 8, 5.04, 6.5}},
               {"linear", "border", 0, {1, 9.35, 5.1, 6.5}},
               {"linear", "border", 1, {1, 8, 6.3, 6.5}},
               {"linear", "reflection", 0, {1, 9.35, 5.1, 6.5}},
               {"linear", "reflection", 1, {1, 8, 6.1, 6.5}},
               {"nearest", "zeros", 0, {1, 8, 0, 2}},
               {"nearest", "zeros", 1, {1, 8, 3, 2}},
               {"nearest", "border", 0, {1, 8, 3, 2}},
               {"nearest", "reflection", 1, {1, 8, 3, 2}}};
  for (const auto& c : cases) {
    for (int64_t opset : {20, 22}) {
      OpTester t("GridSample", opset);
      t.attr("mode", c.mode).attr("padding_mode", c.padding).attr("align_corners", c.align);
      t.input<double>({1, 1, 2, 2, 3}, x).input<double>({1, 1, 1, 4, 3}, grid);
      t.output<double>({1, 1, 1, 1, 4}, c.y);
      t.run();
    }
  }
}

TEST(GridSample20, TwoDimensionsKeepVersion16sResultsUnderTheNewModeNames) {
  OpTester t("GridSample", 20);
  t.attr("mode", "cubic").attr("align_corners", int64_t{1});
  t.input<double>({1, 1, 1, 4}, {0, 1, 4, 9}).input<double>({1, 1, 2, 2}, {0, 0, -1, 1});
  t.output<double>({1, 1, 1, 2}, {2.125, 0});
  t.run();
  OpTester m("GridSample", 20);
  m.attr("mode", "bilinear");
  m.input<float>({1, 1, 2, 2}, {0, 1, 2, 3}).input<float>({1, 1, 1, 2}, {0, 0});
  m.expect_failure(StatusCode::kInvalidModel, "mode 'bilinear' is not one of linear, nearest, cubic");
  OpTester h("GridSample", 20);
  h.attr("mode", "cubic");
  h.input<float>({1, 1, 1, 1, 1, 1}, {1}).input<float>({1, 1, 1, 1, 1, 4}, {0, 0, 0, 0});
  h.expect_failure(StatusCode::kUnsupportedAttr, "GridSample over 4 spatial dimensions in cubic mode");
  OpTester v("GridSample", 16);
  v.input<float>({1, 1, 1, 2, 2}, {0, 1, 2, 3}).input<float>({1, 1, 1, 1, 3}, {0, 0, 0});
  v.expect_failure(StatusCode::kShapeMismatch, "X must be 4-D (N, C, H, W)");
}

TEST(AffineGrid, TwoAndThreeDimensionsMatchPyTorch) {
  const std::vector<double> theta = {1.0, 0.5, 0.2, -0.3, 0.8, 0.1};
  OpTester t("AffineGrid", 20);
  t.input<double>({1, 2, 3}, theta).input<int64_t>({4}, {1, 1, 2, 3});
  t.output<double>({1, 2, 3, 2},
                   {-0.7166667, -0.1, -0.05, -0.3, 0.6166667, -0.5, -0.2166667, 0.7, 0.45, 0.5, 1.1166667, 0.3});
  t.tolerance(1e-6, 1e-6);
  t.run();
  OpTester a("AffineGrid", 20);
  a.attr("align_corners", int64_t{1});
  a.input<double>({1, 2, 3}, theta).input<int64_t>({4}, {1, 1, 2, 3});
  a.output<double>({1, 2, 3, 2}, {-1.3, -0.4, -0.3, -0.7, 0.7, -1.0, -0.3, 1.2, 0.7, 0.9, 1.7, 0.6});
  a.run();
  OpTester v("AffineGrid", 20);
  v.input<float>({1, 3, 4}, {1.0f, 0.0f, 0.5f, 0.1f, 0.2f, 1.0f, 0.0f, 0.0f, 0.0f, -0.5f, 1.0f, 0.3f});
  v.input<int64_t>({5}, {1, 1, 2, 2, 2});
  v.output<float>({1, 2, 2, 2, 3},
                  {-0.65f, -0.6f, 0.05f, 0.35f, -0.4f, 0.05f, -0.65f, 0.4f, -0.45f, 0.35f, 0.6f, -0.45f,
                   -0.15f, -0.6f, 1.05f, 0.85f, -0.4f, 1.05f, -0.15f, 0.4f, 0.55f,  0.85f, 0.6f, 0.55f});
  v.run();
  OpTester e("AffineGrid", 20);
  e.input<float>({2, 2, 3}, std::vector<float>(12, 0.0f)).input<int64_t>({4}, {1, 1, 2, 3});
  e.expect_failure(StatusCode::kShapeMismatch, "theta must be (1, 2, 3) for size of 4 values");
}

}  // namespace
}  // namespace vn::ops::testing
