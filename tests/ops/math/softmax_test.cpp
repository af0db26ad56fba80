// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "core/ops/kernel_context.h"
#include "core/ops/op_registry.h"
#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

/// Softmax (or log-softmax) over blocks of a row-major (outer, len, inner) array, in double.
std::vector<float> oracle(const std::vector<float>& x, int64_t outer, int64_t len, int64_t inner, bool log) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j) mx = std::max(mx, double(x[(o * len + j) * inner + i]));
      for (int64_t j = 0; j < len; ++j) sum += std::exp(double(x[(o * len + j) * inner + i]) - mx);
      for (int64_t j = 0; j < len; ++j) {
        const double v = double(x[(o * len + j) * inner + i]) - mx;
        y[(o * len + j) * inner + i] = static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
  }
  return y;
}

TEST(Softmax, HandComputedRow) {
  OpTester t("Softmax", 13);
  t.input<float>({1, 3}, {1, 2, 3});
  t.output<float>({1, 3}, {0.09003057f, 0.24472847f, 0.66524096f});
  t.run();
  OpTester l("LogSoftmax", 13);
  l.input<float>({1, 3}, {1, 2, 3});
  l.output<float>({1, 3}, {-2.40760596f, -1.40760596f, -0.40760596f});
  l.run();
}

TEST(Softmax, LargeValuesDoNotOverflow) {
  OpTester t("Softmax", 13);
  t.input<float>({2}, {1000, 1000});
  t.output<float>({2}, {0.5f, 0.5f});
  t.run();
}

TEST(Softmax, Opset13NormalizesOneAxis) {
  // Shape (2, 3, 4), axis 1: each (n, :, w) column sums to one.
  const std::vector<float> x = random_floats(24, 5, -3, 3);
  for (const bool log : {false, true}) {
    OpTester t(log ? "LogSoftmax" : "Softmax", 13);
    t.attr("axis", int64_t{1});
    t.input<float>({2, 3, 4}, x);
    t.output<float>({2, 3, 4}, oracle(x, 2, 3, 4, log));
    t.run();
  }
  OpTester d("Softmax", 13);  // default axis -1
  d.input<float>({2, 3, 4}, x);
  d.output<float>({2, 3, 4}, oracle(x, 6, 4, 1, false));
  d.run();
}

TEST(Softmax, Opset11CoercesTo2D) {
  // Before opset 13, axis 1 of a (2, 3, 4) input normalizes over the flattened 3 * 4 elements.
  const std::vector<float> x = random_floats(24, 6, -3, 3);
  for (int64_t opset : {1, 11}) {
    for (const bool log : {false, true}) {
      OpTester t(log ? "LogSoftmax" : "Softmax", opset);
      t.input<float>({2, 3, 4}, x);  // default axis 1
      t.output<float>({2, 3, 4}, oracle(x, 2, 12, 1, log));
      t.run();
    }
  }
  OpTester a2("Softmax", 11);
  a2.attr("axis", int64_t{2});
  a2.input<float>({2, 3, 4}, x);
  a2.output<float>({2, 3, 4}, oracle(x, 6, 4, 1, false));
  a2.run();
  OpTester neg("Softmax", 11);
  neg.attr("axis", int64_t{-2});
  neg.input<float>({2, 3, 4}, x);
  neg.output<float>({2, 3, 4}, oracle(x, 2, 12, 1, false));
  neg.run();
}

TEST(Softmax, SameAxisDiffersBetweenOpset11And13) {
  const std::vector<float> x = {1, 2, 3, 4};
  OpTester t11("Softmax", 11);
  t11.attr("axis", int64_t{0});
  t11.input<float>({2, 2}, x);
  t11.output<float>({2, 2}, oracle(x, 1, 4, 1, false));  // all four elements together
  t11.run();
  OpTester t13("Softmax", 13);
  t13.attr("axis", int64_t{0});
  t13.input<float>({2, 2}, x);
  t13.output<float>({2, 2}, oracle(x, 1, 2, 2, false));  // per column
  t13.run();
}

