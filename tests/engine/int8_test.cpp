// SPDX-License-Identifier: Apache-2.0
// int8 builds: exact int32 accumulation, per-channel weight scales at work, entropy calibration
// beating min-max on a residual conv net with activation outliers, the calibration cache and the
// plan round trips, explicitly quantized (QDQ) models, and the layers that stay in float.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "core/engine/engine_backend.h"
#include "core/engine/folding.h"
#include "core/engine/fusion.h"
#include "core/engine/kernels/kernels.h"
#include "core/engine/quantize.h"
#include "core/ops/igemm.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/one_layer.h"

namespace vn::engine {
namespace {

using test::kHeader;
using test::make_model;
using test::OneLayer;
using test::random_tensor;
using test::run_kernel;

TEST(Int8Kernels, ConvAccumulatesExactlyInInt32) {
  // 2304-term dot products of int8 values near +-127: sums reach 3.7e7, past float32's exact
  // integers (2^24), so only an exact integer accumulator gives every sum exactly. Scales are
  // powers of two, so rescaling adds no rounding either.
  constexpr int64_t kChannels = 256, kOut = 3;
  const float sx = 0x1p-6f, sw = 0x1p-7f;
  std::mt19937 rng(11);
  Tensor w(DType::kFloat32, {kOut, kChannels, 3, 3});
  std::vector<int32_t> qw(static_cast<size_t>(w.numel()));
  for (size_t i = 0; i < qw.size(); ++i) {
    // Output channel 0 is all +127 (the largest sum); the others are random with one 127 each, so
    // that their per-channel scale is exactly sw.
    const size_t per_channel = qw.size() / kOut;
    qw[i] = i < per_channel || i % per_channel == 0 ? 127 : static_cast<int32_t>(rng() % 255) - 127;
    w.mutable_values<float>()[i] = static_cast<float>(qw[i]) * sw;
  }
  OneLayer l(make_model(kHeader + "g (float[1,256,3,3] X, float[3,256,3,3] W) => (float[1,3,1,1] Y) { Y = Conv(X, W) }",
                        {{"W", w}}));
  Tensor x(DType::kFloat32, {1, kChannels, 3, 3});
  std::vector<int32_t> qx(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < qx.size(); ++i) {
    qx[i] = i % 7 == 0 ? static_cast<int32_t>(rng() % 255) - 127 : 127;
    x.mutable_values<float>()[i] = static_cast<float>(qx[i]) * sx;
  }
  const ScaleTable scales{{"X", sx}, {"Y", 1.0f}};
  const KernelArgs args = l.args(TacticId::kConvIm2colInt8, scales);
  ASSERT_TRUE(tactic_applicable(args, {}).supported);
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  const Tensor y = run_kernel(**kernel, x);
  const size_t per_channel = qx.size();
  int64_t largest = 0;
  for (int64_t m = 0; m < kOut; ++m) {
    int64_t exact = 0;
    for (size_t i = 0; i < per_channel; ++i) exact += int64_t{qw[m * per_channel + i]} * qx[i];
    largest = std::max(largest, std::abs(exact));
    EXPECT_EQ(y.values<float>()[static_cast<size_t>(m)], static_cast<float>(exact) * sx * sw) << "channel " << m;
  }
  EXPECT_GT(largest, int64_t{1} << 24) << "the test must exceed float32's exact integers";

  // Against the float32 reference, the int8 layer is within its quantization tolerance.
  TensorMap feeds;
  feeds.set("X", x);
  const Tensor ref = *test::run_reference(l.model, feeds).find("Y");
  test::expect_close(y, ref, test::int8_tolerance(1e-3f), "int8 conv vs reference");
}

TEST(Int8Kernels, DepthwiseConvSumsExactlyWithItsEpilogue) {
  // A depthwise 5x5 conv (summed in float32 on the integers: 25 products per sum) with a bias and
  // a Relu: every output is its exact int32 sum rescaled, plus the bias, then the Relu. Scales are
  // powers of two, so the rescale adds no rounding.
  constexpr int64_t kChannels = 6, kSize = 9;
  const float sx = 0x1p-5f, sw = 0x1p-6f;
  std::mt19937 rng(17);
  Tensor w(DType::kFloat32, {kChannels, 1, 5, 5});
  Tensor bias(DType::kFloat32, {kChannels});
  std::vector<int32_t> qw(static_cast<size_t>(w.numel()));
  for (size_t i = 0; i < qw.size(); ++i) {
    qw[i] = i % 25 == 0 ? 127 : static_cast<int32_t>(rng() % 255) - 127;  // one 127 per channel: scale sw
    w.mutable_values<float>()[i] = static_cast<float>(qw[i]) * sw;
  }
  for (int64_t c = 0; c < kChannels; ++c) bias.mutable_values<float>()[c] = static_cast<float>(c) - 2.5f;
  OneLayer l(make_model(kHeader + "g (float[1,6,9,9] X, float[6,1,5,5] W, float[6] B) => (float[1,6,9,9] Y) {"
                                  " C = Conv <group: int = 6, pads: ints = [2, 2, 2, 2]> (X, W, B) Y = Relu(C) }",
                        {{"W", w}, {"B", bias}}));
  Tensor x(DType::kFloat32, {1, kChannels, kSize, kSize});
  std::vector<int32_t> qx(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < qx.size(); ++i) {
    qx[i] = static_cast<int32_t>(rng() % 256) - 128;
    x.mutable_values<float>()[i] = static_cast<float>(qx[i]) * sx;
  }
  const ScaleTable scales{{"X", sx}, {"Y", 1.0f}, {"C", 1.0f}};
  const KernelArgs args = l.args(TacticId::kConvIm2colInt8, scales);
  ASSERT_TRUE(tactic_applicable(args, {}).supported);
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  const Tensor y = run_kernel(**kernel, x);
  for (int64_t c = 0; c < kChannels; ++c) {
    for (int64_t oh = 0; oh < kSize; ++oh) {
      for (int64_t ow = 0; ow < kSize; ++ow) {
        int64_t exact = 0;
        for (int64_t kh = 0; kh < 5; ++kh) {
          for (int64_t kw = 0; kw < 5; ++kw) {
            const int64_t ih = oh + kh - 2, iw = ow + kw - 2;
            if (ih < 0 || ih >= kSize || iw < 0 || iw >= kSize) continue;
            exact += int64_t{qw[static_cast<size_t>(c * 25 + kh * 5 + kw)]} *
                     qx[static_cast<size_t>((c * kSize + ih) * kSize + iw)];
          }
        }
        const float want = std::max(0.0f, static_cast<float>(exact) * sx * sw + bias.values<float>()[c]);
        ASSERT_EQ(y.values<float>()[static_cast<size_t>((c * kSize + oh) * kSize + ow)], want)
            << "channel " << c << " at " << oh << "," << ow;
      }
    }
  }
}

TEST(Int8Kernels, MatMulSumsExactlyWithItsEpilogueInEveryBlock) {
  // An int8 MatMul with a bias and a Relu, requantized by the kernel to its output's grid: every
  // output is its exact int32 sum rescaled, plus the bias, the Relu, then the output's rounding,
  // over blocks of rows and columns finished by two threads while in cache. Scales are powers of
  // two, so only the output's rounding rounds.
  constexpr int64_t kRows = 150, kDepth = 40, kCols = 70;
  const float sa = 0x1p-5f, sb = 0x1p-6f, sy = 0x1p-1f;
  std::mt19937 rng(19);
  Tensor w(DType::kFloat32, {kDepth, kCols});
  Tensor bias(DType::kFloat32, {kCols});
  std::vector<int32_t> qw(static_cast<size_t>(w.numel()));
  for (size_t i = 0; i < qw.size(); ++i) {
    qw[i] = i < static_cast<size_t>(kCols) ? 127 : static_cast<int32_t>(rng() % 255) - 127;  // column scales sb
    w.mutable_values<float>()[i] = static_cast<float>(qw[i]) * sb;
  }
  for (int64_t c = 0; c < kCols; ++c) bias.mutable_values<float>()[c] = static_cast<float>(c % 7) - 3.25f;
  OneLayer l(make_model(kHeader + "g (float[150,40] X, float[40,70] W, float[70] B) => (float[150,70] Y) {"
                                  " P = MatMul(X, W) C = Add(P, B) Y = Relu(C) }",
                        {{"W", w}, {"B", bias}}));
  Tensor x(DType::kFloat32, {kRows, kDepth});
  std::vector<int32_t> qx(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < qx.size(); ++i) {
    qx[i] = static_cast<int32_t>(rng() % 256) - 128;
    x.mutable_values<float>()[i] = static_cast<float>(qx[i]) * sa;
  }
  const ScaleTable scales{{"X", sa}, {"Y", sy}, {"P", 1.0f}, {"C", 1.0f}};
  KernelArgs args = l.args(TacticId::kGemmInt8, scales);
  args.round_outputs = true;
  args.output_scale = sy;
  args.num_threads = 2;
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  ASSERT_TRUE((*kernel)->rounds_outputs());
  const Tensor y = run_kernel(**kernel, x);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      int64_t exact = 0;
      for (int64_t p = 0; p < kDepth; ++p) {
        exact += int64_t{qx[static_cast<size_t>(r * kDepth + p)]} * qw[static_cast<size_t>(p * kCols + c)];
      }
      const float sum = std::max(0.0f, static_cast<float>(exact) * sa * sb + bias.values<float>()[c]);
      const float want = sy * static_cast<float>(quantize_value(sum, sy));
      ASSERT_EQ(y.values<float>()[static_cast<size_t>(r * kCols + c)], want) << r << "," << c;
    }
  }
}

