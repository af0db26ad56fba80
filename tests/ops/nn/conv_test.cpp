// SPDX-License-Identifier: Apache-2.0
// Conv against a naive direct convolution written independently of the kernel (its own padding
// and output-size arithmetic), over groups, depthwise, dilation, stride, asymmetric pads,
// auto_pad and 1-D/2-D/3-D inputs.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/narrow.h"
#include "core/ops/nn/conv.h"
#include "core/ops/nn/conv_im2col.h"
#include "core/ops/nn/conv_regions.h"
#include "core/ops/sgemm.h"
#include "core/ops/sgemm_driver.h"
#include "tests/ops/half_tensor.h"
#include "tests/ops/nn/conv_naive.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Conv, HandComputed3x3) {
  OpTester t("Conv", 11);
  t.attr("pads", Shape{1, 1, 1, 1});
  t.input<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  t.input<float>({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  t.output<float>({1, 1, 3, 3}, {12, 21, 16, 27, 45, 33, 24, 39, 28});
  t.run();
}

TEST(Conv, Basic2D) { check_conv({.x = {2, 3, 7, 8}, .m = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 10); }

TEST(Conv, StrideDilationAsymmetricPads) {
  check_conv(
      {.x = {1, 2, 9, 10}, .m = 3, .kernel = {3, 2}, .strides = {2, 3}, .dilations = {2, 1}, .pads = {0, 1, 2, 0}}, 20);
  check_conv(
      {.x = {2, 3, 8, 8}, .m = 2, .kernel = {3, 3}, .strides = {1, 2}, .dilations = {3, 2}, .pads = {3, 0, 1, 2}}, 21);
}

TEST(Conv, Groups) {
  check_conv({.x = {2, 4, 6, 6}, .m = 6, .group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 30);
  check_conv({.x = {1, 6, 5, 7}, .m = 3, .group = 3, .kernel = {2, 3}, .strides = {2, 1}}, 31);
}

TEST(Conv, Depthwise) {
  check_conv({.x = {2, 8, 9, 9}, .m = 8, .group = 8, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 40);
  // Channel multiplier 2.
  check_conv({.x = {1, 3, 6, 6}, .m = 6, .group = 3, .kernel = {3, 3}, .dilations = {2, 2}, .pads = {2, 2, 2, 2}}, 41);
}

TEST(Conv, TilesSharedAmongThreads) {
  // Two images of 37 x 41 outputs: two column tiles of 24 panels each, the second starting
  // mid-row, four tasks on two threads, the weights packed once for all of them.
  check_conv({.x = {2, 3, 37, 41}, .m = 5, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .threads = 2}, 90);
  // Pointwise: the panels are the input's rows, unmasked.
  check_conv({.x = {2, 8, 40, 40}, .m = 6, .kernel = {1, 1}, .threads = 2}, 91);
  // Fewer tiles than twice the threads, and strided: the panels are gathered.
  check_conv({.x = {1, 4, 9, 9}, .m = 6, .group = 2, .kernel = {3, 3}, .strides = {2, 2}, .threads = 2}, 92);
  // One tile of 49 positions for 64 output channels: a block of 32 channels per thread over an
  // im2col made once, by both threads, in channel ranges.
  check_conv({.x = {1, 8, 7, 7}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .threads = 2}, 94);
  // Nine tiles of 1225 positions for 16 threads: tiles and blocks chosen together (8 tiles of two
  // blocks of 48 and 48 channels, one task a thread), the im2col shared by each tile's blocks.
  check_conv({.x = {1, 6, 35, 35}, .m = 96, .kernel = {5, 5}, .pads = {2, 2, 2, 2}, .threads = 16}, 95);
  // Depthwise, one (image, channel) plane per task.
  check_conv({.x = {2, 6, 11, 11}, .m = 12, .group = 6, .kernel = {3, 3}, .dilations = {2, 2}, .threads = 2}, 93);
}

// conv_float32 with a weight transform (an engine rounding its operands): the products use the
// transformed weights, handed over packed, a block of output channels at a time, never all of them
// at once.
TEST(Conv, WeightTransformSeesBlocksOfOutputChannels) {
  struct Case {
    ConvConfig c;
    size_t most_per_call;  // weights of at most this many output channels per call
  };
  // One column tile (25 positions) for one image: a thread's weights are transformed 64 output
  // channels at a time, each chunk just before its products. Two images, or two tiles, read the
  // weights more than once: they are packed and transformed once, one row block (kPackRows
  // channels) at a time. Depthwise weights are transformed at once.
  const std::vector<Case> cases = {
      {{.x = {1, 640, 5, 5}, .m = 100, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false}, 64},
      {{.x = {2, 640, 5, 5}, .m = 100, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false, .threads = 2},
       static_cast<size_t>(kPackRows)},
      {{.x = {2, 16, 9, 9}, .m = 40, .kernel = {1, 1}, .bias = false, .threads = 2}, static_cast<size_t>(kPackRows)},
      {{.x = {1, 8, 9, 9}, .m = 8, .group = 8, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false}, 8},
  };
  uint32_t seed = 300;
  for (const Case& k : cases) {
    const ConvConfig& c = k.c;
    Shape w_shape = {c.m, c.x[1] / c.group};
    w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
    const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(c.x)), seed++);
    const std::vector<float> w = random_floats(static_cast<size_t>(shape_numel(w_shape)), seed++);
    std::vector<float> w_twice(w);
    for (float& v : w_twice) v = 2 * v - 0.25f;
    Shape out_shape;
    const std::vector<float> want = naive_conv(c, x, w_twice, {}, out_shape);

    const size_t per_channel = w.size() / static_cast<size_t>(c.m);
    std::atomic<size_t> most{0}, seen{0};
    const std::function<void(std::span<float>)> twice = [&](std::span<float> v) {
      for (float& e : v) e = 2 * e - 0.25f;
      size_t prev = most.load();
      while (v.size() > prev && !most.compare_exchange_weak(prev, v.size())) {
      }
      seen += v.size();
    };
    WindowGeometry geo;
    geo.in = Shape(c.x.begin() + 2, c.x.end());
    geo.kernel = c.kernel;
    geo.out = Shape(out_shape.begin() + 2, out_shape.end());
    geo.strides = Shape(c.kernel.size(), 1);
    geo.dilations = Shape(c.kernel.size(), 1);
    const auto k_dims = static_cast<std::ptrdiff_t>(c.kernel.size());
    geo.pads_begin = c.pads.empty() ? Shape(c.kernel.size(), 0) : Shape(c.pads.begin(), c.pads.begin() + k_dims);
    geo.pads_end = c.pads.empty() ? Shape(c.kernel.size(), 0) : Shape(c.pads.begin() + k_dims, c.pads.end());
    std::vector<float> y(want.size(), -1.0f);
    conv_float32(geo, c.x[0], c.x[1], c.m, c.group, x.data(), w.data(), nullptr, y.data(), c.threads, &twice);
    SCOPED_TRACE("case with m=" + std::to_string(c.m) + " threads=" + std::to_string(c.threads));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4 + 1e-4 * std::abs(want[i])) << i;
    EXPECT_LE(most.load(), k.most_per_call * per_channel);
    EXPECT_GE(seen.load(), w.size());  // every weight went through the transform
  }
}

// conv_float32's `finish` (an engine's residual and activation): called once on every element of
// y, on blocks whose values are final, on every path (tasks of tiles, direct sums, boxes of live
// taps, single positions); what it writes stays.
TEST(Conv, FinishSeesEveryOutputOnceWhenItIsFinal) {
  struct Case {
    Shape x;
    int64_t m, group;
    Shape kernel;
    int64_t dilation, pad;
    int threads;
  };
  const std::vector<Case> cases = {
      {{2, 24, 30, 30}, 40, 1, {3, 3}, 1, 1, 2},    // tiles (and blocks) on two threads
      {{1, 24, 56, 56}, 32, 1, {3, 3}, 1, 1, 16},   // narrower tiles for many threads
      {{1, 24, 35, 35}, 64, 1, {3, 3}, 1, 1, 16},   // tiles and blocks chosen together
      {{1, 8, 9, 9}, 8, 8, {3, 3}, 1, 1, 2},        // depthwise: a direct sum
      {{1, 16, 20, 20}, 16, 1, {3, 3}, 12, 12, 2},  // dilated: boxes of live taps
      {{3, 32, 1, 1}, 8, 1, {1, 1}, 1, 0, 2},       // one position: a product of the channel vectors
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    WindowGeometry geo;
    geo.in = Shape(c.x.begin() + 2, c.x.end());
    geo.kernel = c.kernel;
    geo.strides = {1, 1};
    geo.dilations = {c.dilation, c.dilation};
    geo.pads_begin = geo.pads_end = {c.pad, c.pad};
    for (size_t i = 0; i < 2; ++i) {
      geo.out.push_back(geo.in[i] + 2 * c.pad - c.dilation * (c.kernel[i] - 1));
    }
    const int64_t out_size = shape_numel(geo.out);
    const std::vector<float> x = random_floats(static_cast<size_t>(shape_numel(c.x)), seed++);
    const std::vector<float> w =
        random_floats(static_cast<size_t>(c.m * c.x[1] / c.group * shape_numel(c.kernel)), seed++);
    const std::vector<float> bias = random_floats(static_cast<size_t>(c.m), seed++);
    std::vector<float> want(static_cast<size_t>(c.x[0] * c.m * out_size));
    conv_float32(geo, c.x[0], c.x[1], c.m, c.group, x.data(), w.data(), bias.data(), want.data(), c.threads);

    std::vector<float> y(want.size(), -1.0f);
    std::vector<std::atomic<int>> visits(want.size());
    std::atomic<int> stale{0};
    const ConvFinish finish = [&](int64_t img, int64_t channel0, int64_t channels, int64_t col0, int64_t width) {
      for (int64_t ch = channel0; ch < channel0 + channels; ++ch) {
        for (int64_t i = col0; i < col0 + width; ++i) {
          const auto at = static_cast<size_t>((img * c.m + ch) * out_size + i);
          visits[at]++;
          if (std::memcmp(&y[at], &want[at], sizeof(float)) != 0) stale++;
          y[at] = 2 * y[at];
        }
      }
    };
    conv_float32(geo, c.x[0], c.x[1], c.m, c.group, x.data(), w.data(), bias.data(), y.data(), c.threads, nullptr,
                 &finish);
    SCOPED_TRACE("case with x " + shape_to_string(c.x) + " threads=" + std::to_string(c.threads));
    EXPECT_EQ(stale.load(), 0);
    for (size_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(visits[i].load(), 1) << i;
      ASSERT_EQ(y[i], 2 * want[i]) << i;
    }
  }
}

TEST(Conv, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    SCOPED_TRACE(mode);
    check_conv({.x = {1, 2, 7, 8}, .m = 3, .kernel = {4, 3}, .strides = {2, 2}, .auto_pad = mode}, 50);
    check_conv({.x = {1, 2, 6, 6}, .m = 2, .kernel = {2, 2}, .dilations = {2, 1}, .auto_pad = mode}, 51);
  }
}

