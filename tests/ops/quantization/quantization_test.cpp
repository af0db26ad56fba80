// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/ir/dtype.h"

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- QuantizeLinear ----------------------------------------------------------------------------

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  for (int64_t opset : {10, 13}) {
    OpTester t("QuantizeLinear", opset);
    t.input<float>({6}, {0, 2, 3, 1000, -254, -1000}).input<float>({}, {2}).input<uint8_t>({}, {128});
    t.output<uint8_t>({6}, {128, 129, 130, 255, 1, 0});  // 3 / 2 = 1.5 rounds to 2
    t.run();
  }
  OpTester s("QuantizeLinear", 13);
  s.input<float>({4}, {5, 7, -5, -300}).input<float>({}, {2}).input<int8_t>({}, {0});
  s.output<int8_t>({4}, {2, 4, -2, -128});  // 2.5 -> 2, 3.5 -> 4, -2.5 -> -2
  s.run();
  OpTester d("QuantizeLinear", 13);
  d.input<int32_t>({2}, {-3, 300}).input<float>({}, {1});
  d.output<uint8_t>({2}, {0, 255});  // an omitted zero point means uint8 0
  d.run();
}

TEST(QuantizeLinear, PerAxis) {
  OpTester t("QuantizeLinear", 13);
  t.input<float>({1, 3, 2}, {-1, 2, 4, 6, 8, 9}).input<float>({3}, {1, 2, 4}).input<uint8_t>({3}, {0, 10, 20});
  t.output<uint8_t>({1, 3, 2}, {0, 2, 12, 13, 22, 22});
  t.run();
  OpTester last("QuantizeLinear", 13);
  last.attr("axis", int64_t{-1});
  last.input<float>({2, 2}, {1, 1, 2, 2}).input<float>({2}, {1, 0.5f}).input<int8_t>({2}, {0, -1});
  last.output<int8_t>({2, 2}, {1, 1, 2, 3});
  last.run();
}

TEST(QuantizeLinear, ErrorsNameTheProblem) {
  OpTester v10("QuantizeLinear", 10);
  v10.input<float>({1, 3}, {1, 2, 3}).input<float>({3}, {1, 1, 1}).input<uint8_t>({3}, {0, 0, 0});
  v10.expect_failure(StatusCode::kShapeMismatch, "scale must be a scalar, got shape (3,)");
  OpTester n("QuantizeLinear", 13);
  n.input<float>({1, 3}, {1, 2, 3}).input<float>({2}, {1, 1});
  n.expect_failure(StatusCode::kShapeMismatch, "scale has 2 entries but axis 1 of the input (1, 3) has 3");
  OpTester z("QuantizeLinear", 13);
  z.input<float>({1}, {1}).input<float>({}, {1}).input<int32_t>({}, {0});
  z.expect_failure(StatusCode::kUnsupportedDType, "input of type int32 is not supported");
}

Tensor narrow(DType dtype, Shape shape, const std::vector<uint8_t>& codes) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < codes.size(); ++i) static_cast<uint8_t*>(t.mutable_raw())[i] = codes[i];
  return t;
}

TEST(QuantizeLinear, BlockedAlongAnAxis) {
  // x (2, 4), blocks of 2 along axis 1: scale and zero point (2, 2).
  OpTester t("QuantizeLinear", 21);
  t.attr("axis", int64_t{1}).attr("block_size", int64_t{2});
  t.input<float>({2, 4}, {2, 4, 30, 50, -2, -5, 9, 10});
  t.input<float>({2, 2}, {2, 10, 1, 3});
  t.input<int8_t>({2, 2}, {0, 1, -1, 0});
  t.output<int8_t>({2, 4}, {1, 2, 4, 6, -3, -6, 3, 3});
  t.run();
  OpTester bad("QuantizeLinear", 21);
  bad.attr("axis", int64_t{1}).attr("block_size", int64_t{3});
  bad.input<float>({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0}).input<float>({2, 1}, {1, 1});
  bad.expect_failure(StatusCode::kShapeMismatch, "dimension 1 must be 2");
}

