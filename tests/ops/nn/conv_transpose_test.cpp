// SPDX-License-Identifier: Apache-2.0
// ConvTranspose against a naive scatter written independently of the kernel (every input element
// times every kernel tap added at stride·i + dilation·k - pad_begin), and ConvInteger by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

struct TransposeConfig {
  int64_t n = 1, c = 1, m_per_group = 1, group = 1;
  Shape in, kernel;
  Shape strides = {}, dilations = {}, pads = {}, output_padding = {};
};

/// The naive transposed convolution with explicit pads (begins then ends) and output_padding.
std::vector<float> naive_transpose(const TransposeConfig& t, const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>& b, Shape& out_shape) {
  const size_t k = t.in.size();
  auto at = [](const Shape& v, size_t i, int64_t d) { return v.empty() ? d : v[i]; };
  Shape out(k);
  for (size_t i = 0; i < k; ++i) {
    out[i] = at(t.strides, i, 1) * (t.in[i] - 1) + at(t.output_padding, i, 0) +
             (t.kernel[i] - 1) * at(t.dilations, i, 1) + 1 - at(t.pads, i, 0) - at(t.pads, k + i, 0);
  }
  const int64_t m = t.m_per_group * t.group, cg = t.c / t.group;
  out_shape = {t.n, m};
  out_shape.insert(out_shape.end(), out.begin(), out.end());
  int64_t out_size = 1, in_size = 1, k_size = 1;
  for (size_t i = 0; i < k; ++i) out_size *= out[i], in_size *= t.in[i], k_size *= t.kernel[i];
  std::vector<double> y(static_cast<size_t>(t.n * m * out_size), 0.0);
  for (int64_t img = 0; img < t.n; ++img)
    for (int64_t ci = 0; ci < t.c; ++ci)
      for (int64_t ip = 0; ip < in_size; ++ip)
        for (int64_t om = 0; om < t.m_per_group; ++om)
          for (int64_t kp = 0; kp < k_size; ++kp) {
            // Decompose ip and kp into per-dim coordinates and find the output coordinate.
            int64_t rem_i = ip, rem_k = kp, flat = 0;
            bool inside = true;
            std::vector<int64_t> o(k);
            for (size_t d = k; d-- > 0;) {
              const int64_t id = rem_i % t.in[d], kd = rem_k % t.kernel[d];
              rem_i /= t.in[d];
              rem_k /= t.kernel[d];
              o[d] = id * at(t.strides, d, 1) + kd * at(t.dilations, d, 1) - at(t.pads, d, 0);
              inside = inside && o[d] >= 0 && o[d] < out[d];
            }
            if (!inside) continue;
            for (size_t d = 0; d < k; ++d) flat = flat * out[d] + o[d];
            const int64_t oc = (ci / cg) * t.m_per_group + om;
            const double xv = x[static_cast<size_t>((img * t.c + ci) * in_size + ip)];
            const double wv = w[static_cast<size_t>((ci * t.m_per_group + om) * k_size + kp)];
            y[static_cast<size_t>((img * m + oc) * out_size + flat)] += xv * wv;
          }
  std::vector<float> r(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t oc = static_cast<int64_t>(i) / out_size % m;
    r[i] = static_cast<float>(y[i] + (b.empty() ? 0.0 : b[static_cast<size_t>(oc)]));
  }
  return r;
}

void check_transpose(const TransposeConfig& t, uint32_t seed, bool bias = true) {
  Shape x_shape = {t.n, t.c};
  x_shape.insert(x_shape.end(), t.in.begin(), t.in.end());
  Shape w_shape = {t.c, t.m_per_group};
  w_shape.insert(w_shape.end(), t.kernel.begin(), t.kernel.end());
  const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(x_shape)), seed);
  const std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(w_shape)), seed + 1);
  const std::vector<float> b =
      bias ? random_floats(static_cast<size_t>(t.m_per_group * t.group), seed + 2) : std::vector<float>{};
  Shape out_shape;
  const std::vector<float> y = naive_transpose(t, x, w, b, out_shape);
  OpTester op("ConvTranspose", 11);
  if (t.group != 1) op.attr("group", t.group);
  if (!t.strides.empty()) op.attr("strides", t.strides);
  if (!t.dilations.empty()) op.attr("dilations", t.dilations);
  if (!t.pads.empty()) op.attr("pads", t.pads);
  if (!t.output_padding.empty()) op.attr("output_padding", t.output_padding);
  op.input<float>(x_shape, x).input<float>(w_shape, w);
  if (bias) op.input<float>({t.m_per_group * t.group}, b);
  op.output<float>(out_shape, y);
  op.tolerance(1e-5, 1e-5);
  op.run();
}