TEST(Conv, SameLowerPutsOddPaddingFirst) {
  // Kernel 2, stride 1 on 3 elements needs one pad cell: SAME_UPPER pads the end, SAME_LOWER the start.
  OpTester upper("Conv", 11);
  upper.attr("auto_pad", "SAME_UPPER");
  upper.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 2}, {1, 10});
  upper.output<float>({1, 1, 3}, {21, 32, 3});
  upper.run();
  OpTester lower("Conv", 11);
  lower.attr("auto_pad", "SAME_LOWER");
  lower.input<float>({1, 1, 3}, {1, 2, 3}).input<float>({1, 1, 2}, {1, 10});
  lower.output<float>({1, 1, 3}, {10, 21, 32});
  lower.run();
}

TEST(Conv, OneDimensional) {
  check_conv({.x = {2, 3, 17}, .m = 4, .kernel = {3}, .strides = {2}, .dilations = {2}, .pads = {1, 2}}, 60);
  check_conv({.x = {1, 4, 10}, .m = 4, .group = 4, .kernel = {5}, .auto_pad = "SAME_UPPER"}, 61);
}

TEST(Conv, ThreeDimensional) {
  check_conv({.x = {1, 2, 5, 6, 4}, .m = 3, .kernel = {2, 3, 2}, .strides = {1, 2, 1}, .pads = {1, 1, 0, 0, 1, 1}}, 70);
  check_conv({.x = {2, 4, 4, 4, 4},
              .m = 4,
              .group = 2,
              .kernel = {3, 3, 3},
              .dilations = {1, 1, 2},
              .pads = {1, 1, 2, 1, 1, 2}},
             71);
}

