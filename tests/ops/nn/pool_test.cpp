// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

// ---- MaxPool -----------------------------------------------------------------------------------

TEST(MaxPool, TwoByTwoStrideTwoWithIndices) {
  for (int64_t opset : {8, 10, 11, 12}) {
    OpTester t("MaxPool", opset);
    t.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2});
    t.input<float>({1, 1, 4, 4}, iota_floats(16));
    t.output<float>({1, 1, 2, 2}, {6, 8, 14, 16});
    t.output<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
    t.run();
  }
}

TEST(MaxPool, IndicesCountBatchAndChannelAndStorageOrder) {
  OpTester t("MaxPool", 12);
  t.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2}).attr("storage_order", int64_t{1});
  std::vector<float> x = iota_floats(32);
  t.input<float>({2, 1, 4, 4}, x);
  t.output<float>({2, 1, 2, 2}, {6, 8, 14, 16, 22, 24, 30, 32});
  // Column-major within each plane: (h, w) -> h + w * H, plus the plane offset.
  t.output<int64_t>({2, 1, 2, 2}, {5, 13, 7, 15, 21, 29, 23, 31});
  t.run();
}

TEST(MaxPool, OmittedIndicesOutput) {
  OpTester t("MaxPool", 12);
  t.attr("kernel_shape", Shape{3});
  t.input<float>({1, 1, 5}, {1, 5, 2, 4, 3});
  t.output<float>({1, 1, 3}, {5, 5, 4});
  t.omitted_output();
  t.run();
}

TEST(MaxPool, CeilModeKeepsPartialWindows) {
  OpTester t("MaxPool", 10);
  t.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2}).attr("ceil_mode", int64_t{1});
  t.input<float>({1, 1, 5, 5}, iota_floats(25));
  t.output<float>({1, 1, 3, 3}, {7, 9, 10, 17, 19, 20, 22, 24, 25});
  t.run();
  OpTester floor_mode("MaxPool", 10);
  floor_mode.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2});
  floor_mode.input<float>({1, 1, 5, 5}, iota_floats(25));
  floor_mode.output<float>({1, 1, 2, 2}, {7, 9, 17, 19});
  floor_mode.run();
}

TEST(MaxPool, CeilModeDropsWindowStartingInEndPadding) {
  // in 5, kernel 2, stride 2, pads 1/1: ceil gives 4 windows, but the 4th would start at index 5,
  // wholly in the end padding, so it is dropped (PyTorch semantics).
  OpTester t("MaxPool", 11);
  t.attr("kernel_shape", Shape{2}).attr("strides", Shape{2}).attr("pads", Shape{1, 1}).attr("ceil_mode", int64_t{1});
  t.input<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  t.output<float>({1, 1, 3}, {1, 3, 5});
  t.output<int64_t>({1, 1, 3}, {0, 2, 4});
  t.run();
}

TEST(MaxPool, DilationsAndPadsAgainstNaive) {
  // 2-D, kernel 3x2, dilation 2x1, stride 1x2, pads 2/0/1/1, on random data.
  const int64_t h = 7, w = 6;
  const std::vector<float> x = random_floats(static_cast<size_t>(2 * h * w), 3);
  const int64_t kh = 3, kw = 2, dh = 2, dw = 1, sh = 1, sw = 2, ph0 = 2, pw0 = 0, ph1 = 1, pw1 = 1;
  const int64_t oh = (h + ph0 + ph1 - ((kh - 1) * dh + 1)) / sh + 1;
  const int64_t ow = (w + pw0 + pw1 - ((kw - 1) * dw + 1)) / sw + 1;
  std::vector<float> y;
  std::vector<int64_t> idx;
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = -1;
        for (int64_t a = 0; a < kh; ++a) {
          for (int64_t b = 0; b < kw; ++b) {
            const int64_t r = i * sh - ph0 + a * dh, q = j * sw - pw0 + b * dw;
            if (r < 0 || r >= h || q < 0 || q >= w) continue;
            if (x[c * h * w + r * w + q] > best) {
              best = x[c * h * w + r * w + q];
              at = c * h * w + r * w + q;
            }
          }
        }
        y.push_back(best);
        idx.push_back(at);
      }
    }
  }
  OpTester t("MaxPool", 12);
  t.attr("kernel_shape", Shape{kh, kw}).attr("dilations", Shape{dh, dw}).attr("strides", Shape{sh, sw});
  t.attr("pads", Shape{ph0, pw0, ph1, pw1});
  t.input<float>({1, 2, h, w}, x);
  t.output<float>({1, 2, oh, ow}, y);
  t.output<int64_t>({1, 2, oh, ow}, idx);
  t.run();
  // Without indices (the clipped-window path), on two threads.
  OpTester v("MaxPool", 12);
  v.attr("kernel_shape", Shape{kh, kw}).attr("dilations", Shape{dh, dw}).attr("strides", Shape{sh, sw});
  v.attr("pads", Shape{ph0, pw0, ph1, pw1});
  v.input<float>({1, 2, h, w}, x);
  v.output<float>({1, 2, oh, ow}, y);
  v.threads(2).run();
}

