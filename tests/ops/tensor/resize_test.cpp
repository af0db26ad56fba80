// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- Oracle ------------------------------------------------------------------------------------
// A double-precision transcription of ONNX's reference (onnx/backend/test/case/node/resize.py):
// nested 1-D interpolation, neighbours found by distance in an edge-padded copy of the line.
// pytorch_half_pixel uses the spec's 0 for a length-1 output (the reference script uses -0.5).

struct Config {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

std::vector<double> coefficients(const Config& c, double ratio, bool integral) {
  if (c.mode == "nearest") {
    if (integral) return {0, 1};
    if (c.nearest_mode == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (c.nearest_mode == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (c.nearest_mode == "floor") return {1, 0};
    return {0, 1};
  }
  if (c.mode == "linear") return {1 - ratio, ratio};
  const double A = c.cubic_a, r = ratio;
  return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
          ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
          ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
}

double interpolate_1d(const std::vector<double>& data, double scale, double out_width, double x, const Config& c,
                      double roi_start, double roi_end) {
  const auto in_width = static_cast<double>(data.size());
  double x_ori = 0;
  if (c.coord == "align_corners") {
    x_ori = out_width == 1 ? 0 : x * (in_width - 1) / (out_width - 1);
  } else if (c.coord == "asymmetric") {
    x_ori = x / scale;
  } else if (c.coord == "tf_crop_and_resize") {
    x_ori = out_width == 1 ? (roi_end - roi_start) * (in_width - 1) / 2
                           : x * (roi_end - roi_start) * (in_width - 1) / (out_width - 1);
    x_ori += roi_start * (in_width - 1);
    if (x_ori < 0 || x_ori > in_width - 1) return c.extrapolation;
  } else if (c.coord == "pytorch_half_pixel") {
    x_ori = out_width == 1 ? 0 : (x + 0.5) / scale - 0.5;
  } else {
    x_ori = (x + 0.5) / scale - 0.5;
  }
  const double fl = std::floor(x_ori);
  const bool integral = x_ori == fl;
  std::vector<double> coeffs = coefficients(c, integral ? 1.0 : x_ori - fl, integral);
  const auto n = static_cast<int64_t>(coeffs.size());
  const int64_t pad = (n + 1) / 2;
  std::vector<double> padded;
  for (int64_t i = -pad; i < static_cast<int64_t>(data.size()) + pad; ++i) {
    padded.push_back(data[static_cast<size_t>(std::clamp<int64_t>(i, 0, static_cast<int64_t>(data.size()) - 1))]);
  }
  std::vector<int64_t> idx(padded.size());
  std::iota(idx.begin(), idx.end(), 0);
  const double xp = x_ori + static_cast<double>(pad);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return std::abs(xp - static_cast<double>(a)) < std::abs(xp - static_cast<double>(b));
  });
  idx.resize(static_cast<size_t>(n));
  std::sort(idx.begin(), idx.end());
  if (c.exclude_outside) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t orig = idx[static_cast<size_t>(k)] - pad;
      if (orig < 0 || orig >= static_cast<int64_t>(data.size())) coeffs[static_cast<size_t>(k)] = 0;
      sum += coeffs[static_cast<size_t>(k)];
    }
    for (double& v : coeffs) v /= sum;
  }
  double r = 0;
  for (int64_t k = 0; k < n; ++k)
    r += coeffs[static_cast<size_t>(k)] * padded[static_cast<size_t>(idx[static_cast<size_t>(k)])];
  return r;
}

