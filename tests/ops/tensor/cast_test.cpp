// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

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
  OpTester s("Cast", 13);
  s.attr("to", onnx_type(DType::kString));
  s.input<float>({1}, {1});
  s.expect_failure(StatusCode::kUnsupportedDType, "cannot cast float32 to string");
  OpTester m("Cast", 13);
  m.input<float>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "attribute to is required");
}

}  // namespace
}  // namespace vn::ops::testing