TEST(Conv, PointwiseFastPathAndStridedPointwise) {
  check_conv({.x = {2, 6, 5, 5}, .m = 4, .group = 2, .kernel = {1, 1}}, 80);
  check_conv({.x = {1, 4, 6, 6}, .m = 3, .kernel = {1, 1}, .strides = {2, 2}}, 81);
  check_conv({.x = {1, 4, 5, 5}, .m = 3, .kernel = {1, 1}, .pads = {1, 0, 0, 1}, .bias = false}, 82);
}

TEST(Conv, ResNetStem) {
  check_conv({.x = {1, 3, 32, 32}, .m = 8, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}, 90);
}

TEST(Conv, WithoutBiasAndDouble) {
  check_conv({.x = {1, 2, 4, 4}, .m = 2, .kernel = {2, 2}, .bias = false}, 100);
  OpTester d("Conv", 11);
  d.input<double>({1, 1, 2, 2}, {1, 2, 3, 4}).input<double>({2, 1, 1, 1}, {2, -1}).input<double>({2}, {0.5, 0});
  d.output<double>({1, 2, 2, 2}, {2.5, 4.5, 6.5, 8.5, -1, -2, -3, -4});
  d.run();
}

TEST(Conv, EmptyBatch) {
  OpTester t("Conv", 11);
  t.input<float>({0, 2, 4, 4}, {}).input<float>({3, 2, 3, 3}, std::vector<float>(54, 1.0f));
  t.output<float>({0, 3, 2, 2}, {});
  t.run();
}