TEST(Int8Kernels, ConvAndGemmQuantizeTheirInputThemselves) {
  // CompiledLayer hands an int8 Conv its X and an int8 MatMul its A as they are (quantizes_input):
  // the kernels' own quantization must give the bits of an input already on its int8 grid (ties,
  // saturation past the scale's range included), on the direct, depthwise, im2col, pointwise,
  // sliced and product paths, and so must their reading of an input they are told is on it.
  struct Case {
    std::string text;
    TacticId tactic;
    Shape x;
    std::map<std::string, Tensor> weights;
  };
  const std::vector<Case> cases = {
      {"g (float[2,5,7,7] X, float[6,5,3,3] W) => (float[2,6,7,7] Y) { Y = Conv<pads=[1,1,1,1]>(X, W) }",
       TacticId::kConvIm2colInt8,
       {2, 5, 7, 7},
       {{"W", random_tensor({6, 5, 3, 3}, 41)}}},
      {"g (float[1,4,9,9] X, float[4,1,3,3] W) => (float[1,4,9,9] Y) { Y = Conv<group=4, pads=[1,1,1,1]>(X, W) }",
       TacticId::kConvIm2colInt8,
       {1, 4, 9, 9},
       {{"W", random_tensor({4, 1, 3, 3}, 42)}}},
      {"g (float[20,37] X, float[37,40] W) => (float[20,40] Y) { Y = MatMul(X, W) }",
       TacticId::kGemmInt8,
       {20, 37},
       {{"W", random_tensor({37, 40}, 43)}}},
      // The im2col product (72 output channels, past conv_direct's), a pointwise one, sums sliced
      // past 1024 terms, and a product two slices deep.
      {"g (float[1,5,8,8] X, float[72,5,3,3] W) => (float[1,72,8,8] Y) { Y = Conv<pads=[1,1,1,1]>(X, W) }",
       TacticId::kConvIm2colInt8,
       {1, 5, 8, 8},
       {{"W", random_tensor({72, 5, 3, 3}, 45)}}},
      {"g (float[1,16,9,9] X, float[70,16,1,1] W) => (float[1,70,9,9] Y) { Y = Conv(X, W) }",
       TacticId::kConvIm2colInt8,
       {1, 16, 9, 9},
       {{"W", random_tensor({70, 16, 1, 1}, 46)}}},
      {"g (float[1,130,5,5] X, float[8,130,3,3] W) => (float[1,8,5,5] Y) { Y = Conv<pads=[1,1,1,1]>(X, W) }",
       TacticId::kConvIm2colInt8,
       {1, 130, 5, 5},
       {{"W", random_tensor({8, 130, 3, 3}, 47)}}},
      {"g (float[9,1100] X, float[1100,24] W) => (float[9,24] Y) { Y = MatMul(X, W) }",
       TacticId::kGemmInt8,
       {9, 1100},
       {{"W", random_tensor({1100, 24}, 48)}}},
  };
  const float scale = 0.01f;  // inputs in [-1.6, 1.6): past 127 steps they saturate
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    OneLayer l(make_model(kHeader + c.text, c.weights));
    const ScaleTable scales{{"X", scale}, {"Y", 1.0f}};
    Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(l.args(c.tactic, scales));
    ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
    EXPECT_TRUE((*kernel)->quantizes_input(0));
    Tensor x = random_tensor(c.x, 44, -1.6f, 1.6f);
    x.mutable_values<float>()[0] = 2.5f * scale;  // a tie, to the even integer
    Tensor on_grid = x.clone();
    fake_quantize_in_place(on_grid.mutable_values<float>(), scale);
    EXPECT_FALSE(on_grid.same_as(x));
    const Tensor want = run_kernel(**kernel, x);
    EXPECT_TRUE(want.same_as(run_kernel(**kernel, on_grid)));
    // Told that its input lies on the grid (an int8 layer of the engine wrote it), the kernel
    // reads the integers off (grid_to_float): the same bits again.
    const Tensor* in[] = {&on_grid};
    std::vector<Tensor> out(1);
    const char flags[] = {1};
    const Status st = (*kernel)->run_on_grid(in, {}, flags, out);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_TRUE(want.same_as(out[0]));
  }
}