/// data (row-major, `shape`) sampled at output coordinate `x` (one entry per axis).
double interpolate_nd(const std::vector<double>& data, const Shape& shape, const std::vector<double>& scales,
                      const std::vector<double>& out_widths, const std::vector<int64_t>& x, const Config& c,
                      const std::vector<double>& roi, size_t axis) {
  const size_t rank = shape.size();
  const int64_t inner =
      std::accumulate(shape.begin() + static_cast<long>(axis) + 1, shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<double> line;
  for (int64_t i = 0; i < shape[axis]; ++i) {
    if (axis + 1 == rank) {
      line.push_back(data[static_cast<size_t>(i)]);
    } else {
      const std::vector<double> sub(data.begin() + i * inner, data.begin() + (i + 1) * inner);
      line.push_back(interpolate_nd(sub, shape, scales, out_widths, x, c, roi, axis + 1));
    }
  }
  const double rs = roi.empty() ? 0.0 : roi[axis], re = roi.empty() ? 1.0 : roi[rank + axis];
  return interpolate_1d(line, scales[axis], out_widths[axis], static_cast<double>(x[axis]), c, rs, re);
}

/// Runs Resize-13 with `scales` (or `sizes` when non-empty) and compares with the oracle.
void check_resize(const Config& c, const Shape& shape, const std::vector<float>& scales,
                  const std::vector<int64_t>& sizes = {}, const std::vector<float>& roi = {}) {
  SCOPED_TRACE(c.mode + " / " + c.coord + " / " + c.nearest_mode);
  std::vector<float> x(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)) * 10);
  Shape out_shape(shape.size());
  std::vector<double> s(shape.size()), widths(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (sizes.empty()) {
      s[d] = scales[d];
      widths[d] = s[d] * static_cast<double>(shape[d]);
      out_shape[d] = static_cast<int64_t>(std::floor(widths[d]));
    } else {
      out_shape[d] = sizes[d];
      s[d] = static_cast<double>(sizes[d]) / static_cast<double>(shape[d]);
      widths[d] = static_cast<double>(sizes[d]);
    }
  }
  const std::vector<double> xd(x.begin(), x.end());
  const std::vector<double> roid(roi.begin(), roi.end());
  std::vector<float> expected(static_cast<size_t>(shape_numel(out_shape)));
  std::vector<int64_t> pos(shape.size(), 0);
  for (float& e : expected) {
    e = static_cast<float>(interpolate_nd(xd, shape, s, widths, pos, c, roid, 0));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
  OpTester t("Resize", 13);
  t.attr("mode", c.mode).attr("coordinate_transformation_mode", c.coord).attr("nearest_mode", c.nearest_mode);
  t.attr("cubic_coeff_a", static_cast<float>(c.cubic_a)).attr("exclude_outside", int64_t{c.exclude_outside ? 1 : 0});
  t.attr("extrapolation_value", static_cast<float>(c.extrapolation));
  t.input<float>(shape, x);
  if (roi.empty()) {
    t.omitted_input();
  } else {
    t.input<float>({static_cast<int64_t>(roi.size())}, roi);
  }
  if (sizes.empty()) {
    t.input<float>({static_cast<int64_t>(scales.size())}, scales);
  } else {
    t.omitted_input().input<int64_t>({static_cast<int64_t>(sizes.size())}, sizes);
  }
  t.output<float>(out_shape, expected);
  t.tolerance(1e-5, 1e-5);
  t.run();
}

// ---- Resize ------------------------------------------------------------------------------------

TEST(Resize, NearestUpsampleByHand) {
  OpTester t("Resize", 13);
  t.attr("mode", "nearest");
  t.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).omitted_input().input<float>({4}, {1, 1, 2, 3});
  t.output<float>({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  t.run();
}

TEST(Resize, LinearHalfPixelByHand) {
  // 1-D [0, 10] upsampled by 2: x_original = (j + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25; the
  // edges repeat, so the ends stay at 0 and 10.
  OpTester t("Resize", 11);
  t.attr("mode", "linear");
  t.input<float>({2}, {0, 10}).input<float>({0}, {}).input<float>({1}, {2});
  t.output<float>({4}, {0, 2.5f, 7.5f, 10});
  t.run();
}

TEST(Resize, MatchesTheReferenceForEveryModeAndTransform) {
  const Shape shape = {1, 2, 4, 5};
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
      Config c;
      c.mode = mode;
      c.coord = coord;
      check_resize(c, shape, {1, 1, 2, 1.7f});
      check_resize(c, shape, {1, 1, 0.6f, 0.8f});
      check_resize(c, shape, {}, {1, 2, 7, 3});
    }
  }
}

TEST(Resize, NearestModes) {
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners"}) {
      Config c;
      c.coord = coord;
      c.nearest_mode = nearest;
      check_resize(c, {1, 1, 4, 4}, {}, {1, 1, 8, 7});
      check_resize(c, {1, 1, 4, 4}, {1, 1, 0.5f, 0.75f});
    }
  }
}