TEST(Softmax, DoubleAndNaN) {
  OpTester d("Softmax", 13);
  d.input<double>({2}, {0.0, std::log(3.0)});
  d.output<double>({2}, {0.25, 0.75});
  d.run();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester n("Softmax", 13);
  n.input<float>({2, 2}, {1, nan, 1, 1});
  n.output<float>({2, 2}, {nan, nan, 0.5f, 0.5f});
  n.run();
}

TEST(Softmax, EmptyInput) {
  OpTester t("Softmax", 13);
  t.input<float>({0, 5}, {});
  t.output<float>({0, 5}, {});
  t.run();
}

TEST(Softmax, AxisOutOfRangeFails) {
  OpTester t("Softmax", 13);
  t.attr("axis", int64_t{2});
  t.input<float>({2, 2}, {1, 2, 3, 4});
  t.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester s("LogSoftmax", 11);
  s.attr("axis", int64_t{-3});
  s.input<float>({2, 2}, {1, 2, 3, 4});
  s.expect_failure(StatusCode::kInvalidModel, "axis -3 is not in valid range [-2, 1]");
}

TEST(Softmax, RejectsIntegers) {
  OpTester t("Softmax", 13);
  t.input<int32_t>({2}, {1, 2});
  t.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(Hardmax, OneHotOfTheFirstMaximum) {
  OpTester t("Hardmax", 13);
  t.input<float>({2, 4}, {3, 0, 1, 3, -1, -5, 7, 2});
  t.output<float>({2, 4}, {1, 0, 0, 0, 0, 0, 1, 0});
  t.run();
  OpTester a("Hardmax", 13);
  a.attr("axis", int64_t{0});
  a.input<double>({2, 2}, {1, 5, 2, 5});
  a.output<double>({2, 2}, {0, 1, 1, 0});
  a.run();
}

TEST(Hardmax, Opset11CoercesTo2DAndNaNWins) {
  // axis=1 of (2, 2, 2) flattens to rows of 4 before opset 13.
  OpTester t("Hardmax", 11);
  t.input<float>({2, 2, 2}, {1, 2, 3, 0, 9, 8, 7, 6});
  t.output<float>({2, 2, 2}, {0, 0, 1, 0, 1, 0, 0, 0});
  t.run();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester n("Hardmax", 1);
  n.input<float>({1, 3}, {5, nan, 9});
  n.output<float>({1, 3}, {0, 1, 0});
  n.run();
}

TEST(Hardmax, EmptyAndBadAxis) {
  OpTester e("Hardmax", 13);
  e.input<float>({0, 3}, {});
  e.output<float>({0, 3}, {});
  e.run();
  OpTester b("Hardmax", 13);
  b.attr("axis", int64_t{2});
  b.input<float>({2, 2}, {1, 2, 3, 4});
  b.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
}

// Split across threads, every block is computed as on one thread: the outputs are bit-identical,
// for the last axis (its own loop) and for an inner axis.
TEST(Softmax, ThreadsGiveBitIdenticalOutputs) {
  std::vector<float> x(64 * 300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 8.0f;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {-1, 1}) {
      std::vector<Tensor> runs[2];
      for (int k = 0; k < 2; ++k) {
        OpTester t(op, 13);
        t.attr("axis", axis).input<float>({64, 30, 10}, x).unchecked_output().threads(k == 0 ? 1 : 4);
        runs[k] = t.run();
      }
      ASSERT_EQ(runs[0].size(), 1u);
      ASSERT_EQ(runs[1].size(), 1u);
      const float* a = runs[0][0].data<float>();
      const float* b = runs[1][0].data<float>();
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << op << " " << i;
      }
    }
  }
}