TEST(Int8Kernels, MatmulInt8GivesTheExactSumsOnEveryPath) {
  // Sums of 1500 terms reach 2.4e7, past float32's exact integers: each path (the int8 product,
  // VNNI or AVX2, packing B itself or reading it prepacked, and the sliced float32 one of builds
  // without either) must give the int64 sums exactly, on partial tiles and several threads.
  constexpr int64_t m = 20, n = 70, k = 1500;
  std::mt19937 rng(5);
  std::vector<int8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = i < k ? int8_t{-128} : static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = i % n == 0 ? int8_t{-128} : static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  std::vector<int64_t> want(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) want[static_cast<size_t>(i * n + j)] += int64_t{a[i * k + p]} * b[p * n + j];
    }
  }
  ASSERT_GT(want[0], int64_t{1} << 24);
  const auto expect = [&](const std::vector<int32_t>& y, const char* path) {
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want[i]) << path << " at " << i;
  };
  std::vector<int32_t> y(static_cast<size_t>(m * n));
  kernels::matmul_int8(a.data(), b.data(), y.data(), m, n, k, 2);
  expect(y, ops::igemm_available() ? "int8 product" : "sliced");
  kernels::detail::matmul_int8_sliced(a.data(), b.data(), y.data(), m, n, k, 2);
  expect(y, "sliced");
  if (ops::igemm_available()) {
    std::vector<uint8_t> packed(static_cast<size_t>(ops::packed_int8_b_size(k, n)));
    ops::pack_int8_b(k, n, b.data(), n, packed.data());
    std::vector<int32_t> offsets(static_cast<size_t>(m));
    ops::int8_row_offsets(m, k, a.data(), k, offsets.data());
    std::fill(y.begin(), y.end(), 0);
    kernels::matmul_int8(a.data(), nullptr, y.data(), m, n, k, 3, packed.data(), offsets.data());
    expect(y, "int8 product, prepacked");
  }
  // B kept in int8 panels for the float32 kernel (builds without the int8 product; callable anywhere): A as
  // the floats of its integers, the first rows of it (one row: the few-rows tiles), two slices
  // of 750 (sums past 2^24, converted to float32 whole), and one slice of the first 1000 steps
  // (written by the float kernel itself); finish sees every element once, after its sums.
  for (const int64_t depth : {k, int64_t{1000}}) {
    std::vector<int8_t> bd(b.begin(), b.begin() + depth * n);
    std::vector<int64_t> want_d(static_cast<size_t>(m * n), 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t p = 0; p < depth; ++p)
          want_d[static_cast<size_t>(i * n + j)] += int64_t{a[i * k + p]} * bd[p * n + j];
      }
    }
    const kernels::Int8Panels panels = kernels::pack_int8_panels(bd.data(), depth, n);
    std::vector<float> af(static_cast<size_t>(m * depth));
    for (int64_t i = 0; i < m; ++i) std::copy_n(a.begin() + i * k, depth, af.begin() + i * depth);
    for (int64_t rows : {int64_t{1}, int64_t{7}, m}) {
      SCOPED_TRACE(testing::Message() << rows << " rows, depth " << depth);
      std::vector<float> yp(static_cast<size_t>(rows * n), -1.0f);
      std::vector<int> seen(yp.size(), 0);
      const ops::Int8Finish finish = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) {
            const auto at = static_cast<size_t>(r * n + c);
            ++seen[at];
            ASSERT_EQ(yp[at], static_cast<float>(want_d[at])) << r << "," << c;
          }
        }
      };
      kernels::matmul_int8_panels(af.data(), panels, yp.data(), rows, 3, &finish);
      EXPECT_EQ(seen, std::vector<int>(seen.size(), 1));
    }
  }
}

