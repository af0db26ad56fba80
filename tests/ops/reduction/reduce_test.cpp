// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/half_tensor.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// x has shape (2, 3, 2): x[i][j][k] = 6i + 2j + k + 1.
const std::vector<float> kX = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

TEST(Reduce, SumMeanMaxMinOverOneAxis) {
  struct Case {
    const char* op;
    std::vector<float> y;
  };
  const Case cases[] = {{"ReduceSum", {9, 12, 27, 30}},
                        {"ReduceMean", {3, 4, 9, 10}},
                        {"ReduceMax", {5, 6, 11, 12}},
                        {"ReduceMin", {1, 2, 7, 8}}};
  for (const Case& c : cases) {
    for (int64_t opset : {1, 11}) {
      OpTester t(c.op, opset);
      t.attr("axes", Shape{1});
      t.input<float>({2, 3, 2}, kX);
      t.output<float>({2, 1, 2}, c.y);
      t.run();
    }
  }
}

TEST(Reduce, KeepdimsZeroAndNegativeAxes) {
  OpTester t("ReduceMean", 13);
  t.attr("axes", Shape{-1, 0}).attr("keepdims", int64_t{0});
  t.input<float>({2, 3, 2}, kX);
  t.output<float>({3}, {4.5f, 6.5f, 8.5f});
  t.run();
  OpTester m("ReduceMax", 12);
  m.attr("axes", Shape{2}).attr("keepdims", int64_t{0});
  m.input<int8_t>({2, 3, 2}, {1, -2, 3, -4, 5, -6, -7, 8, -9, 10, -11, 12});
  m.output<int8_t>({2, 3}, {1, 3, 5, 8, 10, 12});
  m.run();
}

TEST(Reduce, NoAxesReducesEverything) {
  OpTester t("ReduceSum", 11);
  t.input<float>({2, 3, 2}, kX);
  t.output<float>({1, 1, 1}, {78});
  t.run();
  OpTester k("ReduceMin", 13);
  k.attr("keepdims", int64_t{0});
  k.input<float>({2, 3, 2}, kX);
  k.output<float>({}, {1});
  k.run();
}

TEST(Reduce, ReduceSum13AxesInput) {
  OpTester t("ReduceSum", 13);
  t.input<float>({2, 3, 2}, kX).input<int64_t>({2}, {0, 2});
  t.output<float>({1, 3, 1}, {18, 26, 34});
  t.run();
  OpTester all("ReduceSum", 13);
  all.input<float>({2, 3, 2}, kX);
  all.attr("keepdims", int64_t{0});
  all.output<float>({}, {78});
  all.run();
  OpTester empty("ReduceSum", 13);
  empty.input<float>({2, 3, 2}, kX).input<int64_t>({0}, {});
  empty.output<float>({1, 1, 1}, {78});
  empty.run();
}

TEST(Reduce, NoopWithEmptyAxes) {
  OpTester t("ReduceSum", 13);
  t.attr("noop_with_empty_axes", int64_t{1});
  t.input<float>({2, 3, 2}, kX).input<int64_t>({0}, {});
  t.output<float>({2, 3, 2}, kX);
  t.run();
  OpTester o("ReduceSum", 13);
  o.attr("noop_with_empty_axes", int64_t{1});
  o.input<float>({2, 3, 2}, kX);
  o.output<float>({2, 3, 2}, kX);
  o.run();
}

TEST(Reduce, IntegerSumAndMean) {
  OpTester s("ReduceSum", 13);
  s.input<int64_t>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1}, {1});
  s.output<int64_t>({2, 1}, {3, 7});
  s.run();
  OpTester m("ReduceMean", 13);
  m.attr("axes", Shape{0});
  m.input<int32_t>({2, 2}, {-3, 2, 0, 5});
  m.output<int32_t>({1, 2}, {-1, 3});
  m.run();
}

TEST(Reduce, Float32SumAccumulatesInDouble) {
  // 1e8 + 1 + ... + 1 (16 ones) in float32 order would stay 1e8; the exact sum is 100000016.
  std::vector<float> x(17, 1.0f);
  x[0] = 1e8f;
  OpTester t("ReduceSum", 13);
  t.input<float>({17}, x);
  t.output<float>({1}, {100000016.0f});
  t.tolerance(0, 0);
  t.run();
}