TEST(Conv, ChannelMismatchFails) {
  OpTester t("Conv", 11);
  t.input<float>({1, 3, 4, 4}, std::vector<float>(48, 1.0f)).input<float>({2, 2, 3, 3}, std::vector<float>(36, 1.0f));
  t.expect_failure(StatusCode::kShapeMismatch, "X has 3 input channels but W (2, 2, 3, 3) with group=1");
}

TEST(Conv, GroupMustDivideOutputChannels) {
  OpTester t("Conv", 11);
  t.attr("group", int64_t{2});
  t.input<float>({1, 4, 3, 3}, std::vector<float>(36, 1.0f)).input<float>({3, 2, 1, 1}, std::vector<float>(6, 1.0f));
  t.expect_failure(StatusCode::kShapeMismatch, "not divisible by group=2");
}

TEST(Conv, BadShapesAndAttributesFail) {
  OpTester rank("Conv", 11);
  rank.input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).input<float>({1, 1, 3}, {1, 1, 1});
  rank.expect_failure(StatusCode::kShapeMismatch, "must have the rank of X");
  OpTester bias("Conv", 11);
  bias.input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).input<float>({2, 1, 1, 1}, {1, 1});
  bias.input<float>({3}, {1, 2, 3});
  bias.expect_failure(StatusCode::kShapeMismatch, "B must be a 1-D float32 tensor of 2 elements");
  OpTester pad("Conv", 11);
  pad.attr("auto_pad", "SAME");
  pad.input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).input<float>({1, 1, 1, 1}, {1});
  pad.expect_failure(StatusCode::kInvalidModel, "auto_pad 'SAME' is not one of");
  OpTester big("Conv", 11);
  big.input<float>({1, 1, 2, 2}, {1, 1, 1, 1}).input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  big.expect_failure(StatusCode::kShapeMismatch, "smaller than the dilated kernel size 3");
  OpTester strides("Conv", 11);
  strides.attr("strides", Shape{0, 1});
  strides.input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).input<float>({1, 1, 1, 1}, {1});
  strides.expect_failure(StatusCode::kInvalidModel, "strides [0, 1] must have 2 positive entries");
  OpTester ks("Conv", 11);
  ks.attr("kernel_shape", Shape{2, 2});
  ks.input<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).input<float>({1, 1, 1, 1}, {1});
  ks.expect_failure(StatusCode::kShapeMismatch, "kernel_shape attribute disagrees");
  OpTester ints("Conv", 11);
  ints.input<int32_t>({1, 1, 1, 1}, {1}).input<int32_t>({1, 1, 1, 1}, {1});
  ints.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