TEST(Int8Kernels, ASecondProductFaultsInNoFreshPages) {
  // An int8 MatMul's int32 sums (2048 x 1024: 8 MiB) and its quantized A are per-call buffers:
  // taken from the tensors' kept mappings, the second call finds them mapped, where fresh heap
  // buffers past the program's 4 MiB mapping threshold faulted in 2048 pages at every call.
  configure_heap_for_tensors();
  OneLayer l(make_model(kHeader + "g (float[2048,64] A, float[64,1024] B) => (float[2048,1024] Y) { Y = MatMul(A, B) }",
                        {{"B", random_tensor({64, 1024}, 31)}}));
  const ScaleTable scales{{"A", 1.0f / 127}, {"Y", 1.0f}};
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(l.args(TacticId::kGemmInt8, scales));
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  const Tensor a = random_tensor({2048, 64}, 32);
  const auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  std::vector<float> first(static_cast<size_t>(2048 * 1024));
  {  // the first output released, as the engine releases a tensor after its last reader
    const Tensor y = run_kernel(**kernel, a);
    std::copy_n(y.data<float>(), first.size(), first.begin());
  }
  const long before = minor_faults();
  const Tensor second = run_kernel(**kernel, a);
  EXPECT_LT(minor_faults() - before, 2048 / 4);
  EXPECT_EQ(std::memcmp(first.data(), second.data<float>(), first.size() * sizeof(float)), 0);
}