TEST(QuantizeLinear, NarrowOutputsSaturateAsTheirTypes) {
  // int4 clamps to [-8, 7]; output_dtype picks the type when there is no zero point.
  OpTester i4("QuantizeLinear", 21);
  i4.attr("output_dtype", static_cast<int64_t>(dtype_to_onnx(DType::kInt4)));
  i4.input<float>({4}, {-20, 2.5, 3.5, 20}).input<float>({}, {1});
  i4.output(narrow(DType::kInt4, {4}, {0xF8, 0x02, 0x04, 0x07}));
  i4.run();
  // float8: x / scale cast with saturate (default on, off by attribute).
  for (int64_t saturate : {1, 0}) {
    OpTester f8("QuantizeLinear", 19);
    f8.attr("saturate", saturate);
    f8.input<float>({2}, {1.0f, 1e6f}).input<float>({}, {0.5f});
    f8.input(narrow(DType::kFloat8E4M3FN, {}, {0}));
    f8.output(narrow(DType::kFloat8E4M3FN, {2}, {0x40, static_cast<uint8_t>(saturate ? 0x7E : 0x7F)}));
    f8.run();
  }
  OpTester mismatch("QuantizeLinear", 21);
  mismatch.attr("output_dtype", static_cast<int64_t>(dtype_to_onnx(DType::kInt4)));
  mismatch.input<float>({1}, {1}).input<float>({}, {1}).input<uint8_t>({}, {0});
  mismatch.expect_failure(StatusCode::kInvalidModel, "output_dtype int4 differs from the zero point's type uint8");
}

TEST(DequantizeLinear, NarrowInputsBlocksAndOutputDtype) {
  OpTester i4("DequantizeLinear", 21);
  i4.attr("axis", int64_t{0});
  i4.input(narrow(DType::kInt4, {2}, {0xF8, 0x07})).input<float>({2}, {0.5f, 2.0f});
  i4.input(narrow(DType::kInt4, {2}, {0x01, 0xFF}));
  i4.output<float>({2}, {-4.5f, 16.0f});
  i4.run();
  OpTester blocked("DequantizeLinear", 23);
  blocked.attr("axis", int64_t{1}).attr("block_size", int64_t{2});
  blocked.attr("output_dtype", static_cast<int64_t>(dtype_to_onnx(DType::kFloat16)));
  blocked.input<uint8_t>({1, 3}, {10, 20, 30}).input<float>({1, 2}, {0.5f, 2.0f});
  blocked.output<Eigen::half>({1, 3}, {Eigen::half(5.0f), Eigen::half(10.0f), Eigen::half(60.0f)});
  blocked.run();
  OpTester f8("DequantizeLinear", 19);
  f8.input(narrow(DType::kFloat8E5M2, {2}, {0x3C, 0xC0})).input<float>({}, {2.0f});
  f8.output<float>({2}, {2.0f, -4.0f});
  f8.run();
}

// ---- DequantizeLinear --------------------------------------------------------------------------

TEST(DequantizeLinear, PerTensorAndPerAxis) {
  for (int64_t opset : {10, 13}) {
    OpTester t("DequantizeLinear", opset);
    t.input<uint8_t>({4}, {0, 3, 128, 255}).input<float>({}, {2}).input<uint8_t>({}, {128});
    t.output<float>({4}, {-256, -250, 0, 254});
    t.run();
  }
  OpTester a("DequantizeLinear", 13);
  a.attr("axis", int64_t{0});
  a.input<int8_t>({2, 2}, {-1, 1, 2, 3}).input<float>({2}, {0.5f, 2}).input<int8_t>({2}, {0, 1});
  a.output<float>({2, 2}, {-0.5f, 0.5f, 2, 4});
  a.run();
  OpTester i("DequantizeLinear", 13);
  i.input<int32_t>({2}, {-3, 7}).input<float>({}, {0.5f});
  i.output<float>({2}, {-1.5f, 3.5f});
  i.run();
}

TEST(DequantizeLinear, ErrorsNameTheProblem) {
  OpTester t("DequantizeLinear", 13);
  t.input<uint8_t>({1}, {1}).input<float>({}, {1}).input<int8_t>({}, {0});
  t.expect_failure(StatusCode::kInvalidModel, "zero point (int8) must have the type of x (uint8)");
  OpTester s("DequantizeLinear", 13);
  s.input<uint8_t>({1}, {1}).input<int32_t>({}, {1});
  s.expect_failure(StatusCode::kInvalidModel, "scale must be a float tensor, got int32");
}

// ---- DynamicQuantizeLinear ---------------------------------------------------------------------