TEST(Reduce, AgainstOracleOnRank4) {
  const std::vector<float> x = random_floats(2 * 3 * 4 * 5, 9);
  std::vector<double> sum(2 * 4, 0.0), mx(2 * 4, -INFINITY);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d) {
          const double v = x[((a * 3 + b) * 4 + c) * 5 + d];
          sum[a * 4 + c] += v;
          mx[a * 4 + c] = std::max(mx[a * 4 + c], v);
        }
  std::vector<float> s, m, mean;
  for (size_t i = 0; i < sum.size(); ++i) {
    s.push_back(static_cast<float>(sum[i]));
    mean.push_back(static_cast<float>(sum[i] / 15.0));
    m.push_back(static_cast<float>(mx[i]));
  }
  OpTester ts("ReduceSum", 13);
  ts.input<float>({2, 3, 4, 5}, x).input<int64_t>({2}, {1, 3});
  ts.attr("keepdims", int64_t{0});
  ts.output<float>({2, 4}, s);
  ts.run();
  OpTester tm("ReduceMean", 13);
  tm.attr("axes", Shape{3, 1});
  tm.input<float>({2, 3, 4, 5}, x);
  tm.output<float>({2, 1, 4, 1}, mean);
  tm.run();
  OpTester tx("ReduceMax", 13);
  tx.attr("axes", Shape{1, 3}).attr("keepdims", int64_t{0});
  tx.input<float>({2, 3, 4, 5}, x);
  tx.output<float>({2, 4}, m);
  tx.run();
}

TEST(Reduce, EmptyReductions) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTester s("ReduceSum", 13);
  s.input<float>({2, 0}, {}).input<int64_t>({1}, {1});
  s.output<float>({2, 1}, {0, 0});
  s.run();
  OpTester m("ReduceMax", 13);
  m.attr("axes", Shape{1});
  m.input<float>({2, 0}, {});
  m.output<float>({2, 1}, {-inf, -inf});
  m.run();
  OpTester n("ReduceMean", 13);
  n.attr("axes", Shape{1}).attr("keepdims", int64_t{0});
  n.input<float>({1, 0}, {});
  n.output<float>({1}, {std::numeric_limits<float>::quiet_NaN()});
  n.run();
  OpTester e("ReduceMin", 13);
  e.attr("axes", Shape{0});
  e.input<float>({3, 0}, {});
  e.output<float>({1, 0}, {});
  e.run();
  OpTester im("ReduceMean", 13);
  im.attr("axes", Shape{0});
  im.input<int32_t>({0}, {});
  im.expect_failure(StatusCode::kNumericFailure, "the mean of an empty set has no integer value");
}

TEST(Reduce, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester t("ReduceMax", 13);
  t.attr("axes", Shape{1});
  t.input<float>({2, 3}, {1, nan, 3, 4, 5, 6});
  t.output<float>({2, 1}, {nan, 6});
  t.run();
  OpTester m("ReduceMin", 13);
  m.attr("axes", Shape{0});
  m.input<float>({2, 2}, {nan, 1, 0, 2});
  m.output<float>({1, 2}, {nan, 1});
  m.run();
}

TEST(Reduce, ErrorsNameTheProblem) {
  OpTester r("ReduceSum", 13);
  r.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({1}, {2});
  r.expect_failure(StatusCode::kInvalidModel, "axis 2 is not in valid range [-2, 1]");
  OpTester d("ReduceMean", 13);
  d.attr("axes", Shape{0, -2});
  d.input<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  d.expect_failure(StatusCode::kInvalidModel, "axis -2 is repeated in axes");
  OpTester b("ReduceMax", 13);
  b.input<bool>({1}, {true});
  b.expect_failure(StatusCode::kUnsupportedDType, "bool");
}