TEST(Int8Kernels, PerChannelWeightScalesKeepASmallChannel) {
  // Output channel 0's weights are 1000x smaller than channel 1's: with one scale for the tensor
  // they would all round to 0, with one per channel they keep 8 bits.
  Tensor w = random_tensor({2, 4, 3, 3}, 21);
  for (size_t i = 0; i < 36; ++i) w.mutable_values<float>()[i] *= 1e-3f;
  OneLayer l(make_model(kHeader + "g (float[1,4,5,5] X, float[2,4,3,3] W) => (float[1,2,3,3] Y) { Y = Conv(X, W) }",
                        {{"W", w}}));
  const Tensor x = random_tensor({1, 4, 5, 5}, 22);
  const ScaleTable scales{{"X", 1.0f / 127}, {"Y", 1.0f}};
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(l.args(TacticId::kConvIm2colInt8, scales));
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  const Tensor y = run_kernel(**kernel, x);
  TensorMap feeds;
  feeds.set("X", x);
  const Tensor ref = *test::run_reference(l.model, feeds).find("Y");
  double max_small = 0, err_small = 0;
  for (size_t i = 0; i < 9; ++i) {
    max_small = std::max(max_small, std::abs(double{ref.values<float>()[i]}));
    err_small = std::max(err_small, std::abs(double{y.values<float>()[i] - ref.values<float>()[i]}));
  }
  ASSERT_GT(max_small, 0.0);
  EXPECT_LT(err_small, 0.03 * max_small) << "channel 0 kept its resolution";
}

TEST(Int8Kernels, GemmNeedsConstantWeights) {
  OneLayer l(make_model(kHeader + "g (float[2,4,6] A, float[2,6,3] B) => (float[2,4,3] Y) { Y = MatMul(A, B) }"));
  const ScaleTable scales{{"A", 0.01f}, {"B", 0.01f}, {"Y", 0.01f}};
  const Support s = tactic_applicable(l.args(TacticId::kGemmInt8, scales), {});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("constant weights"), std::string::npos) << s.reason;
}

TEST(Int8Kernels, MissingScalesSayWhichTensor) {
  OneLayer l(make_model(kHeader + "g (float[1,2,4,4] X, float[2,2,1,1] W) => (float[1,2,4,4] Y) { Y = Conv(X, W) }",
                        {{"W", random_tensor({2, 2, 1, 1}, 3)}}));
  const ScaleTable scales{{"X", 0.01f}};
  const Support s = tactic_applicable(l.args(TacticId::kConvIm2colInt8, scales), {});
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("no int8 scale for 'Y'"), std::string::npos) << s.reason;
}

// ---- Whole builds ------------------------------------------------------------------------------

/// He-initialized weights: uniform with the variance 2 / fan_in that keeps activations near 1.
Tensor he(const Shape& shape, uint32_t seed) {
  Tensor t = random_tensor(shape, seed);
  int64_t fan_in = 1;
  for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
  const float a = std::sqrt(6.0f / static_cast<float>(fan_in));
  for (float& v : t.mutable_values<float>()) v *= a;
  return t;
}

