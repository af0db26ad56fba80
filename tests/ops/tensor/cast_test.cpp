// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/ir/dtype.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

int64_t onnx_type(DType dtype) { return dtype_to_onnx(dtype); }

TEST(Cast, FloatToIntegersTruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t opset : {6, 9, 13}) {
    OpTester t("Cast", opset);
    t.attr("to", onnx_type(DType::kInt32));
    t.input<float>({6}, {1.9f, -1.9f, 0.0f, 3e10f, -3e10f, nan});
    t.output<int32_t>({6}, {1, -1, 0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0});
    t.run();
  }
}

TEST(Cast, IntegersToFloatAndBool) {
  OpTester f("Cast", 13);
  f.attr("to", onnx_type(DType::kFloat32));
  f.input<int64_t>({3}, {-2, 0, 16777217});
  f.output<float>({3}, {-2.0f, 0.0f, 16777216.0f});
  f.run();
  OpTester b("Cast", 13);
  b.attr("to", onnx_type(DType::kBool));
  b.input<float>({4}, {0.0f, -0.0f, 0.5f, -3.0f});
  b.output<bool>({4}, {false, false, true, true});
  b.run();
  OpTester i("Cast", 13);
  i.attr("to", onnx_type(DType::kInt64));
  i.input<bool>({2}, {true, false});
  i.output<int64_t>({2}, {1, 0});
  i.run();
  OpTester d("Cast", 13);
  d.attr("to", onnx_type(DType::kFloat64));
  d.input<float>({1}, {0.1f});
  d.output<double>({1}, {static_cast<double>(0.1f)});
  d.run();
}

TEST(Cast, SameTypeIsIdentityAndEmptyWorks) {
  OpTester t("Cast", 13);
  t.attr("to", onnx_type(DType::kInt64));
  t.input<int64_t>({2}, {5, 6});
  t.output<int64_t>({2}, {5, 6});
  t.run();
  OpTester e("Cast", 13);
  e.attr("to", onnx_type(DType::kUInt8));
  e.input<float>({0}, {});
  e.output<uint8_t>({0}, {});
  e.run();
}

TEST(Cast, Opset1TakesTypeName) {
  OpTester t("Cast", 1);
  t.attr("to", "INT64");
  t.input<float>({2}, {2.5f, -2.5f});
  t.output<int64_t>({2}, {2, -2});
  t.run();
  OpTester bad("Cast", 1);
  bad.attr("to", "COMPLEX64");
  bad.input<float>({1}, {1});
  bad.expect_failure(StatusCode::kInvalidModel, "to='COMPLEX64' is not a known data type name");
}

TEST(Cast, UnsupportedTargetsFail) {
  OpTester c("Cast", 13);
  c.attr("to", int64_t{14});  // complex128
  c.input<float>({1}, {1});
  c.expect_failure(StatusCode::kUnsupportedDType, "cast to ONNX data type 14 is not supported");
  OpTester m("Cast", 13);
  m.input<float>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "attribute to is required");
}

TEST(Cast, NumbersToStringsPrintAsNumpyStr) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTester f("Cast", 13);
  f.attr("to", onnx_type(DType::kString));
  f.input<float>(
      {9}, {0.47892547f, 100.0f, -2.5f, 1e-5f, 1.5e16f, 0.0f, -inf, std::numeric_limits<float>::quiet_NaN(), 0.0001f});
  // numpy switches to scientific notation below 1e-4, and 0.0001f is just below it.
  f.output<std::string>({9}, {"0.47892547", "100.0", "-2.5", "1e-05", "1.5e+16", "0.0", "-inf", "nan", "1e-04"});
  f.run();
  OpTester d("Cast", 13);
  d.attr("to", onnx_type(DType::kString));
  d.input<double>({2}, {0.1, 123456789.125});
  d.output<std::string>({2}, {"0.1", "123456789.125"});
  d.run();
  OpTester i("Cast", 13);
  i.attr("to", onnx_type(DType::kString));
  i.input<int64_t>({2}, {-42, 9007199254740993});
  i.output<std::string>({2}, {"-42", "9007199254740993"});
  i.run();
  OpTester h("Cast", 13);
  h.attr("to", onnx_type(DType::kString));
  h.input(Tensor::from_vector<Eigen::half>({1}, {Eigen::half(0.1f)}));
  h.output<std::string>({1}, {"0.1"});  // the shortest digits that read back to the same half
  h.run();
}

TEST(Cast, StringsParseDecimalScientificAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTester f("Cast", 13);
  f.attr("to", onnx_type(DType::kFloat32));
  f.input<std::string>({7}, {"3.14", "1e-5", "1E8", "INF", "+inf", "-INF", "NaN"});
  f.output<float>({7}, {3.14f, 1e-5f, 1e8f, inf, inf, -inf, std::numeric_limits<float>::quiet_NaN()});
  f.run();
  OpTester i("Cast", 13);
  i.attr("to", onnx_type(DType::kInt64));
  i.input<std::string>({3}, {"1000", "-7", "100.5"});
  i.output<int64_t>({3}, {1000, -7, 100});
  i.run();
  OpTester bad("Cast", 13);
  bad.attr("to", onnx_type(DType::kFloat32));
  bad.input<std::string>({2}, {"1", "Hello World!"});
  bad.expect_failure(StatusCode::kInvalidArgument, "string 'Hello World!' at flat position 1 is not a number");
}