TEST(MaxPool, AutoPadSameUpperAnd3D) {
  OpTester t("MaxPool", 11);
  t.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2}).attr("auto_pad", "SAME_UPPER");
  t.input<float>({1, 1, 3, 3}, iota_floats(9));
  t.output<float>({1, 1, 2, 2}, {5, 6, 8, 9});
  t.run();
  OpTester l("MaxPool", 11);
  l.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2}).attr("auto_pad", "SAME_LOWER");
  l.input<float>({1, 1, 3, 3}, iota_floats(9));
  l.output<float>({1, 1, 2, 2}, {1, 3, 7, 9});
  l.run();
  OpTester d3("MaxPool", 12);
  d3.attr("kernel_shape", Shape{2, 2, 2});
  d3.input<float>({1, 1, 2, 2, 3}, iota_floats(12));
  d3.output<float>({1, 1, 1, 1, 2}, {11, 12});
  d3.output<int64_t>({1, 1, 1, 1, 2}, {10, 11});
  d3.run();
}

TEST(MaxPool, NaNPropagatesAndInt8) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("MaxPool", 12);
  t.attr("kernel_shape", Shape{2});
  t.input<float>({1, 1, 3}, {1, nan, 0});
  t.output<float>({1, 1, 2}, {nan, nan});
  t.run();
  // Across rows: a NaN stays through larger values in the rows after it, and before it.
  OpTester rows("MaxPool", 12);
  rows.attr("kernel_shape", Shape{2, 2});
  rows.input<float>({1, 1, 3, 3}, {nan, 0, 1, 9, 0, 2, 3, 4, nan});
  rows.output<float>({1, 1, 2, 2}, {nan, 2, 9, nan});
  rows.run();
  // A window that lies entirely in the padding (pads reaching the dilated kernel) yields lowest().
  OpTester p("MaxPool", 12);
  p.attr("kernel_shape", Shape{2}).attr("dilations", Shape{3}).attr("pads", Shape{4, 0});
  p.input<float>({1, 1, 3}, {1, 5, 2});
  p.output<float>({1, 1, 4}, {std::numeric_limits<float>::lowest(), 1, 5, 2});
  p.run();
  // A window of -inf (padding beside it) is -inf, not lowest(); a NaN met after -inf wins.
  const float inf = std::numeric_limits<float>::infinity();
  OpTester m("MaxPool", 12);
  m.attr("kernel_shape", Shape{3}).attr("strides", Shape{2}).attr("pads", Shape{1, 1});
  m.input<float>({1, 1, 5}, {-inf, -inf, -inf, nan, -inf});
  m.output<float>({1, 1, 3}, {-inf, nan, nan});
  m.run();
  OpTester i("MaxPool", 12);
  i.attr("kernel_shape", Shape{2}).attr("strides", Shape{2});
  i.input<int8_t>({1, 1, 4}, {-5, -7, 100, -128});
  i.output<int8_t>({1, 1, 2}, {-5, 100});
  i.run();
}

