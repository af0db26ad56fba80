// SPDX-License-Identifier: Apache-2.0
// conv_int8_slices (kernels.h): int8 convolutions deeper than float32's exact sums, summed in
// exact slices of the input channels on the float32 convolution (layers off the int8 product; callable
// anywhere), and the float path's weights kept packed from run to run.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/engine/kernels/kernels.h"
#include "core/ops/sgemm_driver.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/one_layer.h"

namespace vn::engine {
namespace {

TEST(Int8ConvSlices, GiveTheExactSumsPastFloat32sExactIntegers) {
  // 130 channels of 3x3 taps: 1170 products per sum, two slices (65 + 65 channels). Extreme
  // values make some sums pass 2^24, where one float32 sum would round; two images, padding 1.
  constexpr int64_t batch = 2, channels = 130, m = 5, side = 6, taps = 9;
  std::mt19937 rng(11);
  const auto draw = [&](size_t i) {
    return i % 3 == 0 ? int8_t{-128} : static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  };
  std::vector<int8_t> w(static_cast<size_t>(m * channels * taps));
  for (size_t i = 0; i < w.size(); ++i) w[i] = i < static_cast<size_t>(channels * taps) ? int8_t{-128} : draw(i);
  std::vector<float> x(static_cast<size_t>(batch * channels * side * side));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 2 == 0 ? -128 : draw(i));

  ops::WindowGeometry g;
  g.in = {1, side, side};
  g.kernel = {1, 3, 3};
  g.out = {1, side, side};
  g.strides = {1, 1, 1};
  g.dilations = {1, 1, 1};
  g.pads_begin = {0, 1, 1};
  g.pads_end = {0, 1, 1};
  const kernels::Int8ConvSlices sliced = kernels::slice_int8_conv_weights(w, m, channels, taps);
  ASSERT_EQ(sliced.slices.size(), 2u);

  const int64_t out_size = side * side;
  std::vector<float> y(static_cast<size_t>(batch * m * out_size), -1.0f);
  std::vector<int> seen(y.size(), 0);
  kernels::conv_int8_slices(g, batch, channels, m, x.data(), sliced, y.data(), 2,
                            [&](int64_t img, int64_t channel0, int64_t chans, int64_t col0, int64_t width) {
                              for (int64_t ch = channel0; ch < channel0 + chans; ++ch) {
                                for (int64_t i = col0; i < col0 + width; ++i) ++seen[(img * m + ch) * out_size + i];
                              }
                            });
  bool past_exact = false;
  for (int64_t img = 0; img < batch; ++img) {
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t r = 0; r < side; ++r) {
        for (int64_t c = 0; c < side; ++c) {
          int64_t want = 0;
          for (int64_t ch = 0; ch < channels; ++ch) {
            for (int64_t kr = 0; kr < 3; ++kr) {
              for (int64_t kc = 0; kc < 3; ++kc) {
                const int64_t ir = r + kr - 1, ic = c + kc - 1;
                if (ir < 0 || ir >= side || ic < 0 || ic >= side) continue;
                want += int64_t{w[static_cast<size_t>((o * channels + ch) * taps + kr * 3 + kc)]} *
                        static_cast<int64_t>(x[static_cast<size_t>(((img * channels + ch) * side + ir) * side + ic)]);
              }
            }
          }
          past_exact = past_exact || want > (int64_t{1} << 24) || want < -(int64_t{1} << 24);
          const size_t at = static_cast<size_t>((img * m + o) * out_size + r * side + c);
          ASSERT_EQ(y[at], static_cast<float>(want)) << img << "," << o << "," << r << "," << c;
          ASSERT_EQ(seen[at], 1) << img << "," << o << "," << r << "," << c;
        }
      }
    }
  }
  EXPECT_TRUE(past_exact);
}

TEST(Int8ConvSlices, TheFloatPathsWeightsStayPackedFromRunToRun) {
  // An int8 Conv summing its integers on the float32 convolution hands it its integer weights as a
  // constant (a Tensor of the layer), so that their packed panels are made at the first run and
  // read at the next ones, as the float32 engine's are: ResNet-50's int8 1 x 1 layer of 1024 ->
  // 2048 channels packed its 8 MiB of weights at every run (4.3 ms against fp32's 3.1).
  struct Case {
    std::string text;
    Shape x, w;
  };
  // A sum of 40 products (too shallow for the int8 product), and a dilated one of 1170: deeper
  // than float32's exact sums, in slices (conv_int8_slices), its taps that read only padding
  // left out.
  const Case cases[] = {
      {"g (float[1,40,24,24] X, float[70,40,1,1] W) => (float[1,70,24,24] Y) { Y = Conv(X, W) }",
       {1, 40, 24, 24},
       {70, 40, 1, 1}},
      {"g (float[1,130,9,9] X, float[72,130,3,3] W) => (float[1,72,9,9] Y) { Y = Conv<pads=[4,4,4,4], "
       "dilations=[4,4]>(X, W) }",
       {1, 130, 9, 9},
       {72, 130, 3, 3}},
  };
  // Every layer and kernel lives to the end: the cache drops the panels of a dead kernel's
  // weights as it adds the next ones.
  std::vector<std::unique_ptr<test::OneLayer>> layers;
  std::vector<std::unique_ptr<LayerKernel>> kernels;
  const ScaleTable scales{{"X", 0.01f}, {"Y", 1.0f}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    layers.push_back(std::make_unique<test::OneLayer>(
        test::make_model(test::kHeader + c.text, {{"W", test::random_tensor(c.w, 51)}})));
    Result<std::unique_ptr<LayerKernel>> kernel =
        make_layer_kernel(layers.back()->args(TacticId::kConvIm2colInt8, scales));
    ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
    kernels.push_back(std::move(*kernel));
    const Tensor x = test::random_tensor(c.x, 52, -1.2f, 1.2f);
    const size_t before = ops::packed_weights().bytes();
    const Tensor first = test::run_kernel(*kernels.back(), x);
    const size_t kept = ops::packed_weights().bytes();
    EXPECT_GE(kept - before, static_cast<size_t>(shape_numel(c.w)) * sizeof(float));
    const Tensor second = test::run_kernel(*kernels.back(), x);
    EXPECT_EQ(ops::packed_weights().bytes(), kept);
    EXPECT_TRUE(first.same_as(second));
  }
}

}  // namespace
}  // namespace vn::engine