TEST(Cast, NarrowsToHalfTypesWithOneRounding) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 midpoint between 1 and 1 + 2^-10: one correct
  // rounding goes up, while rounding through float32 first lands on the midpoint and ties to even (1).
  const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  OpTester h("Cast", 13);
  h.attr("to", onnx_type(DType::kFloat16));
  h.input<double>({2}, {above_tie, 65520.0});
  h.output(Tensor::from_vector<Eigen::half>(
      {2}, {Eigen::half(1.0f + std::ldexp(1.0f, -10)), Eigen::half(std::numeric_limits<float>::infinity())}));
  h.run();
  OpTester b("Cast", 13);
  b.attr("to", onnx_type(DType::kBFloat16));
  b.input<float>({2}, {0.48033667f, 1.00390625f});  // 0x3ef5eeb0 rounds up; 1 + 2^-8 is a tie, to even
  b.output(Tensor::from_vector<Eigen::bfloat16>({2}, {Eigen::bfloat16(0.48046875f), Eigen::bfloat16(1.0f)}));
  b.run();
}

TEST(CastLike, TakesTheTargetTypeFromInput1) {
  OpTester t("CastLike", 15);
  t.input<float>({3}, {1.9f, -1.9f, 2.0f}).input<int32_t>({1}, {0});
  t.output<int32_t>({3}, {1, -1, 2});
  t.run();
  OpTester s("CastLike", 15);
  s.input<std::string>({1}, {"2.5"}).input<double>({0}, {});
  s.output<double>({1}, {2.5});
  s.run();
  OpTester m("CastLike", 15);
  m.input<float>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "expects at least 2 inputs, got 1");
}

// A tensor of a narrow type from its one-byte codes (core/ir/narrow_types.h).
Tensor narrow(DType dtype, Shape shape, const std::vector<uint8_t>& codes) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < codes.size(); ++i) static_cast<uint8_t*>(t.mutable_raw())[i] = codes[i];
  return t;
}

TEST(Cast, Float8SaturateOnAndOff) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // As ONNX 1.23's test_cast_FLOAT_to_FLOAT8E4M3FN / _no_saturate: 1e6 and Inf go to 448 or NaN.
  for (int64_t saturate : {1, 0}) {
    OpTester t("Cast", 19);
    t.attr("to", onnx_type(DType::kFloat8E4M3FN)).attr("saturate", saturate);
    t.input<float>({6}, {0.4789f, 1e6f, inf, -inf, nan, -1e-7f});
    t.output(narrow(DType::kFloat8E4M3FN, {6},
                    saturate ? std::vector<uint8_t>{47, 0x7E, 0x7E, 0xFE, 0x7F, 0x80}
                             : std::vector<uint8_t>{47, 0x7F, 0x7F, 0xFF, 0x7F, 0x80}));
    t.run();
  }
  OpTester e5("Cast", 25);
  e5.attr("to", onnx_type(DType::kFloat8E5M2FNUZ)).attr("saturate", int64_t{0});
  e5.input<float>({3}, {1e6f, nan, -1e-7f});
  e5.output(narrow(DType::kFloat8E5M2FNUZ, {3}, {0x80, 0x80, 0x00}));
  e5.run();
}

TEST(Cast, NarrowTypesToFloatAreExact) {
  OpTester t("Cast", 21);
  t.attr("to", onnx_type(DType::kFloat32));
  t.input(narrow(DType::kInt4, {3}, {0xF8, 0x07, 0xFF}));
  t.output<float>({3}, {-8.0f, 7.0f, -1.0f});
  t.run();
  OpTester f("Cast", 23);
  f.attr("to", onnx_type(DType::kFloat16));
  f.input(narrow(DType::kFloat4E2M1, {2}, {0x07, 0x09}));
  f.output<Eigen::half>({2}, {Eigen::half(6.0f), Eigen::half(-0.5f)});
  f.run();
}

TEST(Cast, IntegerTargetsWrapAndE8M0Rounds) {
  OpTester t("Cast", 28);
  t.attr("to", onnx_type(DType::kInt4));
  t.input<float>({4}, {-9.0f, 8.0f, 7.9f, -0.5f});
  t.output(narrow(DType::kInt4, {4}, {0x07, 0xF8, 0x07, 0x00}));
  t.run();
  for (const auto& [mode, code] : std::vector<std::pair<std::string, uint8_t>>{{"up", 128}, {"down", 127}, {"nearest", 127}}) {
    OpTester e("Cast", 24);
    e.attr("to", onnx_type(DType::kFloat8E8M0)).attr("round_mode", mode);
    e.input<float>({1}, {1.1f});
    e.output(narrow(DType::kFloat8E8M0, {1}, {code}));
    e.run();
  }
  OpTester bad("Cast", 24);
  bad.attr("to", onnx_type(DType::kFloat8E8M0)).attr("round_mode", "sideways");
  bad.input<float>({1}, {1.0f});
  bad.expect_failure(StatusCode::kInvalidModel, "round_mode 'sideways' is not one of up, down, nearest");
}

TEST(CastLike, TakesSaturateFromNineteen) {
  OpTester t("CastLike", 19);
  t.attr("saturate", int64_t{0});
  t.input<float>({1}, {1e6f}).input(narrow(DType::kFloat8E5M2, {1}, {0}));
  t.output(narrow(DType::kFloat8E5M2, {1}, {0x7C}));
  t.run();
}

}  // namespace
}  // namespace vn::ops::testing
