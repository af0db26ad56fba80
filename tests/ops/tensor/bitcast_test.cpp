// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(BitCast, ReinterpretsTheBitsOfOneWidth) {
  // IEEE 754: 1.0f is 0x3F800000, -2.0f is 0xC0000000, +inf is 0x7F800000.
  OpTester f("BitCast", 26);
  f.attr("to", int64_t{6});  // INT32
  f.input<float>({3}, {1.0f, -2.0f, std::numeric_limits<float>::infinity()});
  f.output<int32_t>({3}, {0x3F800000, static_cast<int32_t>(0xC0000000u), 0x7F800000});
  f.run();
  OpTester d("BitCast", 26);
  d.attr("to", int64_t{11});  // DOUBLE
  d.input<int64_t>({1, 2}, {0x3FF0000000000000LL, 0x4000000000000000LL});
  d.output<double>({1, 2}, {1.0, 2.0});
  d.run();
  OpTester u("BitCast", 26);
  u.attr("to", int64_t{3});  // INT8
  u.input<uint8_t>({}, {255});
  u.output<int8_t>({}, {-1});
  u.run();
  OpTester b("BitCast", 26);
  b.attr("to", int64_t{9});  // BOOL
  b.input<uint8_t>({2}, {0, 1});
  b.output<bool>({2}, {false, true});
  b.run();
}

TEST(BitCast, RefusesOtherWidthsStringsAndNonBoolBytes) {
  OpTester w("BitCast", 26);
  w.attr("to", int64_t{7});  // INT64
  w.input<int32_t>({1}, {1});
  w.expect_failure(StatusCode::kInvalidModel, "BitCast needs types of one width: int32 is 32 bits, int64 is 64");
  OpTester s("BitCast", 26);
  s.attr("to", int64_t{8});  // STRING
  s.input<int64_t>({1}, {1});
  s.expect_failure(StatusCode::kUnsupportedDType, "string");
  OpTester b("BitCast", 26);
  b.attr("to", int64_t{9});
  b.input<uint8_t>({2}, {1, 2});
  b.expect_failure(StatusCode::kInvalidArgument, "byte 2 at flat index 1 is not a bool");
  OpTester m("BitCast", 26);
  m.input<uint8_t>({1}, {1});
  m.expect_failure(StatusCode::kInvalidModel, "attribute to is required");
}

}  // namespace
}  // namespace vn::ops::testing