// float16 and bfloat16: products summed in float32, each output rounded once. Rounding each
// partial sum to float16 would give 1 at position 0 (1 + 2^-11 ties to 1) and inf at position 1.
TEST(Conv, HalfTypesSumInFloat32AndRoundOnce) {
  const float u = std::ldexp(1.0f, -11);
  const float tiny = std::ldexp(1.0f, -24);
  const float low = std::ldexp(1.0f, -14);  // the smallest normal float16
  // X (1, 3, 4), W (1, 3, 1) = {1, 1, -1}: y[p] = x0[p] + x1[p] - x2[p].
  const std::vector<float> x = {1, 60000, 65504, low + tiny,  // channel 0
                                u, 60000, 16, 0,              // channel 1
                                -u, 60000, 0, low};           // channel 2
  for (int64_t opset : {11, 22}) {
    OpTester t("Conv", opset);
    t.input(narrow_tensor<Eigen::half>({1, 3, 4}, x)).input(narrow_tensor<Eigen::half>({1, 3, 1}, {1, 1, -1}));
    // 65504 + 16 ties between the largest float16 and 65536: to even, inf.
    t.output(narrow_tensor<Eigen::half>({1, 1, 4}, {1 + 2 * u, 60000, std::numeric_limits<float>::infinity(), tiny}));
    t.run();
  }
  // The bias joins the sum before the one rounding: 1 + 2^-11 + 2^-11. ONNX's reference rounds
  // the sum (a tie, to 1) before adding the bias and gives 1 (README, Known limits).
  OpTester b("Conv", 11);
  b.input(narrow_tensor<Eigen::half>({1, 2, 1}, {1, u})).input(narrow_tensor<Eigen::half>({1, 2, 1}, {1, 1}));
  b.input(narrow_tensor<Eigen::half>({1}, {u}));
  b.output(narrow_tensor<Eigen::half>({1, 1, 1}, {1 + 2 * u}));
  b.run();
  const float v = std::ldexp(1.0f, -8);
  OpTester bf("Conv", 22);
  bf.input(narrow_tensor<Eigen::bfloat16>({1, 3, 1}, {1, v, -v}));
  bf.input(narrow_tensor<Eigen::bfloat16>({1, 3, 1}, {1, 1, -1}));
  bf.output(narrow_tensor<Eigen::bfloat16>({1, 1, 1}, {1 + 2 * v}));
  bf.run();
}

// Taps that read only padding for every output are left out of the product (trim_padding_taps):
// DeepLabV3's ASPP at dilation 24 and 36 over a 20x20 map, dilation on one axis only, asymmetric
// pads, stride 2, 1-D and 3-D, against the naive convolution; dilation 12 keeps every tap.
TEST(Conv, TapsThatReadOnlyPaddingAreLeftOutWithTheSameResults) {
  uint32_t seed = 700;
  for (int64_t d : {12, 24, 36}) {
    check_conv({.x = {1, 16, 20, 20}, .m = 8, .kernel = {3, 3}, .dilations = {d, d}, .pads = {d, d, d, d}}, seed++);
  }
  check_conv({.x = {1, 8, 9, 20}, .m = 4, .kernel = {3, 3}, .dilations = {24, 2}, .pads = {24, 2, 24, 2}}, seed++);
  check_conv({.x = {1, 8, 9, 9}, .m = 4, .kernel = {3, 3}, .dilations = {10, 10}, .pads = {10, 0, 10, 20}}, seed++);
  check_conv({.x = {2, 8, 12, 12}, .m = 4, .kernel = {3, 3}, .strides = {2, 2}, .dilations = {30, 30},
              .pads = {30, 30, 30, 30}},
             seed++);
  check_conv({.x = {1, 8, 17}, .m = 4, .kernel = {5}, .dilations = {20}, .pads = {40, 40}}, seed++);
  check_conv({.x = {1, 4, 5, 6, 7}, .m = 4, .kernel = {3, 3, 3}, .dilations = {9, 9, 9}, .pads = {9, 9, 9, 9, 9, 9}},
             seed++);
}