TEST(MaxPool, ErrorsNameTheProblem) {
  OpTester k("MaxPool", 12);
  k.input<float>({1, 1, 3, 3}, iota_floats(9));
  k.expect_failure(StatusCode::kInvalidModel, "attribute kernel_shape is required");
  OpTester r("MaxPool", 12);
  r.attr("kernel_shape", Shape{2});
  r.input<float>({4, 4}, iota_floats(16));
  r.expect_failure(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...)");
  OpTester d("MaxPool", 12);
  d.attr("kernel_shape", Shape{2, 2, 2});
  d.input<float>({1, 1, 3, 3}, iota_floats(9));
  d.expect_failure(StatusCode::kInvalidModel, "kernel_shape [2, 2, 2] has 3 dims but the input has 2 spatial dims");
  OpTester p("MaxPool", 12);
  p.attr("kernel_shape", Shape{2, 2}).attr("pads", Shape{1, 1});
  p.input<float>({1, 1, 3, 3}, iota_floats(9));
  p.expect_failure(StatusCode::kInvalidModel, "pads [1, 1] must have 4 non-negative entries");
}

// ---- AveragePool -------------------------------------------------------------------------------

TEST(AveragePool, CountIncludePad) {
  // x = 1..5, kernel 3, stride 2, pads 1/1: windows [p,1,2], [2,3,4], [4,5,p].
  OpTester excl("AveragePool", 11);
  excl.attr("kernel_shape", Shape{3}).attr("strides", Shape{2}).attr("pads", Shape{1, 1});
  excl.input<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  excl.output<float>({1, 1, 3}, {1.5f, 3, 4.5f});
  excl.run();
  OpTester incl("AveragePool", 7);
  incl.attr("kernel_shape", Shape{3}).attr("strides", Shape{2}).attr("pads", Shape{1, 1});
  incl.attr("count_include_pad", int64_t{1});
  incl.input<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  incl.output<float>({1, 1, 3}, {1, 3, 3});
  incl.run();
}

TEST(AveragePool, CeilModeWithAndWithoutPadCounting) {
  // x = 1..6, kernel 3, stride 2, pads 1/1, ceil: 4 windows; the last covers x[5], one pad cell and
  // one cell past the padding, which is never counted.
  for (int64_t include : {0, 1}) {
    OpTester t("AveragePool", 10);
    t.attr("kernel_shape", Shape{3}).attr("strides", Shape{2}).attr("pads", Shape{1, 1});
    t.attr("ceil_mode", int64_t{1}).attr("count_include_pad", include);
    t.input<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6});
    if (include) {
      t.output<float>({1, 1, 4}, {1, 3, 5, 3});
    } else {
      t.output<float>({1, 1, 4}, {1.5f, 3, 5, 6});
    }
    t.run();
  }
}

TEST(AveragePool, TwoDimensionalAgainstNaive) {
  const int64_t h = 6, w = 7, kh = 3, kw = 2, sh = 2, sw = 3;
  const int64_t pads[4] = {1, 0, 2, 1};
  const std::vector<float> x = random_floats(static_cast<size_t>(3 * h * w), 8);
  for (int64_t include : {0, 1}) {
    const int64_t oh = (h + pads[0] + pads[2] - kh) / sh + 1, ow = (w + pads[1] + pads[3] - kw) / sw + 1;
    std::vector<float> y;
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          int64_t count = 0;
          for (int64_t a = 0; a < kh; ++a) {
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t r = i * sh - pads[0] + a, q = j * sw - pads[1] + b;
              const bool in_image = r >= 0 && r < h && q >= 0 && q < w;
              const bool in_padded = r < h + pads[2] && q < w + pads[3];
              if (in_image) sum += x[c * h * w + r * w + q];
              if (in_image || (include && in_padded)) ++count;
            }
          }
          y.push_back(static_cast<float>(sum / count));
        }
      }
    }
    OpTester t("AveragePool", 11);
    t.attr("kernel_shape", Shape{kh, kw}).attr("strides", Shape{sh, sw}).attr("pads", Shape(pads, pads + 4));
    t.attr("count_include_pad", include);
    t.input<float>({1, 3, h, w}, x);
    t.output<float>({1, 3, oh, ow}, y);
    t.run();
  }
}