TEST(ConvTranspose, OneDimensionalByHand) {
  OpTester t("ConvTranspose", 11);
  t.attr("strides", Shape{2});
  t.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 3}, {1, 1, 1});
  t.output<float>({1, 1, 7}, {1, 1, 3, 2, 5, 3, 3});
  t.run();
  OpTester s("ConvTranspose", 1);
  s.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 3}, {1, 1, 1}).input<float>({1}, {10});
  s.output<float>({1, 1, 5}, {11, 13, 16, 15, 13});
  s.run();
}

TEST(ConvTranspose, TwoDimensionalAgainstNaive) {
  check_transpose({.n = 2, .c = 3, .m_per_group = 2, .in = {4, 5}, .kernel = {3, 2}}, 1);
  check_transpose({.c = 2, .m_per_group = 3, .in = {3, 3}, .kernel = {3, 3}, .strides = {3, 2}, .pads = {1, 2, 1, 2}},
                  4);
  check_transpose({.c = 1,
                   .m_per_group = 2,
                   .in = {3, 4},
                   .kernel = {2, 3},
                   .strides = {2, 3},
                   .dilations = {2, 1},
                   .pads = {0, 1, 1, 0},
                   .output_padding = {1, 2}},
                  7, false);
}

TEST(ConvTranspose, GroupsAndThreeDimensional) {
  check_transpose({.n = 1, .c = 4, .m_per_group = 3, .group = 2, .in = {3, 3}, .kernel = {2, 2}, .strides = {2, 2}},
                  10);
  check_transpose({.c = 2,
                   .m_per_group = 2,
                   .in = {2, 3, 2},
                   .kernel = {2, 2, 3},
                   .strides = {1, 2, 1},
                   .pads = {0, 1, 1, 1, 0, 0}},
                  13);
}

TEST(ConvTranspose, OutputShapeAndAutoPad) {
  // x (1, 1, 3) = [1, 2, 3], w = [1, 1, 1], stride 2: the natural output is [1, 1, 3, 2, 5, 3, 3].
  const std::vector<float> x = {1, 2, 3}, w = {1, 1, 1};
  // SAME_UPPER: out = in * stride = 6; total padding 1 goes at the end.
  OpTester up("ConvTranspose", 11);
  up.attr("strides", Shape{2}).attr("auto_pad", "SAME_UPPER");
  up.input<float>({1, 1, 3}, x).input<float>({1, 1, 3}, w);
  up.output<float>({1, 1, 6}, {1, 1, 3, 2, 5, 3});
  up.run();
  // SAME_LOWER and output_shape with NOTSET put the odd cell at the beginning.
  OpTester low("ConvTranspose", 11);
  low.attr("strides", Shape{2}).attr("auto_pad", "SAME_LOWER");
  low.input<float>({1, 1, 3}, x).input<float>({1, 1, 3}, w);
  low.output<float>({1, 1, 6}, {1, 3, 2, 5, 3, 3});
  low.run();
  OpTester shape("ConvTranspose", 11);
  shape.attr("strides", Shape{2}).attr("output_shape", Shape{5});
  shape.input<float>({1, 1, 3}, x).input<float>({1, 1, 3}, w);
  shape.output<float>({1, 1, 5}, {1, 3, 2, 5, 3});
  shape.run();
  // An output_shape beyond the natural size extends the end with zeros (plus the bias).
  OpTester big("ConvTranspose", 11);
  big.attr("strides", Shape{2}).attr("output_shape", Shape{1, 1, 8});
  big.input<float>({1, 1, 3}, x).input<float>({1, 1, 3}, w).input<float>({1}, {0.5f});
  big.output<float>({1, 1, 8}, {1.5f, 1.5f, 3.5f, 2.5f, 5.5f, 3.5f, 3.5f, 0.5f});
  big.run();
}

