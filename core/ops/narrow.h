// SPDX-License-Identifier: Apache-2.0
// The 16-bit float formats in which an engine's rounded constant weights are kept packed
// (sgemm_driver.h's PackedWeights): half the memory of float32 panels, widened exactly to float32
// a few panels at a time as the products read them.
#pragma once

#include <cstdint>
#include <string_view>

namespace vn::ops {

enum class Narrow : uint8_t {
  kNone,      ///< nothing kept: a rounded operand is rounded again at each product
  kFloat16,   ///< IEEE binary16
  kBFloat16,  ///< bfloat16: float32's upper half
};

std::string_view narrow_name(Narrow format);

/// `count` values of `format` widened to float32, which holds each exactly.
void widen(Narrow format, const uint16_t* in, int64_t count, float* out);

/// `count` float32 values rounded to `format`, to nearest even: overflow to infinity, NaN stays
/// NaN, subnormals kept (float16). widen(narrow(x)) is what Eigen::half(x) and Eigen::bfloat16(x)
/// read back as.
void narrow(Narrow format, const float* in, int64_t count, uint16_t* out);

}  // namespace vn::ops
