// SPDX-License-Identifier: Apache-2.0
// Op versions past opset 17 whose semantics changed (the versions that only added element types
// are covered by registry_test.cpp), and the executors' refusal of a node part that its kernel
// does not read (KernelContext::check_all_read).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<float> iota16() {
  std::vector<float> v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(ReduceAxesInput, EveryReduceTakesAxesAsAnInputFrom18) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  OpTester mean("ReduceMean", 18);
  mean.input<float>({2, 3}, x).input<int64_t>({1}, {1});
  mean.output<float>({2, 1}, {2, 5});
  mean.run();
  OpTester max("ReduceMax", 20);
  max.attr("keepdims", int64_t{0}).input<float>({2, 3}, x).input<int64_t>({1}, {0});
  max.output<float>({3}, {4, 5, 6});
  max.run();
  OpTester noop("ReduceL2", 18);
  noop.attr("noop_with_empty_axes", int64_t{1}).input<float>({2, 3}, x).input<int64_t>({0}, {});
  noop.output<float>({2, 3}, x);
  noop.run();
  OpTester all("ReduceLogSumExp", 18);
  all.input<float>({2}, {0, 0});
  all.output<float>({1}, {std::log(2.0f)});
  all.run();
}

TEST(ReduceMaxMin20, BoolIsAnyAndAll) {
  const std::vector<bool> x = {true, false, false, false};
  OpTester any("ReduceMax", 20);
  any.attr("keepdims", int64_t{0}).input<bool>({2, 2}, x).input<int64_t>({1}, {1});
  any.output<bool>({2}, {true, false});
  any.run();
  OpTester all("ReduceMin", 20);
  all.attr("keepdims", int64_t{0}).input<bool>({2, 2}, {true, true, true, false}).input<int64_t>({1}, {1});
  all.output<bool>({2}, {true, false});
  all.run();
  // Over an empty set: the identities false (max) and true (min).
  OpTester empty_max("ReduceMax", 20);
  empty_max.attr("keepdims", int64_t{0}).input<bool>({2, 0}, {}).input<int64_t>({1}, {1});
  empty_max.output<bool>({2}, {false, false});
  empty_max.run();
  OpTester old("ReduceMax", 18);
  old.input<bool>({2}, {true, false});
  old.expect_failure(StatusCode::kUnsupportedDType, "bool");
}

TEST(AveragePool19, DilationsSpreadTheTaps) {
  OpTester t("AveragePool", 19);
  t.attr("kernel_shape", Shape{2, 2}).attr("dilations", Shape{2, 2});
  t.input<float>({1, 1, 4, 4}, iota16());
  t.output<float>({1, 1, 2, 2}, {6, 7, 10, 11});  // (1+3+9+11)/4, ...
  t.run();
}

TEST(AveragePool19, CountIncludePadCountsDilatedTapsInThePadding) {
  // Row 0 of a 1x4 input, pads 1 on both sides, kernel 2 dilated by 2: windows at -1 (taps -1, 1),
  // 0 (0, 2), 1 (1, 3), 2 (2, 4 in the padding).
  OpTester t("AveragePool", 19);
  t.attr("kernel_shape", Shape{2}).attr("dilations", Shape{2}).attr("pads", Shape{1, 1});
  t.attr("count_include_pad", int64_t{1});
  t.input<float>({1, 1, 4}, {1, 2, 3, 4});
  t.output<float>({1, 1, 4}, {1, 2, 3, 1.5});
  t.run();
}

TEST(AveragePool11, ADilationsAttributeItDoesNotReadIsRefused) {
  OpTester t("AveragePool", 11);
  t.attr("kernel_shape", Shape{2, 2}).attr("dilations", Shape{2, 2});
  t.input<float>({1, 1, 4, 4}, iota16());
  t.expect_failure(StatusCode::kUnsupportedAttr, "attribute 'dilations' of AveragePool-11 is not implemented");
}

TEST(LpPool18, DilationsAndCeilMode) {
  OpTester t("LpPool", 18);
  t.attr("kernel_shape", Shape{2, 2}).attr("dilations", Shape{2, 2}).attr("p", int64_t{1});
  t.attr("strides", Shape{2, 2}).attr("ceil_mode", int64_t{1});
  t.input<float>({1, 1, 4, 4}, iota16());
  // ceil_mode keeps the windows starting at 2, whose second taps fall outside.
  t.output<float>({1, 1, 2, 2}, {1 + 3 + 9 + 11, 3 + 11, 9 + 11, 11});
  t.run();
}

TEST(Pad18, AxesNamesThePaddedAxes) {
  OpTester t("Pad", 18);
  t.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2}, {1, 0}).omitted_input().input<int64_t>({1}, {-1});
  t.output<float>({2, 3}, {0, 1, 2, 0, 3, 4});
  t.run();
}