TEST(ConvTranspose, ErrorsNameTheProblem) {
  OpTester c("ConvTranspose", 11);
  c.input<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}).input<float>({1, 1, 3}, {1, 1, 1});
  c.expect_failure(StatusCode::kShapeMismatch, "X has 2 input channels but W (1, 1, 3) must be (C, M/group, k...)");
  OpTester b("ConvTranspose", 11);
  b.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 2, 3}, {1, 1, 1, 1, 1, 1}).input<float>({1}, {0});
  b.expect_failure(StatusCode::kShapeMismatch, "B must be a 1-D float32 tensor of 2 elements");
  OpTester o("ConvTranspose", 11);
  o.attr("output_shape", Shape{4, 4});
  o.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 3}, {1, 1, 1});
  o.expect_failure(StatusCode::kInvalidModel, "output_shape has 2 entries but X has 1 spatial dims");
  OpTester p("ConvTranspose", 11);
  p.attr("pads", Shape{3, 3});
  p.input<float>({1, 1, 2}, {1, 2}).input<float>({1, 1, 2}, {1, 1});
  p.expect_failure(StatusCode::kShapeMismatch, "spatial dim 0 has a negative output size -3");
  OpTester g("ConvTranspose", 11);
  g.attr("group", int64_t{4});
  g.input<float>({1, 2, 1}, {1, 2}).input<float>({2, 1, 1}, {1, 1});
  g.expect_failure(StatusCode::kInvalidModel, "group 4 must be in [1, C = 2]");
  OpTester t("ConvTranspose", 11);
  t.input<int32_t>({1, 1, 2}, {1, 2}).input<int32_t>({1, 1, 2}, {1, 1});
  t.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(ConvInteger, ZeroPointsAndPadding) {
  // x = [[2, 3, 4], [5, 6, 7], [8, 9, 10]] uint8 with zero point 1; w = [[1, 1], [1, 1]].
  const std::vector<uint8_t> x = {2, 3, 4, 5, 6, 7, 8, 9, 10};
  OpTester t("ConvInteger", 10);
  t.input<uint8_t>({1, 1, 3, 3}, x).input<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}).input<uint8_t>({}, {1});
  t.output<int32_t>({1, 1, 2, 2}, {12, 16, 24, 28});
  t.run();
  // Padding reads as the zero point, so it contributes 0 after centering.
  OpTester p("ConvInteger", 10);
  p.attr("pads", Shape{1, 1, 1, 1});
  p.input<uint8_t>({1, 1, 3, 3}, x).input<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}).input<uint8_t>({}, {1});
  p.output<int32_t>({1, 1, 4, 4}, {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9});
  p.run();
  // int8 weights with a per-output-channel zero point.
  OpTester w("ConvInteger", 10);
  w.input<int8_t>({1, 1, 1, 2}, {-3, 4}).input<int8_t>({2, 1, 1, 1}, {2, -1});
  w.omitted_input().input<int8_t>({2}, {1, -1});
  w.output<int32_t>({1, 2, 1, 2}, {-3, 4, 0, 0});
  w.run();
}

TEST(ConvInteger, RejectsFloatsAndMismatchedZeroPoints) {
  OpTester f("ConvInteger", 10);
  f.input<float>({1, 1, 1, 1}, {1}).input<float>({1, 1, 1, 1}, {1});
  f.expect_failure(StatusCode::kUnsupportedDType, "input of type float32 is not supported (supported: int8, uint8)");
  OpTester z("ConvInteger", 10);
  z.input<uint8_t>({1, 1, 1, 1}, {1}).input<uint8_t>({1, 1, 1, 1}, {1}).input<uint8_t>({2}, {1, 2});
  z.expect_failure(StatusCode::kShapeMismatch, "x zero point of shape (2,) must be a scalar");
}

}  // namespace
}  // namespace vn::ops::testing
