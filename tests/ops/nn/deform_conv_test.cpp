// SPDX-License-Identifier: Apache-2.0
// Expected values from torchvision.ops.deform_conv2d (torchvision 0.14, float64), the definition
// ONNX's DeformConv follows.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<double> linspace(double lo, double hi, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1);
  return v;
}

std::vector<double> tenths(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i + 1) / 10;
  return v;
}

const std::vector<double> kWeights = {1.0, -0.5, 0.25, 2.0,  0.5, 1.0, -1.0, 0.3,
                                      0.2, 0.1,  0.0,  -0.4, 1.5, 0.5, 0.5,  0.5};

TEST(DeformConv, OffsetsMaskAndBiasMatchTorchvision) {
  for (int64_t opset : {19, 22}) {
    OpTester t("DeformConv", opset);
    t.attr("kernel_shape", Shape{2, 2});
    t.input<double>({1, 2, 4, 4}, tenths(32)).input<double>({2, 2, 2, 2}, kWeights);
    t.input<double>({1, 8, 3, 3}, linspace(-1.3, 1.1, 72)).input<double>({2}, {0.5, -0.25});
    t.input<double>({1, 4, 3, 3}, linspace(0.2, 1.0, 36));
    t.output<double>({1, 2, 3, 3}, {1.5785939, 1.8055846, -0.3505274, 2.9554595, 3.4512531, -0.0072004, 0.9896881,
                                    1.3685178, 0.6189034, 1.2275148, 1.3470209, 0.766636, 1.9743424, 2.7070693,
                                    2.1075494, 1.8785309, 2.8812309, 2.9169449});
    t.tolerance(1e-6, 1e-6);
    t.run();
  }
}

TEST(DeformConv, ZeroOffsetsAreAConvolution) {
  // Without offsets (all 0) and mask it is Conv: a 2x2 box sum with pads 1 at the corners.
  OpTester t("DeformConv", 19);
  t.attr("pads", Shape{1, 1, 1, 1});
  t.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  t.input<float>({1, 8, 3, 3}, std::vector<float>(72, 0.0f));
  t.output<float>({1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  t.run();
  // A tap moved half a pixel right reads the mean of two neighbours, and beyond the image 0.
  OpTester h("DeformConv", 19);
  h.input<float>({1, 1, 1, 2}, {2, 4}).input<float>({1, 1, 1, 1}, {1});
  h.input<float>({1, 2, 1, 2}, {0, 0, 0.5f, 1.5f});
  h.output<float>({1, 1, 1, 2}, {3, 0});
  h.run();
}

TEST(DeformConv, ErrorsNameTheProblem) {
  OpTester s("DeformConv", 19);
  s.input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).input<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  s.input<float>({1, 8, 2, 2}, std::vector<float>(32, 0.0f));
  s.expect_failure(StatusCode::kShapeMismatch, "offset must have shape (1, 8, 1, 1)");
  OpTester d("DeformConv", 19);
  d.input<float>({1, 1, 2}, {1, 2}).input<float>({1, 1, 1}, {1}).input<float>({1, 2, 2}, {0, 0, 0, 0});
  d.expect_failure(StatusCode::kUnsupportedAttr, "DeformConv is implemented in 2-D");
  OpTester b("DeformConv", 19);
  b.input(Tensor::from_vector<Eigen::bfloat16>({1, 1, 1, 1}, {Eigen::bfloat16(1.0f)}));
  b.input(Tensor::from_vector<Eigen::bfloat16>({1, 1, 1, 1}, {Eigen::bfloat16(1.0f)}));
  b.input(Tensor::from_vector<Eigen::bfloat16>({1, 2, 1, 1}, {Eigen::bfloat16(0.0f), Eigen::bfloat16(0.0f)}));
  b.expect_failure(StatusCode::kUnsupportedDType, "bfloat16");
}

}  // namespace
}  // namespace vn::ops::testing