TEST(Resize, CubicCoefficientAndExcludeOutside) {
  Config c;
  c.mode = "cubic";
  c.cubic_a = -0.5;
  c.exclude_outside = true;
  check_resize(c, {1, 1, 4, 4}, {1, 1, 2, 2});
  check_resize(c, {1, 1, 4, 4}, {1, 1, 0.8f, 0.8f});
  c.mode = "linear";
  check_resize(c, {3, 5}, {1.5f, 2});
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  Config c;
  c.mode = "linear";
  c.coord = "tf_crop_and_resize";
  check_resize(c, {1, 1, 4, 4}, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f});
  c.extrapolation = 10;
  check_resize(c, {1, 1, 4, 4}, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  c.mode = "nearest";
  check_resize(c, {1, 1, 4, 4}, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
}

TEST(Resize, NearestCopiesAnyTypeAndEmptyOutputs) {
  OpTester s("Resize", 13);
  s.input<std::string>({2}, {"a", "b"}).omitted_input().input<float>({1}, {1.5f});
  s.output<std::string>({3}, {"a", "a", "b"});  // half_pixel x_original -1/6, 1/2, 7/6
  s.run();
  OpTester i("Resize", 13);
  i.attr("mode", "linear");
  i.input<uint8_t>({2}, {0, 255}).omitted_input().input<float>({1}, {2});
  i.output<uint8_t>({4}, {0, 63, 191, 255});  // 63.75 and 191.25 truncate
  i.run();
  OpTester e("Resize", 13);
  e.input<float>({1, 2}, {1, 2}).omitted_input().omitted_input().input<int64_t>({2}, {0, 2});
  e.output<float>({0, 2}, {});
  e.run();
}

TEST(Resize, Opset10IsAsymmetricWithFloor) {
  // x_original = j / 0.6 = 0, 1.67 -> floor -> 0, 1; linear interpolates at 1.67.
  OpTester n("Resize", 10);
  n.input<float>({1, 4}, {1, 2, 3, 4}).input<float>({2}, {1, 0.6f});
  n.output<float>({1, 2}, {1, 2});
  n.run();
  OpTester l("Resize", 10);
  l.attr("mode", "linear");
  l.input<float>({1, 4}, {1, 2, 3, 4}).input<float>({2}, {1, 0.6f});
  l.output<float>({1, 2}, {1, 1 + 1 / 0.6f});
  l.run();
}

TEST(Resize, ErrorsNameTheProblem) {
  OpTester both("Resize", 13);
  both.input<float>({2}, {1, 2}).omitted_input().input<float>({1}, {2}).input<int64_t>({1}, {4});
  both.expect_failure(StatusCode::kInvalidModel, "only one of scales and sizes may be given");
  OpTester none("Resize", 13);
  none.input<float>({2}, {1, 2});
  none.expect_failure(StatusCode::kInvalidModel, "one of scales and sizes must be given");
  OpTester rank("Resize", 13);
  rank.input<float>({2}, {1, 2}).omitted_input().input<float>({2}, {2, 2});
  rank.expect_failure(StatusCode::kShapeMismatch, "scales has 2 entries but the input (2,) has rank 1");
  OpTester scale("Resize", 13);
  scale.input<float>({2}, {1, 2}).omitted_input().input<float>({1}, {0});
  scale.expect_failure(StatusCode::kInvalidModel, "scales[0] must be positive and finite, got 0");
  OpTester mode("Resize", 13);
  mode.attr("coordinate_transformation_mode", "corners");
  mode.input<float>({2}, {1, 2}).omitted_input().input<float>({1}, {2});
  mode.expect_failure(StatusCode::kInvalidModel, "coordinate_transformation_mode 'corners' is not supported");
  OpTester cubic("Resize", 10);
  cubic.attr("mode", "cubic");
  cubic.input<float>({2}, {1, 2}).input<float>({1}, {2});
  cubic.expect_failure(StatusCode::kInvalidModel, "mode 'cubic' is not one of nearest, linear");
}

// ---- Upsample ----------------------------------------------------------------------------------

TEST(Resize, AntialiasStretchesTheFilterWhenDownsampling) {
  // Values from the ONNX reference's _linear/_cubic_coeffs_antialias with edge padding, half_pixel.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const struct {
    const char* mode;
    int64_t size;
    std::vector<float> y;
  } cases[] = {{"linear", 3, {1.97674419f, 4.5f, 7.02325581f}},
               {"cubic", 3, {1.78805827f, 4.5f, 7.21194173f}},
               {"linear", 5, {1.36f, 2.92592593f, 4.5f, 6.07407407f, 7.64f}}};
  for (const auto& c : cases) {
    for (int64_t opset : {18, 19}) {
      OpTester t("Resize", opset);
      t.attr("mode", c.mode).attr("antialias", int64_t{1});
      t.input<float>({8}, x).omitted_input().omitted_input().input<int64_t>({1}, {c.size});
      t.output<float>({c.size}, c.y);
      t.run();
    }
  }
  // Upsampling is unchanged by antialias.
  OpTester up("Resize", 19);
  up.attr("mode", "linear").attr("antialias", int64_t{1});
  up.input<float>({2}, {0, 4}).omitted_input().input<float>({1}, {2.0f});
  up.output<float>({4}, {0, 1, 3, 4});
  up.run();
  OpTester n("Resize", 19);
  n.attr("antialias", int64_t{1});
  n.input<float>({2}, {0, 4}).omitted_input().input<float>({1}, {0.5f});
  n.expect_failure(StatusCode::kUnsupportedAttr, "antialias=1 is defined for linear and cubic modes, not nearest");
}

TEST(Upsample, NearestAndLinearRepeatAsymmetrically) {
  OpTester t("Upsample", 9);
  t.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({4}, {1, 1, 2, 3});
  t.output<float>({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  t.run();
  OpTester l("Upsample", 7);
  l.attr("mode", "linear").attr("scales", std::vector<float>{1, 2});
  l.input<float>({1, 2}, {0, 10});
  l.output<float>({1, 4}, {0, 5, 10, 10});  // x_original = j / 2; the edge repeats past 1
  l.run();
}

TEST(Upsample, ErrorsNameTheProblem) {
  OpTester down("Upsample", 9);
  down.input<float>({2}, {1, 2}).input<float>({1}, {0.5f});
  down.expect_failure(StatusCode::kInvalidModel, "scales[0] = 0.5 is below 1");
  OpTester attr("Upsample", 7);
  attr.input<float>({2}, {1, 2});
  attr.expect_failure(StatusCode::kInvalidModel, "attribute scales is required");
}

}  // namespace
}  // namespace vn::ops::testing