TEST(DynamicQuantizeLinear, DerivesScaleAndZeroPointFromTheRange) {
  // Range [-3, 2]: scale 5 / 255, zero point round(3 / scale) = 153; -2.5 / scale = -127.49999 in
  // float rounds to -127 (the spec divides in float).
  OpTester t("DynamicQuantizeLinear", 11);
  t.input<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
  t.output<uint8_t>({6}, {153, 255, 0, 26, 221, 179});
  t.output<float>({}, {5.0f / 255.0f});
  t.output<uint8_t>({}, {153});
  t.run();
  // All positive: the range still includes 0, so the zero point is 0 (2 / scale is 127.49999 in float).
  OpTester p("DynamicQuantizeLinear", 11);
  p.input<float>({3}, {1, 2, 4});
  p.output<uint8_t>({3}, {64, 127, 255});
  p.output<float>({}, {4.0f / 255.0f});
  p.output<uint8_t>({}, {0});
  p.run();
  OpTester z("DynamicQuantizeLinear", 11);
  z.input<float>({2}, {0, 0});
  z.output<uint8_t>({2}, {0, 0});
  z.output<float>({}, {0});
  z.output<uint8_t>({}, {0});
  z.run();
}

TEST(DynamicQuantizeLinear, ErrorsNameTheProblem) {
  OpTester t("DynamicQuantizeLinear", 11);
  t.input<double>({1}, {1});
  t.output<uint8_t>({1}, {0}).unchecked_output().unchecked_output();
  t.expect_failure(StatusCode::kUnsupportedDType, "input of type float64 is not supported (supported: float32)");
}

// ---- QLinearMatMul -----------------------------------------------------------------------------

TEST(QLinearMatMul, RequantizesTheIntegerProduct) {
  // Centred a = [2, 4], b = [[3, 1], [5, 2]]: products 26 and 10; per-column b scales give
  // multipliers 0.5 * 0.25 / 0.125 = 1 and 2.
  OpTester t("QLinearMatMul", 10);
  t.input<uint8_t>({1, 2}, {130, 132}).input<float>({}, {0.5f}).input<uint8_t>({}, {128});
  t.input<uint8_t>({2, 2}, {131, 129, 133, 130}).input<float>({2}, {0.25f, 0.5f}).input<uint8_t>({2}, {128, 128});
  t.input<float>({}, {0.125f}).input<uint8_t>({}, {10});
  t.output<uint8_t>({1, 2}, {36, 30});
  t.run();
  // Batched a, shared b: 26 * 0.5 * 0.25 = 3.25 rounds to 3, and 3 + 125 saturates int8 at 127.
  OpTester r("QLinearMatMul", 10);
  r.input<int8_t>({2, 1, 2}, {2, 4, 2, 4}).input<float>({}, {0.5f}).input<int8_t>({}, {0});
  r.input<int8_t>({2, 1}, {3, 5}).input<float>({}, {0.25f}).input<int8_t>({}, {0});
  r.input<float>({}, {1}).input<int8_t>({}, {125});
  r.output<int8_t>({2, 1, 1}, {127, 127});
  r.run();
}

TEST(QLinearMatMul, ErrorsNameTheProblem) {
  OpTester t("QLinearMatMul", 10);
  t.input<uint8_t>({1, 2}, {1, 2}).input<float>({}, {1}).input<int8_t>({}, {0});
  t.input<uint8_t>({2, 1}, {1, 2}).input<float>({}, {1}).input<uint8_t>({}, {0});
  t.input<float>({}, {1}).input<uint8_t>({}, {0});
  t.expect_failure(StatusCode::kInvalidModel, "a_zero_point (int8) must have the type of a (uint8)");
  OpTester k("QLinearMatMul", 10);
  k.input<uint8_t>({1, 2}, {1, 2}).input<float>({}, {1}).input<uint8_t>({}, {0});
  k.input<uint8_t>({3, 1}, {1, 2, 3}).input<float>({}, {1}).input<uint8_t>({}, {0});
  k.input<float>({}, {1}).input<uint8_t>({}, {0});
  k.expect_failure(StatusCode::kShapeMismatch, "inner dimensions differ: a (1, 2) vs b (3, 1)");
}

// ---- QLinearConv -------------------------------------------------------------------------------