// float32 along the last axis, step by step as softmax.cpp states them: d = x - max in float,
// e = exp(d) rounded once to float (exactly glibc's double exp rounded, over these values), the
// sum of e in double in 8 lanes (element j in lane j % 8, the lanes as ((0+4) + (1+5)) + ((2+6) +
// (3+7)), then the tail), and y = float(double(e) / sum) or float(double(d) - log(sum)). Rows of
// 1003 values take the vector loops and their scalar tails.
TEST(Softmax, Float32LastAxisIsItsStepsBitForBit) {
  const int64_t rows = 5, len = 1003;
  std::vector<float> x(static_cast<size_t>(rows * len));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.731f * static_cast<float>(i)) * 30.0f + 0.01f * static_cast<float>(i % 17);
  }
  for (const bool log : {false, true}) {
    OpTester t(log ? "LogSoftmax" : "Softmax", 13);
    t.input<float>({rows, len}, x).unchecked_output();
    const std::vector<Tensor> out = t.run();
    ASSERT_EQ(out.size(), 1u);
    const float* y = out[0].data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * len;
      float mx = -INFINITY;
      for (int64_t j = 0; j < len; ++j) mx = xr[j] > mx ? xr[j] : mx;
      std::vector<float> e(static_cast<size_t>(len));
      double lane[8] = {};
      for (int64_t j = 0; j < len; ++j) {
        e[static_cast<size_t>(j)] = static_cast<float>(std::exp(static_cast<double>(xr[j] - mx)));
        if (j < len - len % 8) lane[j % 8] += e[static_cast<size_t>(j)];
      }
      double sum = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
      for (int64_t j = len - len % 8; j < len; ++j) sum += e[static_cast<size_t>(j)];
      for (int64_t j = 0; j < len; ++j) {
        const float want = log ? static_cast<float>(static_cast<double>(xr[j] - mx) - std::log(sum))
                               : static_cast<float>(static_cast<double>(e[static_cast<size_t>(j)]) / sum);
        ASSERT_EQ(std::bit_cast<uint32_t>(y[r * len + j]), std::bit_cast<uint32_t>(want))
            << (log ? "LogSoftmax" : "Softmax") << " row " << r << " element " << j;
      }
    }
  }
}

/// Runs a Softmax-13 or LogSoftmax-13 node on `x` marked as dying, as the reference backend marks
/// a tensor nothing reads after the node, and returns the output.
Tensor run_with_dying_input(const char* op, int64_t axis, Tensor x) {
  Node node;
  node.op_type = op;
  node.inputs = {"x"};
  node.outputs = {"y"};
  Attribute a;
  a.name = "axis";
  a.type = AttrType::kInt;
  a.i = axis;
  node.attributes.push_back(a);
  const KernelDef* def = reference_registry().find("", op, 13);
  EXPECT_NE(def, nullptr);
  const Tensor* in[] = {&x};
  std::vector<Tensor> out(1);
  KernelContext ctx(node, 0, 13, std::span<const Tensor* const>(in), std::span<Tensor>(out));
  const char dying[] = {1};
  ctx.set_dying_inputs(dying);
  const Status st = def->fn(ctx);
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(out[0].raw(), x.raw()) << op << ": the output did not take the dying input's buffer";
  return out[0];
}

// Every path reads a row of x before it writes that row of y, so writing into a dying input's
// buffer gives the outputs a separate buffer gets: float32 along the last axis (the pipelined
// rows) and along another, float64, float16.
TEST(Softmax, InPlaceGivesTheSameOutputs) {
  std::vector<float> x(6 * 50 * 7);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(1.37f * static_cast<float>(i)) * 12.0f;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const int64_t axis : {-1, 1}) {
      const Shape shape = {6, 50, 7};
      OpTester t(op, 13);
      t.attr("axis", axis).input<float>(shape, x).unchecked_output();
      const Tensor want = t.run()[0];
      const Tensor got = run_with_dying_input(op, axis, Tensor::from_vector<float>(shape, x));
      for (int64_t i = 0; i < want.numel(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got.data<float>()[i]), std::bit_cast<uint32_t>(want.data<float>()[i]))
            << op << " axis " << axis << " element " << i;
      }
      std::vector<double> xd(x.begin(), x.end());
      OpTester d(op, 13);
      d.attr("axis", axis).input<double>(shape, xd).unchecked_output();
      const Tensor want_d = d.run()[0];
      const Tensor got_d = run_with_dying_input(op, axis, Tensor::from_vector<double>(shape, xd));
      for (int64_t i = 0; i < want_d.numel(); ++i) ASSERT_EQ(got_d.data<double>()[i], want_d.data<double>()[i]);
      OpTester h(op, 13);
      h.attr("axis", axis).input(narrow_tensor<Eigen::half>(shape, x)).unchecked_output();
      const Tensor want_h = h.run()[0];
      const Tensor got_h = run_with_dying_input(op, axis, narrow_tensor<Eigen::half>(shape, x));
      for (int64_t i = 0; i < want_h.numel(); ++i) {
        ASSERT_EQ(Eigen::numext::bit_cast<uint16_t>(got_h.data<Eigen::half>()[i]),
                  Eigen::numext::bit_cast<uint16_t>(want_h.data<Eigen::half>()[i]));
      }
    }
  }
}