// A dead tap adds w * 0 exactly: the trimmed product has the bits of the 1x1 convolution of the
// centre weights; a non-finite weight on a dead tap keeps the tap (inf * 0 is NaN, as ONNX's zero
// padding makes it).
TEST(Conv, TrimmedTapsGiveTheBitsOfTheLiveOnesAndNonFiniteWeightsKeepThem) {
  const int64_t c = 24, m = 16, h = 20, w = 20, d = 24;
  const std::vector<float> x = random_floats(static_cast<size_t>(c * h * w), 710);
  std::vector<float> wt = random_floats(static_cast<size_t>(m * c * 9), 711);
  const std::vector<float> b = random_floats(static_cast<size_t>(m), 712);
  std::vector<float> centre(static_cast<size_t>(m * c));
  for (size_t i = 0; i < centre.size(); ++i) centre[i] = wt[i * 9 + 4];
  WindowGeometry dilated{{h, w}, {3, 3}, {1, 1}, {d, d}, {d, d}, {d, d}, {h, w}};
  WindowGeometry pointwise{{h, w}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {h, w}};
  std::vector<float> got(static_cast<size_t>(m * h * w)), want(got.size());
  conv_float32(dilated, 1, c, m, 1, x.data(), wt.data(), b.data(), got.data(), 2);
  conv_float32(pointwise, 1, c, m, 1, x.data(), centre.data(), b.data(), want.data(), 2);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  wt[0] = std::numeric_limits<float>::infinity();  // output channel 0, a corner tap
  conv_float32(dilated, 1, c, m, 1, x.data(), wt.data(), b.data(), got.data(), 2);
  for (int64_t i = 0; i < h * w; ++i) ASSERT_TRUE(std::isnan(got[static_cast<size_t>(i)])) << i;
  EXPECT_EQ(std::memcmp(got.data() + h * w, want.data() + h * w, (got.size() - h * w) * sizeof(float)), 0);
}

// A squeeze-excitation block's 1x1 convolutions of pooled channels (one input and one output
// position) run as a product of images by W's rows: few images as dot products, more as panels.
TEST(Conv, OnePositionConvolutionsAreProductsOfTheChannelVectors) {
  uint32_t seed = 740;
  for (int64_t n : {1, 3, 9}) {
    check_conv({.x = {n, 40, 1, 1}, .m = 24, .kernel = {1, 1}}, seed++);
    check_conv({.x = {n, 37, 1, 1}, .m = 70, .kernel = {1, 1}, .threads = 2}, seed++);
    check_conv({.x = {n, 16, 1}, .m = 8, .kernel = {1}, .bias = false}, seed++);
  }
}