// Stride 1 along both axes with the output as wide as the input (Inception's 3 x 3 pools, pad 1)
// against the naive sum: windows taller and wider than the input, pads on one side only, rows of
// one value and of more than a vector, with and without the padding counted.
TEST(AveragePool, StrideOneSameWidthAgainstNaive) {
  struct Case {
    int64_t h, w, kh, kw, pads[4];
  };
  uint32_t seed = 30;
  for (const Case& k : {Case{35, 35, 3, 3, {1, 1, 1, 1}}, Case{9, 8, 3, 4, {0, 1, 2, 2}}, Case{3, 5, 5, 3, {3, 1, 1, 1}},
                        Case{1, 1, 3, 3, {1, 1, 1, 1}}, Case{7, 17, 1, 5, {0, 4, 0, 0}}, Case{2, 11, 2, 1, {0, 0, 0, 0}}}) {
    SCOPED_TRACE(std::to_string(k.h) + "x" + std::to_string(k.w) + " window " + std::to_string(k.kh) + "x" +
                 std::to_string(k.kw));
    const int64_t c = 3;
    const std::vector<float> x = random_floats(static_cast<size_t>(c * k.h * k.w), seed++);
    const int64_t oh = k.h + k.pads[0] + k.pads[2] - k.kh + 1, ow = k.w + k.pads[1] + k.pads[3] - k.kw + 1;
    ASSERT_EQ(ow, k.w);
    for (int64_t include : {0, 1}) {
      std::vector<float> y;
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            double sum = 0;
            int64_t count = 0;
            for (int64_t a = 0; a < k.kh; ++a) {
              for (int64_t b = 0; b < k.kw; ++b) {
                const int64_t r = i - k.pads[0] + a, q = j - k.pads[1] + b;
                const bool in_image = r >= 0 && r < k.h && q >= 0 && q < k.w;
                if (in_image) sum += x[static_cast<size_t>(ch * k.h * k.w + r * k.w + q)];
                if (in_image || include) ++count;
              }
            }
            y.push_back(static_cast<float>(sum / static_cast<double>(count)));
          }
        }
      }
      OpTester t("AveragePool", 11);
      t.attr("kernel_shape", Shape{k.kh, k.kw}).attr("pads", Shape(k.pads, k.pads + 4));
      t.attr("count_include_pad", include);
      t.input<float>({1, c, k.h, k.w}, x);
      t.output<float>({1, c, oh, ow}, y);
      t.run();
    }
  }
}

TEST(AveragePool, ThreeDimensionalAndSameUpper) {
  OpTester t("AveragePool", 11);
  t.attr("kernel_shape", Shape{2, 2, 2});
  t.input<float>({1, 1, 2, 2, 2}, iota_floats(8));
  t.output<float>({1, 1, 1, 1, 1}, {4.5f});
  t.run();
  OpTester s("AveragePool", 11);
  s.attr("kernel_shape", Shape{2, 2}).attr("auto_pad", "SAME_UPPER");
  s.input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  s.output<float>({1, 1, 2, 2}, {2.5f, 3, 3.5f, 4});
  s.run();
}

TEST(AveragePool, RejectsIntegers) {
  OpTester t("AveragePool", 11);
  t.attr("kernel_shape", Shape{1});
  t.input<int32_t>({1, 1, 2}, {1, 2});
  t.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

// ---- Global pools ------------------------------------------------------------------------------

TEST(GlobalPool, AverageAndMax) {
  OpTester a("GlobalAveragePool", 1);
  a.input<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, 10});
  a.output<float>({1, 2, 1, 1}, {2.5f, 1});
  a.run();
  OpTester m("GlobalMaxPool", 1);
  m.input<float>({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, 10});
  m.output<float>({1, 2, 1, 1}, {4, 10});
  m.run();
  OpTester d("GlobalAveragePool", 1);
  d.input<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  d.output<double>({2, 1, 1}, {2, 5});
  d.run();
  OpTester v("GlobalMaxPool", 1);
  v.input<float>({1, 1, 2, 1, 2}, {1, 9, 3, 4});
  v.output<float>({1, 1, 1, 1, 1}, {9});
  v.run();
}