TEST(QLinearConv, PaddingReadsAsTheZeroPointAndBiasAddsBeforeRequantizing) {
  // x - 10 = 1..9 in a 3x3 map, a 2x2 kernel of ones, pads 1: window sums of the centred map
  // (1 3 5 3 / 5 12 16 9 / 11 24 28 15 / 7 15 17 9), plus bias 100, halved with round half to
  // even, plus 5.
  OpTester t("QLinearConv", 10);
  t.attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  t.input<uint8_t>({1, 1, 3, 3}, {11, 12, 13, 14, 15, 16, 17, 18, 19}).input<float>({}, {1}).input<uint8_t>({}, {10});
  t.input<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1}).input<float>({}, {1}).input<uint8_t>({}, {0});
  t.input<float>({}, {2}).input<uint8_t>({}, {5});
  t.input<int32_t>({1}, {100});
  t.output<uint8_t>({1, 1, 4, 4}, {55, 57, 57, 57, 57, 61, 63, 59, 61, 67, 69, 63, 59, 63, 63, 59});
  t.run();
}

TEST(QLinearConv, PerChannelWeightScales) {
  OpTester t("QLinearConv", 10);
  t.input<int8_t>({1, 1, 1, 2}, {3, 4}).input<float>({}, {1}).input<int8_t>({}, {0});
  t.input<int8_t>({2, 1, 1, 1}, {2, 3}).input<float>({2}, {1, 2}).input<int8_t>({2}, {0, 0});
  t.input<float>({}, {1}).input<int8_t>({}, {0});
  t.output<int8_t>({1, 2, 1, 2}, {6, 8, 18, 24});
  t.run();
}

TEST(QLinearConv, ErrorsNameTheProblem) {
  OpTester b("QLinearConv", 10);
  b.input<uint8_t>({1, 1, 1, 1}, {1}).input<float>({}, {1}).input<uint8_t>({}, {0});
  b.input<uint8_t>({1, 1, 1, 1}, {1}).input<float>({}, {1}).input<uint8_t>({}, {0});
  b.input<float>({}, {1}).input<uint8_t>({}, {0});
  b.input<int32_t>({2}, {0, 0});
  b.expect_failure(StatusCode::kShapeMismatch, "B must be a 1-D int32 tensor of 1 elements, got int32 (2,)");
  OpTester w("QLinearConv", 10);
  w.input<uint8_t>({1, 1, 1, 1}, {1}).input<float>({}, {1}).input<uint8_t>({}, {0});
  w.input<uint8_t>({2, 1, 1, 1}, {1, 1}).input<float>({3}, {1, 1, 1}).input<uint8_t>({3}, {0, 0, 0});
  w.input<float>({}, {1}).input<uint8_t>({}, {0});
  w.expect_failure(StatusCode::kShapeMismatch, "w_scale (3,) and w_zero_point (3,) must both hold 1 or 2 value(s)");
}

TEST(QLinearMatMul, Version21TakesFloat16Scales) {
  // The first case of RequantizesTheIntegerProduct with float16 scales (all exact in float16).
  using half = Eigen::half;
  OpTester t("QLinearMatMul", 21);
  t.input<uint8_t>({1, 2}, {130, 132}).input<half>({}, {half(0.5f)}).input<uint8_t>({}, {128});
  t.input<uint8_t>({2, 2}, {131, 129, 133, 130}).input<half>({2}, {half(0.25f), half(0.5f)});
  t.input<uint8_t>({2}, {128, 128}).input<half>({}, {half(0.125f)}).input<uint8_t>({}, {10});
  t.output<uint8_t>({1, 2}, {36, 30});
  t.run();
  OpTester m("QLinearMatMul", 21);
  m.input<uint8_t>({1, 1}, {1}).input<half>({}, {half(1.0f)}).input<uint8_t>({}, {0});
  m.input<uint8_t>({1, 1}, {1}).input<float>({}, {1.0f}).input<uint8_t>({}, {0});
  m.input<half>({}, {half(1.0f)}).input<uint8_t>({}, {0});
  m.expect_failure(StatusCode::kInvalidModel, "b_scale must be float16, got float32");
  OpTester v("QLinearMatMul", 10);
  v.input<uint8_t>({1, 1}, {1}).input<half>({}, {half(1.0f)}).input<uint8_t>({}, {0});
  v.input<uint8_t>({1, 1}, {1}).input<half>({}, {half(1.0f)}).input<uint8_t>({}, {0});
  v.input<half>({}, {half(1.0f)}).input<uint8_t>({}, {0});
  v.expect_failure(StatusCode::kInvalidModel, "a_scale must be float32, got float16");
}

}  // namespace
}  // namespace vn::ops::testing