// A dilation about as wide as the input (DeepLabV3's ASPP at rate 12 over a 20 x 20 map) leaves
// different taps reading only padding at the corners, edges and middle: the convolution runs box
// by box on the live taps (conv_regions.h). Each output must have the bits of the same
// convolution over the input padded with explicit zeros, whose taps are all live, and a
// non-finite weight must give what it gives there.
TEST(Conv, BoxesOfLiveTapsGiveTheBitsOfTheZeroPaddedConvolution) {
  struct Case {
    Shape in, kernel, strides, dilations, pads;  // pads: begin and end per axis, as ONNX's
  };
  const Case cases[] = {
      {{20, 20}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12}},
      {{9, 13}, {3, 3}, {2, 1}, {6, 8}, {6, 8, 3, 8}},
      {{30}, {3}, {1}, {12}, {12, 12}},
      {{5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {4, 4, 4}, {4, 4, 4, 4, 4, 4}},
  };
  uint32_t seed = 720;
  std::vector<Tensor> constants;
  constants.reserve(4 * std::size(cases));
  for (const Case& k : cases) {
    const size_t rank = k.in.size();
    const int64_t n = 2, c = 12, m = 13;  // 13: a block of output channels is part empty
    WindowGeometry padded_geo{k.in, k.kernel, k.strides, k.dilations, Shape(rank), Shape(rank), Shape(rank)};
    WindowGeometry geo = padded_geo;
    Shape padded_in(rank);
    for (size_t i = 0; i < rank; ++i) {
      geo.pads_begin[i] = k.pads[i];
      geo.pads_end[i] = k.pads[rank + i];
      padded_in[i] = k.in[i] + k.pads[i] + k.pads[rank + i];
      geo.out[i] = (padded_in[i] - geo.effective_kernel(i)) / k.strides[i] + 1;
    }
    padded_geo.in = padded_in;
    padded_geo.out = geo.out;
    ASSERT_GT(padding_regions(geo).size(), 1u) << shape_to_string(k.in);
    ASSERT_TRUE(padding_regions(padded_geo).empty());
    const int64_t in_size = shape_numel(k.in), padded_size = shape_numel(padded_in), out_size = shape_numel(geo.out);
    const std::vector<float> x = random_floats(static_cast<size_t>(n * c * in_size), seed++);
    std::vector<float> w = random_floats(static_cast<size_t>(m * c * shape_numel(k.kernel)), seed++);
    const std::vector<float> b = random_floats(static_cast<size_t>(m), seed++);
    // x inside a border of zeros.
    std::vector<float> xp(static_cast<size_t>(n * c * padded_size), 0.0f);
    for (int64_t plane = 0; plane < n * c; ++plane) {
      for (int64_t i = 0; i < in_size; ++i) {
        int64_t at = 0;
        for (size_t d = 0, rest = static_cast<size_t>(i); d < rank; ++d) {
          int64_t below = 1;
          for (size_t e = d + 1; e < rank; ++e) below *= k.in[e];
          const int64_t digit = static_cast<int64_t>(rest) / below;
          rest -= static_cast<size_t>(digit * below);
          at = at * padded_in[d] + digit + k.pads[d];
        }
        xp[static_cast<size_t>(plane * padded_size + at)] = x[static_cast<size_t>(plane * in_size + i)];
      }
    }
    for (const bool non_finite : {false, true}) {
      if (non_finite) w[5] = std::numeric_limits<float>::infinity();  // output channel 0
      std::vector<float> got(static_cast<size_t>(n * m * out_size)), want(got.size());
      conv_float32(geo, n, c, m, 1, x.data(), w.data(), b.data(), got.data(), 2);
      conv_float32(padded_geo, n, c, m, 1, xp.data(), w.data(), b.data(), want.data(), 2);
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
          ASSERT_TRUE(std::isnan(got[i])) << "case in " << shape_to_string(k.in) << " output " << i;
        } else {
          ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
              << "case in " << shape_to_string(k.in) << " output " << i << ": " << got[i] << " vs " << want[i];
        }
      }
      // Weights that are a constant have their live taps gathered once and kept (none kept when
      // one is not finite): the same bits at the call that gathers them and at the next. The
      // constants stay alive to the end, so that no kept entry of theirs goes meanwhile.
      const Tensor& constant =
          constants.emplace_back(Tensor::from_vector<float>({m, c, shape_numel(k.kernel)}, w));
      size_t gathered_bytes = 0;
      for (const ConvRegion& region : padding_regions(geo)) {
        gathered_bytes += static_cast<size_t>((m + kPackRows - 1) / kPackRows * kPackRows * c) * region.taps.size() *
                          sizeof(float);
      }
      const size_t kept_before = packed_weights().bytes();
      for (int call = 0; call < 2; ++call) {
        std::vector<float> kept(got.size());
        conv_float32(geo, n, c, m, 1, x.data(), constant.data<float>(), b.data(), kept.data(), 2, nullptr, nullptr,
                     &constant);
        ASSERT_EQ(std::memcmp(kept.data(), got.data(), got.size() * sizeof(float)), 0)
            << "case in " << shape_to_string(k.in) << " call " << call;
      }
      EXPECT_EQ(packed_weights().bytes() - kept_before == gathered_bytes, !non_finite) << shape_to_string(k.in);
      // So with a transform that rounds to float16 (an fp16 engine's): kept rounded, the bits of
      // the weights rounded at every call.
      const std::function<void(std::span<float>)> to_half = [](std::span<float> v) {
        std::vector<uint16_t> half(v.size());
        narrow(Narrow::kFloat16, v.data(), static_cast<int64_t>(v.size()), half.data());
        widen(Narrow::kFloat16, half.data(), static_cast<int64_t>(v.size()), v.data());
      };
      std::vector<float> rounded(got.size()), kept_rounded(got.size());
      conv_float32(geo, n, c, m, 1, x.data(), w.data(), b.data(), rounded.data(), 2, &to_half);
      const size_t before_rounded = packed_weights().bytes();
      for (int call = 0; call < 2; ++call) {
        conv_float32(geo, n, c, m, 1, x.data(), constant.data<float>(), b.data(), kept_rounded.data(), 2, &to_half,
                     nullptr, &constant, Narrow::kFloat16);
        ASSERT_EQ(std::memcmp(kept_rounded.data(), rounded.data(), got.size() * sizeof(float)), 0)
            << "case in " << shape_to_string(k.in) << " rounded, call " << call;
      }
      EXPECT_EQ(packed_weights().bytes() - before_rounded == gathered_bytes, !non_finite) << shape_to_string(k.in);
      // A transform that is not the rounding it is said to be (on other weights: a key names the
      // rounding) keeps nothing, and gives its own bits.
      const Tensor& other = constants.emplace_back(Tensor::from_vector<float>({m, c, shape_numel(k.kernel)}, w));
      const std::function<void(std::span<float>)> not_rounding = [](std::span<float> v) {
        for (float& e : v) e = 2 * e - 0.25f;
      };
      std::vector<float> transformed(got.size()), kept_transformed(got.size());
      conv_float32(geo, n, c, m, 1, x.data(), w.data(), b.data(), transformed.data(), 2, &not_rounding);
      const size_t before_other = packed_weights().bytes();
      conv_float32(geo, n, c, m, 1, x.data(), other.data<float>(), b.data(), kept_transformed.data(), 2,
                   &not_rounding, nullptr, &other, Narrow::kFloat16);
      ASSERT_EQ(std::memcmp(kept_transformed.data(), transformed.data(), got.size() * sizeof(float)), 0)
          << "case in " << shape_to_string(k.in) << " not rounding";
      EXPECT_EQ(packed_weights().bytes(), before_other) << shape_to_string(k.in);
    }
  }
}