TEST(GlobalPool, RankAndEmptyErrors) {
  OpTester r("GlobalAveragePool", 1);
  r.input<float>({3}, {1, 2, 3});
  r.expect_failure(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...)");
  OpTester e("GlobalMaxPool", 1);
  e.input<float>({1, 1, 0}, {});
  e.expect_failure(StatusCode::kShapeMismatch, "empty spatial dims");
}

// ---- LpPool ------------------------------------------------------------------------------------

TEST(LpPool, P2AndP1WithPadsAndStrides) {
  // x (1, 1, 3, 3) = 1..9; 2x2 windows with stride 1.
  OpTester t("LpPool", 11);
  t.attr("kernel_shape", Shape{2, 2});
  t.input<float>({1, 1, 3, 3}, iota_floats(9));
  t.output<float>({1, 1, 2, 2}, {std::sqrt(1.0f + 4 + 16 + 25), std::sqrt(4.0f + 9 + 25 + 36),
                                 std::sqrt(16.0f + 25 + 49 + 64), std::sqrt(25.0f + 36 + 64 + 81)});
  t.run();
  // p = 1, stride 2 and one cell of padding on each side: padded cells add nothing.
  OpTester p("LpPool", 2);
  p.attr("kernel_shape", Shape{2, 2}).attr("p", int64_t{1}).attr("strides", Shape{2, 2});
  p.attr("pads", Shape{1, 1, 1, 1});
  p.input<float>({1, 1, 3, 3}, {1, -2, 3, -4, 5, -6, 7, -8, 9});
  p.output<float>({1, 1, 2, 2}, {1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9});
  p.run();
}

TEST(LpPool, Opset1FloatPAndOneDimensional) {
  OpTester t("LpPool", 1);
  t.attr("kernel_shape", Shape{3}).attr("p", 3.0f).attr("strides", Shape{2});
  t.input<double>({1, 1, 5}, {1, -1, 2, 0, -2});
  t.output<double>({1, 1, 2}, {std::cbrt(10.0), std::cbrt(16.0)});
  t.run();
}

TEST(LpPool, Errors) {
  OpTester k("LpPool", 11);
  k.input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  k.expect_failure(StatusCode::kInvalidModel, "attribute kernel_shape is required");
  OpTester p("LpPool", 11);
  p.attr("kernel_shape", Shape{2, 2}).attr("p", int64_t{0});
  p.input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  p.expect_failure(StatusCode::kInvalidModel, "p must be positive and finite, got 0");
}

TEST(GlobalLpPool, DefaultP2AndOpset1FloatP) {
  OpTester t("GlobalLpPool", 2);
  t.input<float>({1, 2, 2}, {3, 4, 1, 0});
  t.output<float>({1, 2, 1}, {5, 1});
  t.run();
  OpTester o("GlobalLpPool", 1);
  o.attr("p", 1.0f);
  o.input<float>({2, 1, 2, 2}, {1, -2, 3, -4, 0, 0, 0, 0});
  o.output<float>({2, 1, 1, 1}, {10, 0});
  o.run();
  OpTester r("GlobalLpPool", 2);
  r.input<float>({3}, {1, 2, 3});
  r.expect_failure(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...), got (3,)");
}

// ---- MaxUnpool ---------------------------------------------------------------------------------

TEST(MaxUnpool, InvertsMaxPoolIndices) {
  // MaxPool 2x2/2 of a 4x4 picks these values at these flat indices.
  OpTester t("MaxUnpool", 11);
  t.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2});
  t.input<float>({1, 1, 2, 2}, {6, 8, 14, 16}).input<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  t.output<float>({1, 1, 4, 4}, {0, 0, 0, 0, 0, 6, 0, 8, 0, 0, 0, 0, 0, 14, 0, 16});
  t.run();
  // An explicit output_shape (5x5) pads the 4x4 result at the end; the indices keep referring to
  // the 4x4 layout (the ONNX reference and backend test).
  OpTester s("MaxUnpool", 9);
  s.attr("kernel_shape", Shape{2, 2}).attr("strides", Shape{2, 2});
  s.input<float>({1, 1, 2, 2}, {5, 6, 7, 8}).input<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  s.input<int64_t>({4}, {1, 1, 5, 5});
  std::vector<float> y(25, 0.0f);
  y[6] = 5, y[8] = 6, y[16] = 7, y[18] = 8;
  s.output<float>({1, 1, 5, 5}, y);
  s.run();
}

