// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Variadic, SingleInputIsACopy) {
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    OpTester t(op, 13);
    t.input<float>({3}, {1, -2, 3});
    t.output<float>({3}, {1, -2, 3});
    t.run();
  }
}

TEST(Variadic, ThreeInputsSameShape) {
  const std::vector<float> a = {1, 5, -3}, b = {4, 2, -6}, c = {0, 9, -1};
  struct Case {
    const char* op;
    std::vector<float> y;
  };
  const Case cases[] = {
      {"Max", {4, 9, -1}}, {"Min", {0, 2, -6}}, {"Sum", {5, 16, -10}}, {"Mean", {5.0f / 3, 16.0f / 3, -10.0f / 3}}};
  for (const Case& k : cases) {
    for (int64_t opset : {6, 8, 13}) {
      OpTester t(k.op, opset);
      t.input<float>({3}, a).input<float>({3}, b).input<float>({3}, c);
      t.output<float>({3}, k.y);
      t.run();
    }
  }
}

TEST(Variadic, BroadcastFromOpset8) {
  OpTester t("Sum", 8);
  t.input<float>({2, 1}, {1, 2}).input<float>({3}, {10, 20, 30}).input<float>({}, {100});
  t.output<float>({2, 3}, {111, 121, 131, 112, 122, 132});
  t.run();
  OpTester m("Max", 12);
  m.input<float>({1, 3}, {1, 5, 3}).input<float>({2, 1}, {2, 4});
  m.output<float>({2, 3}, {2, 5, 3, 4, 5, 4});
  m.run();
  OpTester mean("Mean", 13);
  mean.input<double>({2}, {1, 2}).input<double>({2, 2}, {3, 4, 5, 6});
  mean.output<double>({2, 2}, {2, 3, 3, 4});
  mean.run();
}

TEST(Variadic, Opset6RequiresEqualShapes) {
  OpTester t("Sum", 6);
  t.input<float>({2}, {1, 2}).input<float>({1}, {1});
  t.expect_failure(StatusCode::kShapeMismatch, "before opset 8 all inputs must have the same shape");
}

TEST(Variadic, IncompatibleBroadcastFails) {
  OpTester t("Min", 13);
  t.input<float>({2}, {1, 2}).input<float>({3}, {1, 2, 3});
  t.expect_failure(StatusCode::kShapeMismatch, "cannot be broadcast together");
}

TEST(Variadic, MaxMinPropagateNaN) {
  OpTester t("Max", 13);
  t.input<float>({3}, {kNaN, 1, 2}).input<float>({3}, {0, kNaN, 1});
  t.output<float>({3}, {kNaN, kNaN, 2});
  t.run();
  OpTester m("Min", 13);
  m.input<float>({2}, {kNaN, 1}).input<float>({2}, {0, 0});
  m.output<float>({2}, {kNaN, 0});
  m.run();
}

TEST(Variadic, IntegerMaxMinAtOpset12) {
  OpTester t("Max", 12);
  t.input<int64_t>({3}, {1, -7, 3}).input<int64_t>({3}, {0, -2, 9});
  t.output<int64_t>({3}, {1, -2, 9});
  t.run();
  OpTester m("Min", 13);
  m.input<uint8_t>({2}, {200, 3}).input<uint8_t>({}, {100});
  m.output<uint8_t>({2}, {100, 3});
  m.run();
}

TEST(Variadic, MixedDTypesFail) {
  OpTester t("Max", 13);
  t.input<float>({1}, {1}).input<double>({1}, {1});
  t.expect_failure(StatusCode::kInvalidModel, "input 1 is float64 but input 0 is float32");
}

TEST(Variadic, SumRejectsIntegers) {
  OpTester t("Sum", 13);
  t.input<int32_t>({1}, {1}).input<int32_t>({1}, {1});
  t.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(Variadic, Float16MaxMinSumMean) {
  auto half = [](std::vector<float> v) {
    std::vector<Eigen::half> h;
    for (float f : v) h.push_back(Eigen::half(f));
    return Tensor::from_vector<Eigen::half>({static_cast<int64_t>(h.size())}, h);
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTester mx("Max", 13);
  mx.input(half({1, 5, -2, nan})).input(half({3, 4, -1, 0}));
  mx.output(half({3, 5, -1, nan}));
  mx.run();
  OpTester mn("Min", 8);
  mn.input(half({1, 5, -2, 0})).input(half({3, 4, -1, nan}));
  mn.output(half({1, 4, -2, nan}));
  mn.run();
  OpTester sum("Sum", 13);
  sum.input(half({1, 0.5f})).input(half({2, 0.25f})).input(half({4, 0.125f}));
  sum.output(half({7, 0.875f}));
  sum.run();
  OpTester mean("Mean", 13);
  mean.input(half({1, 3})).input(half({2, 5}));
  mean.output(half({1.5f, 4}));
  mean.run();
}

}  // namespace
}  // namespace vn::ops::testing