/// A ResNet-style net: a stem, a residual block, a strided conv, global pooling and a classifier.
Model resnet_like() {
  return make_model(kHeader + R"(g (float[1,3,24,24] X, float[16,3,3,3] W1, float[16] B1, float[16,16,3,3] W2,
   float[16] B2, float[16,16,3,3] W3, float[16] B3, float[32,16,3,3] W4, float[32] B4, float[32,32,3,3] W5,
   float[32] B5, float[10,32] Wfc, float[10] Bfc) => (float[1,10] Y) {
  c1 = Conv<pads=[1,1,1,1]>(X, W1, B1)
  r1 = Relu(c1)
  c2 = Conv<pads=[1,1,1,1]>(r1, W2, B2)
  r2 = Relu(c2)
  c3 = Conv<pads=[1,1,1,1]>(r2, W3, B3)
  s3 = Add(c3, r1)
  r3 = Relu(s3)
  c4 = Conv<pads=[1,1,1,1], strides=[2,2]>(r3, W4, B4)
  r4 = Relu(c4)
  c5 = Conv<pads=[1,1,1,1]>(r4, W5, B5)
  r5 = Relu(c5)
  g = GlobalAveragePool(r5)
  f = Flatten(g)
  Y = Gemm<transB=1>(f, Wfc, Bfc)
})",
                    {{"W1", he({16, 3, 3, 3}, 1)},
                     {"B1", random_tensor({16}, 2, -0.1f, 0.1f)},
                     {"W2", he({16, 16, 3, 3}, 3)},
                     {"B2", random_tensor({16}, 4, -0.1f, 0.1f)},
                     {"W3", he({16, 16, 3, 3}, 5)},
                     {"B3", random_tensor({16}, 6, -0.1f, 0.1f)},
                     {"W4", he({32, 16, 3, 3}, 7)},
                     {"B4", random_tensor({32}, 8, -0.1f, 0.1f)},
                     {"W5", he({32, 32, 3, 3}, 9)},
                     {"B5", random_tensor({32}, 10, -0.1f, 0.1f)},
                     {"Wfc", he({10, 32}, 11)},
                     {"Bfc", random_tensor({10}, 12, -0.1f, 0.1f)}});
}

/// Normalized images (standard normal values) where one value in 10000 is an outlier of
/// magnitude 20 to 60 (a saturated sensor, a specular highlight): a few per calibration set,
/// 5-15x the bulk's largest values, which the convolutions carry into every activation.
std::vector<TensorMap> outlier_feeds(int count, uint32_t seed) {
  std::vector<TensorMap> out;
  for (int i = 0; i < count; ++i) {
    Tensor x(DType::kFloat32, {1, 3, 24, 24});
    std::mt19937 rng(seed * 7919 + static_cast<uint32_t>(i));
    std::normal_distribution<float> bulk;
    for (float& v : x.mutable_values<float>()) {
      v = bulk(rng);
      if (rng() % 10000 == 0) v = (rng() % 2 ? 1.0f : -1.0f) * (20.0f + static_cast<float>(rng() % 41));
    }
    TensorMap feed;
    feed.set("X", std::move(x));
    out.push_back(std::move(feed));
  }
  return out;
}

BuildOptions int8_options(CalibrationMethod method, std::vector<TensorMap> calibration) {
  BuildOptions b;
  b.allowed = kInt8;
  b.deterministic = true;
  b.int8.calibration.method = method;
  b.int8.feeds = std::move(calibration);
  return b;
}

std::unique_ptr<EngineBackend> prepared(const Model& model, EngineOptions options, Status* error = nullptr) {
  auto engine = std::make_unique<EngineBackend>(std::move(options));
  PrepareOptions prep;
  prep.num_threads = 1;
  const Status st = engine->prepare(model, prep);
  if (error) {
    *error = st;
  } else {
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  return engine;
}

std::unique_ptr<EngineBackend> build(const Model& model, BuildOptions b) {
  EngineOptions o;
  o.build = std::move(b);
  return prepared(model, std::move(o));
}

/// Mean |engine - reference| over every output value of every feed.
double mean_abs_error(EngineBackend& engine, const Model& model, const std::vector<TensorMap>& feeds) {
  double sum = 0;
  size_t n = 0;
  for (const TensorMap& feed : feeds) {
    const Tensor ref = *test::run_reference(model, feed).find("Y");
    Result<TensorMap> out = engine.run(feed);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok()) return INFINITY;
    const Tensor& y = *out->find("Y");
    for (int64_t i = 0; i < y.numel(); ++i) {
      sum += std::abs(double{y.values<float>()[i]} - ref.values<float>()[i]);
      ++n;
    }
  }
  return sum / static_cast<double>(n);
}

