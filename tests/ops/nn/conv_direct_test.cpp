// SPDX-License-Identifier: Apache-2.0
// Conv's direct sum (conv_direct.h: depthwise convolutions and groups of few channels) against
// the naive double convolution: the unrolled windows (3x3, 5x5, 7x7) and the others, strides 1 to
// 3, dilations, padding on every side, rows narrower and wider than a vector, 1-D to 3-D, batches
// and channel multipliers; and its bits: the same on 1 and 4 threads, the same as im2col +
// GEMM's, and with a transform of its copies the same as on the transformed input. Depthwise cases
// have 8 channels or more: 8 at a time in the lanes of the vectors, the rest one by one.
#include "core/ops/nn/conv_direct.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/nn/conv.h"
#include "tests/ops/nn/conv_naive.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(ConvDirect, DepthwiseWindowsAndStrides) {
  uint32_t seed = 400;
  for (int64_t k : {1, 3, 5, 7}) {
    for (int64_t s : {1, 2}) {
      SCOPED_TRACE("kernel " + std::to_string(k) + " stride " + std::to_string(s));
      const int64_t p = k / 2;
      // Odd sizes: the last stride-2 window ends one column short of the input's edge.
      check_conv({.x = {1, 11, 13, 11}, .m = 11, .group = 11, .kernel = {k, k}, .strides = {s, s}, .pads = {p, p, p, p}},
                 seed++);
      check_conv({.x = {1, 16, 12, 17}, .m = 16, .group = 16, .kernel = {k, k}, .strides = {s, s}}, seed++);
    }
  }
}

TEST(ConvDirect, OtherWindowsAndStrides) {
  // 3x5 and 2x2 windows: taps counted at run time; stride 3: three phases per padded row.
  check_conv({.x = {1, 10, 10, 12}, .m = 10, .group = 10, .kernel = {3, 5}, .pads = {1, 2, 1, 2}}, 410);
  check_conv({.x = {1, 2, 9, 9}, .m = 2, .group = 2, .kernel = {2, 2}, .strides = {2, 2}}, 411);
  check_conv({.x = {1, 9, 14, 23}, .m = 9, .group = 9, .kernel = {3, 3}, .strides = {3, 3}, .pads = {1, 1, 1, 1}}, 412);
  check_conv({.x = {1, 2, 11, 19}, .m = 2, .group = 2, .kernel = {5, 5}, .strides = {1, 3}, .pads = {2, 0, 2, 1}}, 413);
  check_conv({.x = {1, 2, 9, 13}, .m = 2, .group = 2, .kernel = {1, 7}, .pads = {0, 3, 0, 3}}, 414);
  check_conv({.x = {1, 2, 13, 9}, .m = 2, .group = 2, .kernel = {7, 1}, .strides = {2, 1}, .pads = {3, 0, 3, 0}}, 415);
}

TEST(ConvDirect, Dilations) {
  // DeepLabV3's dilated 5x5 (dilation 2, pads 4) and a dilation of 6 wider than the input.
  check_conv({.x = {1, 12, 20, 20}, .m = 12, .group = 12, .kernel = {5, 5}, .dilations = {2, 2}, .pads = {4, 4, 4, 4}},
             420);
  check_conv({.x = {1, 2, 11, 13}, .m = 2, .group = 2, .kernel = {3, 3}, .dilations = {6, 6}, .pads = {6, 6, 6, 6}},
             421);
  check_conv({.x = {1, 2, 15, 13},
              .m = 2,
              .group = 2,
              .kernel = {3, 3},
              .strides = {2, 2},
              .dilations = {2, 3},
              .pads = {2, 3, 2, 3}},
             422);
}

TEST(ConvDirect, PaddingOnEverySide) {
  check_conv({.x = {1, 2, 9, 10}, .m = 2, .group = 2, .kernel = {3, 3}, .pads = {0, 2, 3, 1}}, 430);
  // Pads wider than the window reaches: whole rows and columns of outputs are the bias alone.
  check_conv({.x = {1, 8, 5, 6}, .m = 8, .group = 8, .kernel = {3, 3}, .pads = {4, 5, 3, 4}}, 431);
  check_conv({.x = {1, 8, 5, 6}, .m = 8, .group = 8, .kernel = {3, 3}, .strides = {2, 2}, .pads = {4, 5, 3, 4}}, 432);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    SCOPED_TRACE(mode);
    check_conv({.x = {1, 3, 9, 11}, .m = 3, .group = 3, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = mode}, 433);
    check_conv({.x = {1, 3, 10, 7}, .m = 3, .group = 3, .kernel = {4, 5}, .strides = {2, 2}, .auto_pad = mode}, 434);
  }
}

