// SPDX-License-Identifier: Apache-2.0
// Rounded constant weights kept packed in 16 bits (narrow.h, PackedWeights::rounded_panels and
// rounded_conv_weights): the formats' rounding against Eigen's, the kept bytes, a transform that
// is not the rounding refused, and products and convolutions that read the kept weights giving
// the bits of rounding the weights at every call.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/ops/narrow.h"
#include "core/ops/nn/conv.h"
#include "core/ops/sgemm.h"
#include "core/ops/sgemm_driver.h"

namespace vn::ops::testing {
namespace {

/// The engine's rounding of operands to `format` (engine/precision.cpp), as a panel transform.
PanelTransform rounding_to(Narrow format) {
  return [format](std::span<float> v) {
    for (float& x : v) {
      x = format == Narrow::kFloat16 ? static_cast<float>(Eigen::half(x)) : static_cast<float>(Eigen::bfloat16(x));
    }
  };
}

std::vector<float> uniform(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Tensor as_constant(const std::vector<float>& values) {
  Tensor t(DType::kFloat32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.mutable_data<float>());
  return t;
}

TEST(Narrow, RoundsAsEigenAndWidensExactly) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Ties, the ends of float16's range (65504; 65520 rounds up to infinity), subnormals of both
  // formats, signed zeros, infinities and NaN, then random values over many binades; 1003 values
  // so that the eight-wide loops leave a tail.
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f + 0x1p-11f,
                               1.0f + 3 * 0x1p-11f,
                               1.0f + 0x1p-8f,
                               65504.0f,
                               65520.0f,
                               -65536.0f,
                               3e-8f,
                               6e-5f,
                               1e-40f,
                               -1e-39f,
                               kInf,
                               -kInf,
                               std::numeric_limits<float>::quiet_NaN()};
  for (float v : uniform(600, 1, -1.0f, 1.0f))
    values.push_back(v * std::exp2(static_cast<float>(values.size() % 60) - 30));
  while (values.size() < 1003) values.push_back(uniform(1, static_cast<uint32_t>(values.size()), -7e4f, 7e4f)[0]);
  for (Narrow format : {Narrow::kFloat16, Narrow::kBFloat16}) {
    SCOPED_TRACE(std::string(narrow_name(format)));
    std::vector<uint16_t> bits(values.size());
    std::vector<float> back(values.size());
    narrow(format, values.data(), static_cast<int64_t>(values.size()), bits.data());
    widen(format, bits.data(), static_cast<int64_t>(bits.size()), back.data());
    std::vector<float> want = values;
    rounding_to(format)(want);
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(back[i])) << values[i];
      } else {
        ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(want[i])) << i << ": " << values[i];
      }
    }
    // Widening what it narrowed again changes nothing: the formats' values are float32 values.
    std::vector<uint16_t> again(bits.size());
    narrow(format, back.data(), static_cast<int64_t>(back.size()), again.data());
    EXPECT_EQ(again, bits);
  }
}