TEST(Pad19, WrapModeWrapsAround) {
  OpTester t("Pad", 19);
  t.attr("mode", "wrap").input<float>({3}, {1, 2, 3}).input<int64_t>({2}, {2, 1});
  t.output<float>({6}, {2, 3, 1, 2, 3, 1});
  t.run();
  OpTester old("Pad", 18);
  old.attr("mode", "wrap").input<float>({3}, {1, 2, 3}).input<int64_t>({2}, {2, 1});
  old.expect_failure(StatusCode::kInvalidModel, "mode 'wrap' is not one of constant, reflect, edge");
}

TEST(Split18, NumOutputsMakesTheLastPartSmaller) {
  OpTester t("Split", 18);
  t.attr("num_outputs", int64_t{3}).input<float>({7}, {1, 2, 3, 4, 5, 6, 7});
  t.output<float>({3}, {1, 2, 3}).output<float>({3}, {4, 5, 6}).output<float>({1}, {7});
  t.run();
}

TEST(Scatter18, MaxAndMinReductions) {
  OpTester t("ScatterElements", 18);
  t.attr("reduction", "max").input<float>({3}, {1, 5, 3}).input<int64_t>({3}, {0, 0, 2});
  t.input<float>({3}, {4, 2, 7});
  t.output<float>({3}, {4, 5, 7});
  t.run();
  OpTester nd("ScatterND", 18);
  nd.attr("reduction", "min").input<float>({3}, {1, 5, 3}).input<int64_t>({2, 1}, {1, 1});
  nd.input<float>({2}, {4, 6});
  nd.output<float>({3}, {1, 4, 3});
  nd.run();
}

TEST(Resize18, KeepAspectRatioPolicyOverTheNamedAxes) {
  // Sizes 4x4 for a 2x4 image: not_larger keeps the smaller ratio (1), not_smaller the larger (2).
  OpTester smaller("Resize", 18);
  smaller.attr("axes", Shape{2, 3}).attr("keep_aspect_ratio_policy", "not_larger").attr("mode", "nearest");
  smaller.input<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}).omitted_input().omitted_input();
  smaller.input<int64_t>({2}, {4, 4});
  smaller.output<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  smaller.run();
  OpTester larger("Resize", 18);
  larger.attr("axes", Shape{2, 3}).attr("keep_aspect_ratio_policy", "not_smaller").attr("mode", "nearest");
  larger.attr("nearest_mode", "floor");
  // Ratios 1 and 1.5: the larger one, 1.5, gives sizes round(1.5) = 2 and round(3) = 3, and drives
  // the transform (half_pixel, floor): rows sample 0, 0 and columns 0, 0, 1.
  larger.input<float>({1, 1, 1, 2}, {1, 2}).omitted_input().omitted_input().input<int64_t>({2}, {1, 3});
  larger.output<float>({1, 1, 2, 3}, {1, 1, 2, 1, 1, 2});
  larger.run();
}

TEST(Resize18, AntialiasWidensTheDownsamplingFilter) {
  // Scale 0.5: the triangle filter spans 4 inputs with weights (1/8, 3/8, 3/8, 1/8) around 0.5,
  // edge-padded: (1 + 3 * 1 + 3 * 2 + 3) / 8 = 1.625 and its mirror 3.375 (plain linear: 1.5, 3.5).
  OpTester t("Resize", 18);
  t.attr("antialias", int64_t{1}).attr("mode", "linear");
  t.input<float>({1, 4}, {1, 2, 3, 4}).omitted_input().input<float>({2}, {1, 0.5f});
  t.output<float>({1, 2}, {1.625f, 3.375f});
  t.run();
}

TEST(Resize19, HalfPixelSymmetricCentresTheRoundedSpan) {
  // 1-D, 2 -> floor(2 * 1.7) = 3 outputs: adjustment 3 / 3.4, offset 1 * (1 - adjustment).
  OpTester t("Resize", 19);
  t.attr("coordinate_transformation_mode", "half_pixel_symmetric").attr("mode", "linear");
  t.input<float>({2}, {0, 10}).omitted_input().input<float>({1}, {1.7f});
  const double offset = 1.0 * (1 - 3 / 3.4);
  std::vector<float> expected;
  for (int j = 0; j < 3; ++j) {
    const double x = std::clamp(offset + (j + 0.5) / 1.7 - 0.5, 0.0, 1.0);
    expected.push_back(static_cast<float>(10 * x));
  }
  t.output<float>({3}, expected);
  t.run();
}

TEST(CheckAllRead, LegacyConsumedInputsIsNotAnUnreadAttribute) {
  OpTester t("Abs", 1);
  t.attr("consumed_inputs", Shape{0});
  t.input<float>({2}, {-1, 2});
  t.output<float>({2}, {1, 2});
  t.run();
}

}  // namespace
}  // namespace vn::ops::testing