TEST(MaxUnpool, IndicesAcrossChannelsAndErrors) {
  OpTester t("MaxUnpool", 11);
  t.attr("kernel_shape", Shape{2});
  t.input<double>({1, 2, 1}, {7, 9}).input<int64_t>({1, 2, 1}, {1, 2});
  t.output<double>({1, 2, 2}, {0, 7, 9, 0});
  t.run();
  OpTester o("MaxUnpool", 11);
  o.attr("kernel_shape", Shape{2});
  o.input<float>({1, 1, 1}, {7}).input<int64_t>({1, 1, 1}, {2});
  o.expect_failure(StatusCode::kInvalidModel, "index I[0] = 2 is outside the unpooled shape (1, 1, 2) of 2 elements");
  OpTester i("MaxUnpool", 11);
  i.attr("kernel_shape", Shape{2});
  i.input<float>({1, 1, 1}, {7}).input<int32_t>({1, 1, 1}, {0});
  i.expect_failure(StatusCode::kShapeMismatch, "I must be an int64 tensor of X's shape");
  OpTester s("MaxUnpool", 11);
  s.attr("kernel_shape", Shape{2});
  s.input<float>({1, 1, 1}, {7}).input<int64_t>({1, 1, 1}, {0}).input<int64_t>({3}, {1, 2, 2});
  s.expect_failure(StatusCode::kShapeMismatch, "output_shape (1, 2, 2) must have X's rank, N and C");
  OpTester m("MaxUnpool", 11);
  m.attr("kernel_shape", Shape{2});
  m.input<float>({1, 1, 2}, {7, 8}).input<int64_t>({1, 1, 2}, {0, 1}).input<int64_t>({3}, {1, 1, 2});
  m.expect_failure(StatusCode::kShapeMismatch, "be no smaller than the inferred shape (1, 1, 3)");
}

// ---- MaxRoiPool --------------------------------------------------------------------------------

TEST(MaxRoiPool, BinsOfScaledRois) {
  // x = 1..16 in a 4x4 image. RoI 0 covers it all (quadrant maxima); RoI 1 is the 2x2 block at
  // (1, 1), one cell per bin; RoI 2 is RoI 0 given at twice the scale.
  OpTester t("MaxRoiPool", 1);
  t.attr("pooled_shape", Shape{2, 2});
  t.input<float>({1, 1, 4, 4}, iota_floats(16));
  t.input<float>({2, 5}, {0, 0, 0, 3, 3, 0, 1, 1, 2, 2});
  t.output<float>({2, 1, 2, 2}, {6, 8, 14, 16, 6, 7, 10, 11});
  t.run();
  OpTester s("MaxRoiPool", 1);
  s.attr("pooled_shape", Shape{2, 2}).attr("spatial_scale", 0.5f);
  std::vector<float> neg = iota_floats(16);
  for (float& v : neg) v = -v;
  s.input<float>({1, 1, 4, 4}, neg).input<float>({1, 5}, {0, 0, 0, 6, 6});
  s.output<float>({1, 1, 2, 2}, {-1, -3, -9, -11});
  s.run();
}

TEST(MaxRoiPool, Errors) {
  OpTester b("MaxRoiPool", 1);
  b.attr("pooled_shape", Shape{1, 1});
  b.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({1, 5}, {1, 0, 0, 1, 1});
  b.expect_failure(StatusCode::kInvalidModel, "RoI 0 has batch index 1, outside [0, 1)");
  OpTester p("MaxRoiPool", 1);
  p.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({1, 5}, {0, 0, 0, 1, 1});
  p.expect_failure(StatusCode::kInvalidModel, "attribute pooled_shape must be two positive values");
  OpTester r("MaxRoiPool", 1);
  r.attr("pooled_shape", Shape{1, 1});
  r.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({1, 4}, {0, 0, 1, 1});
  r.expect_failure(StatusCode::kShapeMismatch, "rois must be a (num_rois, 5) float32 tensor");
}

}  // namespace
}  // namespace vn::ops::testing