// float16 and bfloat16 take the steps of ONNX's reference, numpy on arrays of the element type:
// x - max, exp, sum and divide each round. The values are numpy 1.24's.
TEST(Softmax, HalfTypesRoundEachStepAsNumpy) {
  const std::vector<float> x = {0.1f, 0.2f, 0.3f, -3, 10, 10.5f, -1, 9};
  OpTester t("Softmax", 13);
  t.input(narrow_tensor<Eigen::half>({2, 4}, x));
  t.output(narrow_tensor<Eigen::half>({2, 4}, {0.296630859375f, 0.327880859375f, 0.3623046875f, 0.01335906982421875f,
                                               0.331298828125f, 0.54638671875f, 5.543231964111328e-06f,
                                               0.1219482421875f}));
  t.run();
  // LogSoftmax is the log of the rounded softmax (the reference's np.log(Softmax(x))).
  OpTester l("LogSoftmax", 11);
  l.input(narrow_tensor<Eigen::half>({2, 4}, x));
  l.output(narrow_tensor<Eigen::half>({2, 4}, {-1.21484375f, -1.115234375f, -1.015625f, -4.31640625f, -1.1044921875f,
                                               -0.6044921875f, -12.1015625f, -2.103515625f}));
  l.run();
  // Along a non-contiguous axis numpy's float16 sum rounds after each addition.
  OpTester a("Softmax", 13);
  a.attr("axis", int64_t{0});
  a.input(narrow_tensor<Eigen::half>({3, 2}, {0.1f, 2, 0.3f, -3, 0.7f, 2.5f}));
  a.output(narrow_tensor<Eigen::half>({3, 2}, {0.247314453125f, 0.376708984375f, 0.30224609375f,
                                               0.002536773681640625f, 0.45068359375f, 0.62109375f}));
  a.run();
}

// A float16 row of 200 (past numpy's 128-element blocks): numpy sums the exponentials pairwise in
// float32 and rounds once, 74 here; rounding each addition would give 74.3125.
TEST(Softmax, HalfRowSumsPairwiseInFloat32) {
  std::vector<float> x, y;
  const std::vector<float> out = {0.01351165771484375f, 0.00638580322265625f, 0.0030155181884765625f,
                                  0.0014247894287109375f, 0.0006728172302246094f};
  for (int j = 0; j < 200; ++j) {
    x.push_back(-0.75f * static_cast<float>(j % 5));
    y.push_back(out[static_cast<size_t>(j % 5)]);
  }
  OpTester t("Softmax", 13);
  t.input(narrow_tensor<Eigen::half>({1, 200}, x));
  t.output(narrow_tensor<Eigen::half>({1, 200}, y));
  t.run();
}

TEST(Hardmax, HalfTypes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("Hardmax", 13);
  t.input(narrow_tensor<Eigen::half>({2, 3}, {1, 65504, 65504, 2, nan, 3}));
  t.output(narrow_tensor<Eigen::half>({2, 3}, {0, 1, 0, 0, 1, 0}));
  t.run();
}

// bfloat16 (ml_dtypes' loops, which numpy's sum calls once per element) rounds each addition of
// the sum: 2.75 here, where a float32 sum rounded once gives 2.765625 and other quotients.
TEST(Softmax, BFloat16SumRoundsEachAddition) {
  OpTester t("Softmax", 13);
  t.input(narrow_tensor<Eigen::bfloat16>({4}, {0.10009765625f, 0.2001953125f, 0.30078125f, -3}));
  t.output(narrow_tensor<Eigen::bfloat16>({4}, {0.296875f, 0.330078125f, 0.36328125f, 0.01348876953125f}));
  t.run();
}

}  // namespace
}  // namespace vn::ops::testing