TEST(Int8Build, EntropyCalibrationBeatsMinMaxOnAResNetWithOutliers) {
  const Model model = resnet_like();
  const std::vector<TensorMap> calibration = outlier_feeds(16, 100), held_out = outlier_feeds(16, 200);
  std::map<CalibrationMethod, double> error;
  std::map<CalibrationMethod, float> input_amax;
  for (CalibrationMethod m :
       {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy}) {
    std::unique_ptr<EngineBackend> engine = build(model, int8_options(m, calibration));
    size_t int8_layers = 0;
    for (const PlanLayer& l : engine->plan()->layers) int8_layers += l.precision == PrecisionId::kInt8 ? 1 : 0;
    EXPECT_EQ(int8_layers, 6u) << "the five convs and the classifier run in int8";
    input_amax[m] = engine->plan()->int8_scales.at("X") * 127;
    error[m] = mean_abs_error(*engine, model, held_out);
  }
  std::cout << "[ int8     ] mean |logit error|: minmax " << error[CalibrationMethod::kMinMax] << ", percentile "
            << error[CalibrationMethod::kPercentile] << ", entropy " << error[CalibrationMethod::kEntropy]
            << "; input thresholds " << input_amax[CalibrationMethod::kMinMax] << ", "
            << input_amax[CalibrationMethod::kPercentile] << ", " << input_amax[CalibrationMethod::kEntropy] << "\n";
  // The calibration set holds outliers: min-max spends the int8 range on them, entropy clips them.
  EXPECT_GT(input_amax[CalibrationMethod::kMinMax], 20.0f);
  EXPECT_LT(input_amax[CalibrationMethod::kEntropy], 10.0f);
  EXPECT_LT(error[CalibrationMethod::kEntropy], 0.8 * error[CalibrationMethod::kMinMax]);
  EXPECT_LT(error[CalibrationMethod::kPercentile], error[CalibrationMethod::kMinMax]);
}

TEST(Int8Build, LayersWithoutAnInt8TacticStayInFloatAndSayWhy) {
  const Model model = resnet_like();
  std::unique_ptr<EngineBackend> engine = build(model, int8_options(CalibrationMethod::kMinMax, outlier_feeds(2, 1)));
  const Plan& plan = *engine->plan();
  const auto produces = [](const std::string& tensor) {
    return [tensor](const PlanLayer& l) { return l.outputs == std::vector<std::string>{tensor}; };
  };
  auto pool = std::find_if(plan.layers.begin(), plan.layers.end(), produces("g"));
  ASSERT_NE(pool, plan.layers.end());
  EXPECT_EQ(pool->precision, PrecisionId::kFp32);
  EXPECT_EQ(pool->int8_fallback, "no int8 tactic for Pool layers");
  for (const PlanLayer& l : plan.layers) {
    if (l.precision == PrecisionId::kInt8) {
      EXPECT_TRUE(l.int8_fallback.empty()) << l.name;
    }
  }
  EXPECT_EQ(plan.calibration, "minmax calibration over 2 feed(s)");
}

TEST(Int8Build, AnInt8LayerReadsAnInt8ProducersOutputAsItIs) {
  // In a run, an int8 layer reads what an int8 layer wrote without requantizing it (same tensor,
  // same scale: requantizing would give it back unchanged). Run alone, each layer requantizes
  // every input: chaining the layers alone must give the whole run's bits.
  const Model model = resnet_like();
  std::unique_ptr<EngineBackend> engine = build(model, int8_options(CalibrationMethod::kEntropy, outlier_feeds(4, 7)));
  const Plan& plan = *engine->plan();
  const TensorMap feed = outlier_feeds(1, 8)[0];
  std::map<std::string, Tensor> values{{"X", *feed.find("X")}};
  size_t int8_reads_int8 = 0;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const PlanLayer& layer = plan.layers[i];
    std::vector<const Tensor*> inputs;
    for (const std::string& in : layer.inputs) {
      ASSERT_TRUE(values.count(in)) << in;
      inputs.push_back(&values.at(in));
      for (const PlanLayer& producer : plan.layers) {
        const bool produced = std::find(producer.outputs.begin(), producer.outputs.end(), in) != producer.outputs.end();
        int8_reads_int8 +=
            produced && producer.precision == PrecisionId::kInt8 && layer.precision == PrecisionId::kInt8;
      }
    }
    Result<std::vector<Tensor>> out = engine->run_layer_alone(i, inputs);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    for (size_t o = 0; o < layer.outputs.size(); ++o) values[layer.outputs[o]] = (*out)[o];
  }
  EXPECT_GE(int8_reads_int8, 4u) << "the test must chain int8 layers";
  Result<TensorMap> whole = engine->run(feed);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_TRUE(whole->find("Y")->same_as(values.at("Y")));
}

class Int8Files : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() / ("vn_int8_test_" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
};

