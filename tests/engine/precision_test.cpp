// SPDX-License-Identifier: Apache-2.0
#include "core/engine/precision.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace vn::engine {
namespace {

TEST(Precision, PresetsHaveTheirThreeFormats) {
  EXPECT_EQ(precision_of(PrecisionId::kFp32), (Precision{DType::kFloat32, DType::kFloat32, DType::kFloat32, false}));
  EXPECT_EQ(precision_of(PrecisionId::kTf32), (Precision{DType::kFloat32, DType::kFloat32, DType::kFloat32, true}));
  EXPECT_EQ(precision_of(PrecisionId::kFp16), (Precision{DType::kFloat16, DType::kFloat32, DType::kFloat32, false}));
  EXPECT_EQ(precision_of(PrecisionId::kFp16Strict),
            (Precision{DType::kFloat16, DType::kFloat16, DType::kFloat16, false}));
  EXPECT_EQ(precision_of(PrecisionId::kBf16), (Precision{DType::kBFloat16, DType::kFloat32, DType::kFloat32, false}));
}

TEST(Precision, NamesRoundTripAndAcceptPolygraphySpellings) {
  for (size_t i = 0; i < kPrecisionCount; ++i) {
    const auto id = static_cast<PrecisionId>(i);
    EXPECT_EQ(precision_from_name(precision_name(id)), id);
  }
  EXPECT_EQ(precision_from_name("float16"), PrecisionId::kFp16);
  EXPECT_EQ(precision_from_name("float32"), PrecisionId::kFp32);
  EXPECT_EQ(precision_from_name("bfloat16"), PrecisionId::kBf16);
  EXPECT_EQ(precision_from_name("int4"), std::nullopt);
  EXPECT_EQ(mask_to_string(kFp32 | kFp16 | kBf16), "fp32|fp16|bf16");
  EXPECT_EQ(mask_to_string(0), "none");
}

TEST(Precision, HalfRoundsToNearestEvenAndOverflowsToInf) {
  EXPECT_EQ(round_to_half(65504.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(round_to_half(65520.0f)));
  EXPECT_TRUE(std::isinf(round_to_half(-1e6f)) && round_to_half(-1e6f) < 0);
  EXPECT_EQ(round_to_half(1e-8f), 0.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(round_to_half(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(round_to_half(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_TRUE(std::isnan(round_to_half(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Precision, Bfloat16KeepsTheFloat32Range) {
  EXPECT_EQ(round_to_bfloat16(1.00390625f), 1.0f);
  EXPECT_EQ(round_to_bfloat16(1.01171875f), 1.015625f);
  EXPECT_EQ(round_to_bfloat16(3.14159265f), 3.140625f);
  EXPECT_GT(round_to_bfloat16(1e-8f), 0.0f);
  EXPECT_FALSE(std::isinf(round_to_bfloat16(1e30f)));
}

TEST(Precision, Tf32KeepsTenMantissaBits) {
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-13f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);
  EXPECT_EQ(round_to_tf32(1e30f), round_to_tf32(round_to_tf32(1e30f)));
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::max())));
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(round_to_tf32(-1.0f - 3 * 0x1p-11f), -1.0f - 0x1p-9f);
}

TEST(Precision, BufferRoundingToHalfMatchesEigenHalfBitForBit) {
  // Every 2^13-th float32 bit pattern (both signs: normals, subnormals, overflow, inf, NaN) plus
  // the ties just around half's subnormal and overflow edges, through the buffer path (eight at a
  // time, then a tail) and through Eigen::half one by one.
  std::vector<float> v;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 8191) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float x : {65504.0f, 65519.99f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, -0x1p-25f, 1.0f + 0x1p-11f}) {
    v.push_back(x);
  }
  std::vector<float> rounded = v;
  round_in_place(rounded, DType::kFloat16);
  size_t differ = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const float expected = round_to_half(v[i]);
    const bool same = std::isnan(expected) ? std::isnan(rounded[i]) : std::bit_cast<uint32_t>(expected) == std::bit_cast<uint32_t>(rounded[i]);
    differ += same ? 0 : 1;
  }
  EXPECT_EQ(differ, 0u) << "of " << v.size();
}

TEST(Precision, BuffersRoundToTheirFormat) {
  std::vector<float> v{1.0f + 0x1p-12f, 70000.0f, 0.1f};
  std::vector<float> fp32 = v;
  round_in_place(fp32, DType::kFloat32);
  EXPECT_EQ(fp32, v);
  std::vector<float> half = v;
  round_in_place(half, DType::kFloat16);
  EXPECT_EQ(half[0], 1.0f);
  EXPECT_TRUE(std::isinf(half[1]));
  EXPECT_EQ(half[2], round_to_half(0.1f));
  std::vector<float> operands = v;
  round_operands_in_place(operands, precision_of(PrecisionId::kTf32));
  EXPECT_EQ(operands[0], 1.0f);
  EXPECT_EQ(operands[1], 70016.0f);
  std::vector<float> bf16_operands = v;
  round_operands_in_place(bf16_operands, precision_of(PrecisionId::kBf16));
  EXPECT_EQ(bf16_operands[1], 70144.0f);
}

TEST(Precision, FormatContainment) {
  EXPECT_TRUE(format_contains(DType::kFloat32, DType::kFloat16));
  EXPECT_TRUE(format_contains(DType::kFloat32, DType::kBFloat16));
  EXPECT_TRUE(format_contains(DType::kFloat16, DType::kFloat16));
  EXPECT_FALSE(format_contains(DType::kFloat16, DType::kFloat32));
  EXPECT_FALSE(format_contains(DType::kFloat16, DType::kBFloat16));
  EXPECT_FALSE(format_contains(DType::kBFloat16, DType::kFloat16));
}

TEST(Precision, AccumulatorsRoundAfterEveryAddition) {
  auto sum = [](DType accumulate) {
    return dispatch_accumulate(accumulate, [&]<typename R>() {
      float acc = 0;
      for (int i = 0; i < 4096; ++i) acc = R::round(acc + 1.0f);
      return acc;
    });
  };
  EXPECT_EQ(sum(DType::kFloat32), 4096.0f);
  // float16 integers are exact only up to 2048: 2048 + 1 rounds back to 2048 (ties to even).
  EXPECT_EQ(sum(DType::kFloat16), 2048.0f);
  EXPECT_EQ(sum(DType::kBFloat16), 256.0f);
}

}  // namespace
}  // namespace vn::engine