TEST(KeptRounded, PanelsHoldTheRoundedValuesInHalfTheBytesAndRefuseOtherTransforms) {
  const int64_t k = 50, n = 70;  // 3 panels of 32 columns
  const std::vector<float> b = uniform(static_cast<size_t>(k * n), 5);
  const Tensor owner = as_constant(b);
  const GemmShape s{false, false, 4, n, k, k, n, n};
  for (Narrow format : {Narrow::kFloat16, Narrow::kBFloat16}) {
    PackedWeights cache(size_t{1} << 20);
    const std::shared_ptr<const uint16_t[]> p =
        cache.rounded_panels(owner, s, owner.data<float>(), format, rounding_to(format), 2);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(cache.bytes(), static_cast<size_t>(3 * k * 32) * sizeof(uint16_t));
    EXPECT_EQ(cache.rounded_panels(owner, s, owner.data<float>(), format, rounding_to(format), 1), p);
    // Panel 1, depth 2, column 5 is B's row 2, column 37; past column 69 the panels hold zeros.
    uint16_t want = 0;
    narrow(format, &b[2 * n + 37], 1, &want);
    EXPECT_EQ(p[static_cast<size_t>((k + 2) * 32 + 5)], want);
    EXPECT_EQ(p[static_cast<size_t>((2 * k + 2) * 32 + 6)], 0);
  }
  // A transform that is not the rounding keeps nothing, and is not tried again.
  PackedWeights cache(size_t{1} << 20);
  std::atomic<int> calls{0};
  const PanelTransform doubling = [&](std::span<float> v) {
    ++calls;
    for (float& x : v) x = static_cast<float>(Eigen::half(2 * x));
  };
  EXPECT_EQ(cache.rounded_panels(owner, s, owner.data<float>(), Narrow::kFloat16, doubling, 2), nullptr);
  const int made = calls.load();
  EXPECT_GT(made, 0);
  EXPECT_EQ(cache.rounded_panels(owner, s, owner.data<float>(), Narrow::kFloat16, doubling, 2), nullptr);
  EXPECT_EQ(calls.load(), made);
  EXPECT_EQ(cache.bytes(), 0u);
}

// The products read kept rounded panels, widened a few at a time by each task, where they would
// pack and round B: the same bits, for few rows and many, both layouts of A and B, panels wider
// than the widening's 256 KiB (k = 2100) and several per widening.
TEST(KeptRounded, ProductsGiveTheBitsOfRoundingBAtEachProduct) {
  struct Shape3 {
    bool trans_a, trans_b;
    int64_t m, n, k;
  };
  // As below: every constant lives to the end, and the cache holds no gone constant's panels.
  std::vector<Tensor> owners{as_constant(uniform(64, 39))};
  packed_weights().panels(owners[0], GemmShape{false, false, 12, 8, 8, 8, 8, 8}, owners[0].data<float>(), 1);
  uint32_t seed = 40;
  for (const Shape3& sh :
       {Shape3{false, false, 1, 1000, 300}, Shape3{false, true, 3, 200, 90}, Shape3{false, false, 40, 300, 70},
        Shape3{true, true, 30, 100, 2100}, Shape3{false, true, 250, 64, 64}}) {
    const GemmShape s{sh.trans_a, sh.trans_b, sh.m, sh.n, sh.k, sh.trans_a ? sh.m : sh.k, sh.trans_b ? sh.k : sh.n,
                      sh.n};
    const std::vector<float> a = uniform(static_cast<size_t>(sh.m * sh.k), seed++);
    owners.push_back(as_constant(uniform(static_cast<size_t>(sh.k * sh.n), seed++)));
    const Tensor& owner = owners.back();
    for (Narrow format : {Narrow::kFloat16, Narrow::kBFloat16}) {
      SCOPED_TRACE("m=" + std::to_string(sh.m) + " n=" + std::to_string(sh.n) + " k=" + std::to_string(sh.k) + " " +
                   std::string(narrow_name(format)));
      const PanelTransform round = rounding_to(format);
      std::vector<float> each_time(static_cast<size_t>(sh.m * sh.n));
      sgemm(s, a.data(), owner.data<float>(), each_time.data(), 2, &round);
      const size_t before = packed_weights().bytes();
      for (int threads : {1, 3}) {
        std::vector<float> kept(each_time.size(), 42.0f);
        sgemm(s, a.data(), owner.data<float>(), kept.data(), threads, &round, &owner, format);
        ASSERT_EQ(kept, each_time) << threads << " threads";
      }
      // Kept once, in 16 bits.
      EXPECT_EQ(packed_weights().bytes() - before, static_cast<size_t>(packed_b_size(sh.k, sh.n)) * sizeof(uint16_t));
      std::vector<std::vector<float>> outs(3, std::vector<float>(each_time.size(), 42.0f));
      std::vector<GemmOperands> batch;
      for (auto& o : outs) batch.push_back({a.data(), owner.data<float>(), o.data()});
      sgemm_batched(s, batch, 3, &round, &owner, format);
      for (const auto& o : outs) EXPECT_EQ(o, each_time);
    }
  }
}