// im2col_panels writes the packed panels of im2col_tile's matrix, value for value, on each of its
// paths: panels of consecutive positions (stride 1, same padding), runs of positions 1 apart
// (valid padding), runs 2 apart (stride 2 over output rows 56, 14, 12 and 7 wide), and gathers
// (stride 3); for whole planes and for tiles that start and end inside a panel.
TEST(Conv, Im2colPanelsHoldTheIm2colMatrixOnEveryPath) {
  struct Case {
    Shape in, kernel, strides, dilations, pads;  // 3-D; pads begin = end
  };
  const Case cases[] = {
      {{1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}},
      {{1, 17, 17}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}},
      {{1, 112, 112}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}},
      {{1, 28, 28}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}},
      {{1, 23, 23}, {1, 7, 7}, {1, 2, 2}, {1, 1, 1}, {0, 3, 3}},
      {{1, 14, 14}, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}},
      {{1, 16, 16}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 2}},
      {{1, 20, 20}, {1, 3, 3}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}},
  };
  uint32_t seed = 950;
  for (const Case& k : cases) {
    WindowGeometry g{k.in, k.kernel, k.strides, k.dilations, k.pads, k.pads, Shape(3)};
    for (size_t d = 0; d < 3; ++d) g.out[d] = (k.in[d] + 2 * k.pads[d] - g.effective_kernel(d)) / k.strides[d] + 1;
    const int64_t channels = 3, n = shape_numel(g.out), depth = channels * shape_numel(k.kernel);
    const std::vector<float> x = random_floats(static_cast<size_t>(channels * shape_numel(k.in)), seed++);
    for (const auto& [c0, c1] : {std::pair<int64_t, int64_t>{0, n}, {5, n - 3}, {32, std::min<int64_t>(n, 101)}}) {
      if (c1 <= c0) continue;
      const int64_t width = c1 - c0, panels = (width + kPackCols - 1) / kPackCols;
      std::vector<float> packed(static_cast<size_t>(panels * depth * kPackCols), std::nanf(""));
      std::vector<float> plain(static_cast<size_t>(depth * width));
      im2col_panels(x.data(), channels, g, c0, c1, 0, depth, packed.data());
      im2col_tile(x.data(), channels, g, c0, c1, plain.data());
      for (int64_t row = 0; row < depth; ++row) {
        for (int64_t j = 0; j < panels * kPackCols; ++j) {
          const float got = packed[static_cast<size_t>((j / kPackCols * depth + row) * kPackCols + j % kPackCols)];
          const float want = j < width ? plain[static_cast<size_t>(row * width + j)] : 0.0f;
          ASSERT_EQ(std::memcmp(&got, &want, sizeof(float)), 0)
              << "in " << shape_to_string(k.in) << " stride " << k.strides[2] << " columns [" << c0 << ", " << c1
              << ") row " << row << " column " << j << ": " << got << " vs " << want;
        }
      }
    }
  }
}

}  // namespace
}  // namespace vn::ops::testing