TEST(Reduce, ProdL1L2SumSquareLogSumLogSumExpAgainstOracle) {
  const std::vector<float> x = random_floats(2 * 3 * 4, 21, -2.0f, 2.0f);
  struct Case {
    const char* op;
    double (*init)();
    double (*step)(double acc, double v);
    double (*finish)(double acc);
  };
  const Case cases[] = {
      {"ReduceProd", [] { return 1.0; }, [](double a, double v) { return a * v; }, [](double a) { return a; }},
      {"ReduceL1", [] { return 0.0; }, [](double a, double v) { return a + std::abs(v); }, [](double a) { return a; }},
      {"ReduceL2", [] { return 0.0; }, [](double a, double v) { return a + v * v; },
       [](double a) { return std::sqrt(a); }},
      {"ReduceSumSquare", [] { return 0.0; }, [](double a, double v) { return a + v * v; }, [](double a) { return a; }},
      {"ReduceLogSum", [] { return 0.0; }, [](double a, double v) { return a + std::abs(v); },
       [](double a) { return std::log(a); }},
      {"ReduceLogSumExp", [] { return 0.0; }, [](double a, double v) { return a + std::exp(v); },
       [](double a) { return std::log(a); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    // LogSum of |x| keeps the argument positive; the kernel sees the same |x| values.
    std::vector<float> in = x;
    if (std::string(c.op) == "ReduceLogSum") {
      for (float& v : in) v = std::abs(v);
    }
    // Reduce axes 0 and 2 of (2, 3, 4) with keepdims: output (1, 3, 1).
    std::vector<float> y;
    for (int j = 0; j < 3; ++j) {
      double acc = c.init();
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k) acc = c.step(acc, in[static_cast<size_t>((i * 3 + j) * 4 + k)]);
      y.push_back(static_cast<float>(c.finish(acc)));
    }
    for (int64_t opset : {1, 11, 13}) {
      OpTester t(c.op, opset);
      t.attr("axes", Shape{0, -1});
      t.input<float>({2, 3, 4}, in);
      t.output<float>({1, 3, 1}, y);
      t.run();
    }
  }
}

TEST(Reduce, LogSumExpIsStableForLargeInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTester t("ReduceLogSumExp", 13);
  t.attr("axes", Shape{1}).attr("keepdims", int64_t{0});
  t.input<float>({4, 2}, {1000, 1000, -1000, -1000, inf, 1, -inf, -inf});
  t.output<float>({4}, {1000 + std::log(2.0f), -1000 + std::log(2.0f), inf, -inf});
  t.run();
}

TEST(Reduce, NewReductionsOnIntegersAndEmptySets) {
  OpTester p("ReduceProd", 13);
  p.attr("keepdims", int64_t{0});
  p.input<int32_t>({4}, {-2, 3, 65536, 65536});
  p.output<int32_t>({}, {0});  // -6 * 2^32 wraps to 0 modulo 2^32
  p.run();
  OpTester l1("ReduceL1", 13);
  l1.attr("axes", Shape{1});
  l1.input<int64_t>({2, 2}, {-3, 4, 5, -6});
  l1.output<int64_t>({2, 1}, {7, 11});
  l1.run();
  OpTester l2("ReduceL2", 13);
  l2.input<int32_t>({2}, {3, -4});
  l2.output<int32_t>({1}, {5});
  l2.run();
  const float inf = std::numeric_limits<float>::infinity();
  const struct {
    const char* op;
    float value;
  } empty[] = {{"ReduceProd", 1},      {"ReduceL1", 0},        {"ReduceL2", 0},
               {"ReduceSumSquare", 0}, {"ReduceLogSum", -inf}, {"ReduceLogSumExp", -inf}};
  for (const auto& e : empty) {
    OpTester t(e.op, 13);
    t.attr("axes", Shape{1});
    t.input<float>({2, 0}, {});
    t.output<float>({2, 1}, {e.value, e.value});
    t.run();
  }
}

TEST(Reduce, NewReductionsRejectBoolAndBadAxes) {
  for (const char* op : {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    OpTester b(op, 13);
    b.input<bool>({1}, {true});
    b.expect_failure(StatusCode::kUnsupportedDType, "bool");
    OpTester a(op, 11);
    a.attr("axes", Shape{3});
    a.input<float>({2, 2}, {1, 2, 3, 4});
    a.expect_failure(StatusCode::kInvalidModel, "axis 3 is not in valid range [-2, 1]");
  }
}

TEST(ArgMaxMin, AxisKeepdimsAndSelectLastIndex) {
  // x (2, 3) = [[2, 7, 7], [5, 1, 5]]
  const std::vector<float> x = {2, 7, 7, 5, 1, 5};
  OpTester a("ArgMax", 13);
  a.attr("axis", int64_t{1});
  a.input<float>({2, 3}, x);
  a.output<int64_t>({2, 1}, {1, 0});
  a.run();
  OpTester last("ArgMax", 12);
  last.attr("axis", int64_t{-1}).attr("select_last_index", int64_t{1}).attr("keepdims", int64_t{0});
  last.input<float>({2, 3}, x);
  last.output<int64_t>({2}, {2, 2});
  last.run();
  OpTester mn("ArgMin", 11);
  mn.input<float>({2, 3}, x);  // default axis 0
  mn.output<int64_t>({1, 3}, {0, 1, 1});
  mn.run();
  OpTester mi("ArgMin", 1);
  mi.attr("axis", int64_t{1}).attr("keepdims", int64_t{0});
  mi.input<int32_t>({2, 3}, {4, -9, -9, 0, 0, 0});
  mi.output<int64_t>({2}, {1, 0});
  mi.run();
}

TEST(ArgMaxMin, NaNWinsAndErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester a("ArgMax", 13);
  a.attr("keepdims", int64_t{0});
  a.input<float>({4}, {1, nan, 9, nan});
  a.output<int64_t>({}, {1});
  a.run();
  OpTester m("ArgMin", 13);
  m.attr("keepdims", int64_t{0}).attr("select_last_index", int64_t{1});
  m.input<float>({4}, {1, nan, -9, nan});
  m.output<int64_t>({}, {3});
  m.run();
  OpTester e("ArgMax", 13);
  e.attr("axis", int64_t{1});
  e.input<float>({2, 0}, {});
  e.expect_failure(StatusCode::kShapeMismatch, "cannot take ArgMax over the empty axis 1 of (2, 0)");
  OpTester r("ArgMin", 13);
  r.attr("axis", int64_t{3});
  r.input<float>({2, 2}, {1, 2, 3, 4});
  r.expect_failure(StatusCode::kInvalidModel, "axis 3 is not in valid range [-2, 1]");
}

// float16 and bfloat16 sums accumulate in double and round once: column 0 is 1 + 2^-11 + 2^-11
// (1.0009765625; numpy's float16 sum down axis 0 rounds each addition and gets 1) and column 1
// 60000 + 60000 - 60000 (inf in numpy's float16 partial sums). The mean's sum, 125504, is past
// float16's range too. Max and Min are exact and propagate NaN; an empty Min is +inf.
TEST(Reduce, HalfTypesAccumulateInDoubleAndRoundOnce) {
  const float u = std::ldexp(1.0f, -11);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  OpTester s("ReduceSum", 13);
  s.input(narrow_tensor<Eigen::half>({3, 2}, {1, 60000, u, 60000, u, -60000})).input<int64_t>({1}, {0});
  s.output(narrow_tensor<Eigen::half>({1, 2}, {1 + 2 * u, 60000}));
  s.run();
  OpTester m("ReduceMean", 18);
  m.attr("keepdims", int64_t{0});
  m.input(narrow_tensor<Eigen::half>({4}, {60000, 60000, -60000, 65504}));
  m.output(narrow_tensor<Eigen::half>({}, {31376}));
  m.run();
  // 11 + log 2 = 11.693..., 11.6953125 in float16; exp(11) + exp(11) is past float16's range.
  OpTester e("ReduceLogSumExp", 18);
  e.input(narrow_tensor<Eigen::half>({2}, {11, 11}));
  e.output(narrow_tensor<Eigen::half>({1}, {11.6953125f}));
  e.run();
  OpTester x("ReduceMax", 20);
  x.input(narrow_tensor<Eigen::bfloat16>({2, 2}, {1, nan, -3, -2})).input<int64_t>({1}, {1});
  x.output(narrow_tensor<Eigen::bfloat16>({2, 1}, {nan, -2}));
  x.run();
  OpTester n("ReduceMin", 18);
  n.input(narrow_tensor<Eigen::half>({2, 0}, {})).input<int64_t>({1}, {1});
  n.output(narrow_tensor<Eigen::half>({2, 1}, {inf, inf}));
  n.run();
  OpTester a("ArgMax", 13);
  a.attr("axis", int64_t{0});
  a.input(narrow_tensor<Eigen::half>({3}, {1, nan, 3}));
  a.output<int64_t>({1}, {1});
  a.run();
}

}  // namespace
}  // namespace vn::ops::testing