// Convolutions read kept rounded weights, widened a task's chunk of output channels at a time:
// the bits of packing and rounding them at every call, on the paths of one tile per image (the
// chunks), of several tiles and images (once packed for all), of groups, and of a single output
// position (a product).
TEST(KeptRounded, ConvolutionsGiveTheBitsOfRoundingTheWeightsAtEachCall) {
  struct Case {
    Shape x;
    int64_t m, group, kernel, pad;
    int threads;
  };
  // Every constant lives to the end, and an entry added first frees those of earlier tests' gone
  // constants: from here the cache's bytes change only by what these convolutions keep.
  std::vector<Tensor> owners{as_constant(uniform(64, 69))};
  packed_weights().panels(owners[0], GemmShape{false, false, 12, 8, 8, 8, 8, 8}, owners[0].data<float>(), 1);
  uint32_t seed = 70;
  for (const Case& c : {Case{{1, 64, 5, 5}, 100, 1, 3, 1, 2}, Case{{2, 16, 30, 30}, 72, 1, 3, 1, 2},
                        Case{{1, 32, 12, 12}, 48, 2, 1, 0, 1}, Case{{2, 96, 1, 1}, 20, 1, 1, 0, 2}}) {
    WindowGeometry geo;
    geo.in = {c.x[2], c.x[3]};
    geo.kernel = {c.kernel, c.kernel};
    geo.strides = geo.dilations = {1, 1};
    geo.pads_begin = geo.pads_end = {c.pad, c.pad};
    geo.out = {c.x[2] + 2 * c.pad - c.kernel + 1, c.x[3] + 2 * c.pad - c.kernel + 1};
    const int64_t cg = c.x[1] / c.group;
    const std::vector<float> x = uniform(static_cast<size_t>(shape_numel(c.x)), seed++);
    owners.push_back(as_constant(uniform(static_cast<size_t>(c.m * cg * c.kernel * c.kernel), seed++)));
    const Tensor& w = owners.back();
    const std::vector<float> bias = uniform(static_cast<size_t>(c.m), seed++);
    const size_t y_size = static_cast<size_t>(c.x[0] * c.m * geo.out[0] * geo.out[1]);
    for (Narrow format : {Narrow::kFloat16, Narrow::kBFloat16}) {
      SCOPED_TRACE("x " + shape_to_string(c.x) + " m=" + std::to_string(c.m) + " " + std::string(narrow_name(format)));
      const PanelTransform round = rounding_to(format);
      std::vector<float> each_time(y_size, -1.0f), kept(y_size, -2.0f);
      conv_float32(geo, c.x[0], c.x[1], c.m, c.group, x.data(), w.data<float>(), bias.data(), each_time.data(),
                   c.threads, &round);
      const size_t before = packed_weights().bytes();
      for (int pass = 0; pass < 2; ++pass) {
        conv_float32(geo, c.x[0], c.x[1], c.m, c.group, x.data(), w.data<float>(), bias.data(), kept.data(), c.threads,
                     &round, nullptr, &w, format);
        ASSERT_EQ(kept, each_time) << "pass " << pass;
      }
      // Kept once, in 16 bits (the single position keeps its product's B panels instead).
      if (geo.out[0] * geo.out[1] > 1) {
        EXPECT_EQ(
            packed_weights().bytes() - before,
            static_cast<size_t>(c.group * packed_a_size(c.m / c.group, cg * c.kernel * c.kernel)) * sizeof(uint16_t));
      }
    }
  }
}

}  // namespace
}  // namespace vn::ops::testing