TEST_F(Int8Files, CalibrationCacheRoundTripNeedsNoData) {
  const Model model = resnet_like();
  BuildOptions first = int8_options(CalibrationMethod::kEntropy, outlier_feeds(4, 300));
  first.int8.cache = dir_ / "cache.json";
  std::unique_ptr<EngineBackend> calibrated = build(model, first);
  ASSERT_TRUE(std::filesystem::exists(first.int8.cache));

  BuildOptions second = int8_options(CalibrationMethod::kMinMax, {});
  second.int8.cache = first.int8.cache;
  std::unique_ptr<EngineBackend> cached = build(model, second);
  EXPECT_EQ(cached->plan()->int8_scales, calibrated->plan()->int8_scales);
  EXPECT_NE(cached->plan()->calibration.find("entropy scales of"), std::string::npos) << cached->plan()->calibration;
  EXPECT_NE(cached->plan()->calibration.find("read from the calibration cache"), std::string::npos);
  const TensorMap feed = outlier_feeds(1, 400)[0];
  EXPECT_TRUE(calibrated->run(feed)->find("Y")->same_as(*cached->run(feed)->find("Y")));

  // Another model (other weights) refuses the cache.
  Model other = resnet_like();
  other.graph.initializers.back().tensor.mutable_values<float>()[0] += 1.0f;
  EngineOptions o;
  o.build = second;
  Status error;
  prepared(other, std::move(o), &error);
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(error.message().find("was calibrated on another model"), std::string::npos) << error.message();
}

TEST_F(Int8Files, PlanRoundTripKeepsTheScales) {
  const Model model = resnet_like();
  std::unique_ptr<EngineBackend> built =
      build(model, int8_options(CalibrationMethod::kPercentile, outlier_feeds(3, 500)));
  const std::filesystem::path path = dir_ / "plan.json";
  ASSERT_TRUE(save_plan(*built->plan(), path).ok());
  Result<Plan> loaded = load_plan(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->int8_scales, built->plan()->int8_scales);
  EXPECT_EQ(loaded->calibration, built->plan()->calibration);
  EXPECT_FALSE(loaded->int8_scales.empty());
  EngineOptions o;
  o.plan = std::make_shared<const Plan>(std::move(*loaded));
  std::unique_ptr<EngineBackend> reloaded = prepared(model, std::move(o));
  ASSERT_EQ(reloaded->plan()->layers.size(), built->plan()->layers.size());
  for (size_t i = 0; i < built->plan()->layers.size(); ++i) {
    EXPECT_EQ(reloaded->plan()->layers[i].precision, built->plan()->layers[i].precision);
  }
  for (const TensorMap& feed : outlier_feeds(2, 600)) {
    EXPECT_TRUE(built->run(feed)->find("Y")->same_as(*reloaded->run(feed)->find("Y")));
  }
}

TEST(Int8Build, ExplicitQuantizeDequantizeRunsAsGiven) {
  const Model model = make_model(kHeader + R"(g (float[1,4,6,6] X, float[8,4,3,3] W) => (float[1,8,4,4] Y) {
  s = Constant<value = float {0.05}>()
  z = Constant<value = int8 {0}>()
  q = QuantizeLinear(X, s, z)
  d = DequantizeLinear(q, s, z)
  Y = Conv(d, W)
})",
                                 {{"W", random_tensor({8, 4, 3, 3}, 31)}});
  std::unique_ptr<EngineBackend> engine = build(model, int8_options(CalibrationMethod::kEntropy, {}));
  EXPECT_EQ(engine->plan()->calibration.rfind("none: the model is explicitly quantized", 0), 0u)
      << engine->plan()->calibration;
  TensorMap feeds;
  feeds.set("X", random_tensor({1, 4, 6, 6}, 32, -3.0f, 3.0f));
  const Tensor ref = *test::run_reference(model, feeds).find("Y");
  const Tensor y = *engine->run(feeds)->find("Y");
  test::expect_close(y, ref, test::precision_tolerance(PrecisionId::kFp32), "QDQ model on the engine");
  // The quantization the model asks for happened: the same conv on unquantized X differs.
  const Model plain =
      make_model(kHeader + "g (float[1,4,6,6] X, float[8,4,3,3] W) => (float[1,8,4,4] Y) { Y = Conv(X, W) }",
                 {{"W", random_tensor({8, 4, 3, 3}, 31)}});
  const Tensor unquantized = *test::run_reference(plain, feeds).find("Y");
  EXPECT_FALSE(compare_tensors("Y", y, unquantized, test::precision_tolerance(PrecisionId::kFp32), false).passed);
}

}  // namespace
}  // namespace vn::engine