TEST(ConvDirect, RowsNarrowerAndWiderThanAVector) {
  // Output widths around the 8-float vector and the 4-vector blocks (8, 32, 40 split 32 + 8),
  // heights around the 8-row blocks.
  uint32_t seed = 440;
  for (int64_t w : {1, 3, 7, 8, 9, 16, 17, 31, 32, 33, 40, 67}) {
    for (int64_t h : {1, 9}) {
      SCOPED_TRACE("width " + std::to_string(w) + " height " + std::to_string(h));
      check_conv({.x = {1, 9, h, w}, .m = 9, .group = 9, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, seed++);
      check_conv({.x = {1, 2, 2 * h + 1, 2 * w + 1}, .m = 2, .group = 2, .kernel = {3, 3}, .strides = {2, 2}}, seed++);
    }
  }
}

TEST(ConvDirect, OneAndThreeDimensional) {
  check_conv({.x = {2, 8, 29}, .m = 8, .group = 8, .kernel = {7}, .strides = {2}, .pads = {3, 2}}, 450);
  check_conv({.x = {1, 3, 9}, .m = 6, .group = 3, .kernel = {3}, .dilations = {2}, .pads = {2, 2}}, 451);
  check_conv(
      {.x = {1, 10, 5, 6, 7}, .m = 10, .group = 10, .kernel = {3, 3, 3}, .strides = {1, 2, 1}, .pads = {1, 1, 1, 1, 1, 1}},
      452);
  check_conv({.x = {2, 2, 4, 5, 6},
              .m = 4,
              .group = 2,
              .kernel = {2, 3, 3},
              .strides = {2, 1, 2},
              .dilations = {1, 2, 1},
              .pads = {1, 2, 0, 0, 1, 2}},
             453);
}

TEST(ConvDirect, BatchesAndChannelMultipliers) {
  check_conv({.x = {3, 4, 9, 10}, .m = 8, .group = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 460);
  check_conv({.x = {2, 3, 7, 7}, .m = 9, .group = 3, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 2, 2, 2}}, 461);
  check_conv({.x = {2, 13, 6, 9}, .m = 13, .group = 13, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = false}, 462);
}

TEST(ConvDirect, GroupsOfFewChannels) {
  const std::vector<int64_t> k3 = {3, 3}, k5 = {5, 5};
  ASSERT_TRUE(conv_direct_suits(2, 8, 8, k3, {}));
  ASSERT_FALSE(conv_direct_suits(1, 8, 8, k5, {}));  // one group of a 5 x 5 window is one GEMM
  // RegNetY's groups of 8 channels in and out, at stride 1 and 2; 4 in and 8 out; 16 in and 8 out.
  check_conv({.x = {1, 16, 14, 14}, .m = 16, .group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 470);
  check_conv({.x = {2, 24, 11, 9}, .m = 24, .group = 3, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
             471);
  check_conv({.x = {1, 12, 9, 9}, .m = 24, .group = 3, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, 472);
  check_conv({.x = {1, 32, 6, 19}, .m = 16, .group = 2, .kernel = {1, 3}, .pads = {0, 1, 0, 1}, .bias = false}, 473);
  // 6 out per group: one block of 4 channels summed together, then 2 one by one.
  check_conv({.x = {1, 8, 10, 12}, .m = 12, .group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 474);
  // Rows of more than two vectors: 8 and 16 out per group in the lanes of the vectors (30 = 8 + 8 +
  // 8 + 6 positions, 19 = 8 + 8 + 3), 3x3 and 5x5 at stride 2.
  check_conv({.x = {1, 16, 6, 30}, .m = 16, .group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 477);
  check_conv({.x = {1, 8, 9, 37}, .m = 32, .group = 2, .kernel = {5, 5}, .strides = {2, 2}, .pads = {2, 2, 2, 2}},
             478);
}

TEST(ConvDirect, LargePlanesAreCopiedInChunksOfRows) {
  // A padded copy of more than 256 KiB is cut into chunks of output rows, each copying the input
  // rows it reads.
  check_conv({.x = {1, 8, 520, 515}, .m = 8, .group = 8, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 475);
  check_conv({.x = {1, 8, 363, 361}, .m = 4, .group = 2, .kernel = {3, 3}, .strides = {2, 1}, .pads = {1, 1, 1, 1}},
             476);
}

TEST(ConvDirect, EdgeValuesStayInTheirWindows) {
  // Infinities in the first and last column of every row and a NaN inside: a row's copy must not
  // carry the next row's first column into its right padding, nor the previous row's last one.
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t s : {1, 2}) {
    const int64_t h = 9, w = 11;
    std::vector<float> x = random_floats(static_cast<size_t>(2 * h * w), 480);
    for (int64_t r = 0; r < 2 * h; ++r) {
      x[r * w] = inf;
      x[r * w + w - 1] = -inf;
    }
    x[3 * w + 5] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> wt(18, 0.5f);
    const ConvConfig c{.x = {1, 2, h, w},
                       .m = 2,
                       .group = 2,
                       .kernel = {3, 3},
                       .strides = {s, s},
                       .pads = {1, 1, 1, 1},
                       .bias = false};
    Shape out_shape;
    const std::vector<float> want = naive_conv(c, x, wt, {}, out_shape);
    OpTester t("Conv", 11);
    t.attr("group", c.group).attr("strides", c.strides).attr("pads", c.pads);
    t.input<float>(c.x, x).input<float>({2, 1, 3, 3}, wt).output<float>(out_shape, want);
    t.run();
  }
}

TEST(ConvDirect, ThreadCountKeepsTheBits) {
  const std::vector<ConvConfig> configs = {
      {.x = {2, 14, 23, 19}, .m = 14, .group = 14, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      // Fewer (image, group) pairs than threads: the output rows are cut among them too.
      {.x = {1, 2, 37, 21}, .m = 4, .group = 2, .kernel = {5, 5}, .dilations = {2, 2}, .pads = {4, 4, 4, 4}},
      {.x = {1, 8, 6, 9, 7}, .m = 8, .group = 8, .kernel = {3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}},
      {.x = {1, 16, 15, 15}, .m = 16, .group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
  };
  uint32_t seed = 490;
  for (ConvConfig c : configs) {
    SCOPED_TRACE("config with seed " + std::to_string(seed));
    c.threads = 1;
    const std::vector<Tensor> one = check_conv(c, seed);
    c.threads = 4;
    const std::vector<Tensor> four = check_conv(c, seed++);
    ASSERT_EQ(one.size(), 1u);
    ASSERT_EQ(four.size(), 1u);
    ASSERT_EQ(one[0].shape(), four[0].shape());
    EXPECT_EQ(std::memcmp(one[0].data<float>(), four[0].data<float>(), one[0].numel() * sizeof(float)), 0);
  }
}

// A grouped convolution is its groups' convolutions side by side: computed directly, each group's
// outputs have the bits of that group alone run as one im2col + GEMM (one group never runs
// directly), the direct sum following the GEMM's order and rounding.
TEST(ConvDirect, SameBitsAsTheGemm) {
  // One group of 4 channels or fewer runs directly too; rows of 29 sum 8 channels in lanes.
  for (const auto& [cg, w] : {std::pair<int64_t, int64_t>{5, 11}, {8, 11}, {16, 11}, {8, 29}}) {
    SCOPED_TRACE("channels per group " + std::to_string(cg) + ", width " + std::to_string(w));
    const int64_t group = 3, mg = 8, h = 13;
    WindowGeometry geo;
    geo.in = {h, w};
    geo.kernel = {3, 3};
    geo.strides = {1, 1};
    geo.dilations = {1, 1};
    geo.pads_begin = {1, 1};
    geo.pads_end = {1, 1};
    geo.out = {h, w};
    const int64_t in_size = h * w, out_size = h * w, k_size = 9;
    const std::vector<float> x = random_floats(static_cast<size_t>(group * cg * in_size), 500);
    const std::vector<float> wt = random_floats(static_cast<size_t>(group * mg * cg * k_size), 501);
    const std::vector<float> b = random_floats(static_cast<size_t>(group * mg), 502);
    std::vector<float> direct(static_cast<size_t>(group * mg * out_size));
    conv_float32(geo, 1, group * cg, group * mg, group, x.data(), wt.data(), b.data(), direct.data(), 1);
    for (int64_t gi = 0; gi < group; ++gi) {
      std::vector<float> gemm(static_cast<size_t>(mg * out_size));
      conv_float32(geo, 1, cg, mg, 1, x.data() + gi * cg * in_size, wt.data() + gi * mg * cg * k_size,
                   b.data() + gi * mg, gemm.data(), 1);
      EXPECT_EQ(std::memcmp(gemm.data(), direct.data() + gi * mg * out_size, gemm.size() * sizeof(float)), 0) << gi;
    }
  }
}

// A network's stem (one group of 3 input channels, few output channels) runs directly, with the
// bits of the im2col + GEMM path: the same convolution over two more input channels of zeros,
// with zero weights, runs as a GEMM and adds w * 0 = +0 to each sum past the live ones.
TEST(ConvDirect, StemsHaveTheBitsOfTheGemm) {
  const std::vector<int64_t> k3 = {3, 3}, k7 = {7, 7};
  ASSERT_TRUE(conv_direct_suits(1, 3, 24, k3, {}));
  ASSERT_TRUE(conv_direct_suits(1, 3, 24, k7, {}));
  ASSERT_FALSE(conv_direct_suits(1, 5, 24, k7, {}));
  ASSERT_FALSE(conv_direct_suits(1, 3, 64, k7, {}));  // ResNet's 7 x 7 stem: faster as a GEMM
  struct Case {
    int64_t m, kernel, stride, h, w;
  };
  for (const Case& k : {Case{24, 3, 2, 31, 29}, Case{16, 3, 2, 40, 40}, Case{32, 7, 2, 23, 27}, Case{8, 3, 1, 9, 14}}) {
    SCOPED_TRACE("m " + std::to_string(k.m) + " kernel " + std::to_string(k.kernel));
    const int64_t c = 3, wide = 5, taps = k.kernel * k.kernel, pad = k.kernel / 2;
    WindowGeometry geo;
    geo.in = {k.h, k.w};
    geo.kernel = {k.kernel, k.kernel};
    geo.strides = {k.stride, k.stride};
    geo.dilations = {1, 1};
    geo.pads_begin = {pad, pad};
    geo.pads_end = {pad, pad};
    geo.out = {(k.h + 2 * pad - k.kernel) / k.stride + 1, (k.w + 2 * pad - k.kernel) / k.stride + 1};
    const int64_t in_size = k.h * k.w, out_size = geo.out[0] * geo.out[1];
    const std::vector<float> x = random_floats(static_cast<size_t>(c * in_size), 520);
    const std::vector<float> wt = random_floats(static_cast<size_t>(k.m * c * taps), 521);
    const std::vector<float> b = random_floats(static_cast<size_t>(k.m), 522);
    std::vector<float> x_wide(static_cast<size_t>(wide * in_size), 0.0f),
        wt_wide(static_cast<size_t>(k.m * wide * taps), 0.0f);
    std::copy(x.begin(), x.end(), x_wide.begin());
    for (int64_t o = 0; o < k.m; ++o) {
      std::copy_n(wt.begin() + o * c * taps, c * taps, wt_wide.begin() + o * wide * taps);
    }
    std::vector<float> direct(static_cast<size_t>(k.m * out_size)), gemm(direct.size());
    conv_float32(geo, 1, c, k.m, 1, x.data(), wt.data(), b.data(), direct.data(), 2);
    conv_float32(geo, 1, wide, k.m, 1, x_wide.data(), wt_wide.data(), b.data(), gemm.data(), 2);
    EXPECT_EQ(std::memcmp(gemm.data(), direct.data(), gemm.size() * sizeof(float)), 0);
  }
}

// One group of up to 64 output channels over a 3 x 3 window (Inception's 32 -> 32 over 147 x 147,
// ResNet's 64 -> 64, DenseNet's 128 -> 32) runs directly; against the naive sum, and with the bits
// of the GEMM: the same convolution with 72 more output channels runs as a GEMM (more than 64),
// and its first channels' sums are those of the direct one (a GEMM sums each output apart, in the
// same order whatever the other rows).
TEST(ConvDirect, ThreeByThreeWindowsOfFewOutputChannels) {
  const std::vector<int64_t> k3 = {3, 3}, k3x1 = {3, 1}, k5 = {5, 5}, ones = {1, 1}, twos = {2, 2};
  ASSERT_TRUE(conv_direct_suits(1, 32, 64, k3, ones));
  ASSERT_FALSE(conv_direct_suits(1, 32, 65, k3, ones));
  ASSERT_FALSE(conv_direct_suits(1, 32, 32, k3x1, ones));
  ASSERT_FALSE(conv_direct_suits(1, 48, 64, k5, ones));
  ASSERT_FALSE(conv_direct_suits(1, 32, 32, k3, twos));  // boxes of live taps (conv_regions.h)
  check_conv({.x = {2, 19, 13, 17}, .m = 37, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 480);
  check_conv({.x = {1, 32, 15, 15}, .m = 64, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 1, 0}}, 481);
  struct Case {
    int64_t c, m, stride, h, w;
    int threads;
  };
  // 300 channels: sums deeper than the GEMM's passes over k (256 at most).
  for (const Case& k : {Case{32, 32, 1, 29, 41, 1}, Case{19, 37, 1, 9, 70, 3}, Case{40, 64, 2, 23, 21, 2},
                        Case{300, 8, 1, 12, 15, 2}}) {
    SCOPED_TRACE("c " + std::to_string(k.c) + " m " + std::to_string(k.m) + " stride " + std::to_string(k.stride));
    constexpr int64_t kMore = 72;
    const int64_t n = 2, pad = 1;
    WindowGeometry geo;
    geo.in = {k.h, k.w};
    geo.kernel = {3, 3};
    geo.strides = {k.stride, k.stride};
    geo.dilations = {1, 1};
    geo.pads_begin = {pad, pad};
    geo.pads_end = {pad, 0};
    for (size_t i = 0; i < 2; ++i) {
      geo.out.push_back((geo.in[i] + geo.pads_begin[i] + geo.pads_end[i] - geo.effective_kernel(i)) / k.stride + 1);
    }
    ASSERT_TRUE(conv_direct_suits(1, k.c, k.m, geo.kernel, geo.dilations));
    ASSERT_FALSE(conv_direct_suits(1, k.c, k.m + kMore, geo.kernel, geo.dilations));
    const int64_t out_size = geo.out[0] * geo.out[1], wide = k.m + kMore;
    const std::vector<float> x = random_floats(static_cast<size_t>(n * k.c * k.h * k.w), 530);
    const std::vector<float> wt = random_floats(static_cast<size_t>(wide * k.c * 9), 531);
    const std::vector<float> b = random_floats(static_cast<size_t>(wide), 532);
    std::vector<float> direct(static_cast<size_t>(n * k.m * out_size)), gemm(static_cast<size_t>(n * wide * out_size));
    conv_float32(geo, n, k.c, k.m, 1, x.data(), wt.data(), b.data(), direct.data(), k.threads);
    conv_float32(geo, n, k.c, wide, 1, x.data(), wt.data(), b.data(), gemm.data(), k.threads);
    for (int64_t img = 0; img < n; ++img) {
      EXPECT_EQ(std::memcmp(gemm.data() + img * wide * out_size, direct.data() + img * k.m * out_size,
                            static_cast<size_t>(k.m * out_size) * sizeof(float)),
                0)
          << "image " << img;
    }
  }
}

// A transform of the input (the engine's int8 quantization) applied to each task's padded copy
// gives the bits of the convolution of the transformed input: strides 1 and 2, on 1 to 4 threads,
// with one image and channel cut into chunks of rows (the last one shorter) among them.
TEST(ConvDirect, TransformedCopiesGiveTheTransformedInputsBits) {
  const auto cube = [](float v) { return v * v * v; };  // maps 0 to 0, not a multiple of v
  const std::function<void(std::span<float>)> transform = [&](std::span<float> v) {
    for (float& e : v) e = cube(e);
  };
  for (const int64_t stride : {1, 2}) {
    for (const int threads : {1, 2, 4}) {
      for (const int64_t c : {1, 6}) {
        SCOPED_TRACE("stride " + std::to_string(stride) + ", threads " + std::to_string(threads) + ", channels " +
                     std::to_string(c));
        const int64_t n = c == 1 ? 1 : 2, h = 29, w = 23;
        WindowGeometry geo;
        geo.in = {h, w};
        geo.kernel = {3, 3};
        geo.strides = {stride, stride};
        geo.dilations = {1, 1};
        geo.pads_begin = {1, 1};
        geo.pads_end = {1, 1};
        geo.out = {(h + 2 - 3) / stride + 1, (w + 2 - 3) / stride + 1};
        const int64_t in_size = h * w, out_size = geo.out[0] * geo.out[1];
        const std::vector<float> x = random_floats(static_cast<size_t>(n * c * in_size), 510);
        const std::vector<float> wt = random_floats(static_cast<size_t>(c * 9), 511);
        std::vector<float> cubed(x.size());
        for (size_t i = 0; i < x.size(); ++i) cubed[i] = cube(x[i]);
        std::vector<float> want(static_cast<size_t>(n * c * out_size)), got(want.size());
        conv_direct(geo, n, c, c, c, cubed.data(), wt.data(), nullptr, want.data(), threads);
        conv_direct(geo, n, c, c, c, x.data(), wt.data(), nullptr, got.data(), threads, &transform);
        EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0);
      }
    }
  }
}

}  // namespace
}  // namespace vn::ops::testing
