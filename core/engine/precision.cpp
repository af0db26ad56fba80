// SPDX-License-Identifier: Apache-2.0
#include "core/engine/precision.h"

#include <algorithm>
#include <array>

#include <Eigen/Core>

#ifdef __F16C__
#include <immintrin.h>
#endif

#include "core/common/status.h"

namespace vn::engine {
namespace {

struct PresetRow {
  PrecisionId id;
  std::string_view name;
  Precision precision;
};

constexpr std::array<PresetRow, kPrecisionCount> kPresets{{
    {PrecisionId::kFp32, "fp32", {DType::kFloat32, DType::kFloat32, DType::kFloat32, false}},
    {PrecisionId::kTf32, "tf32", {DType::kFloat32, DType::kFloat32, DType::kFloat32, true}},
    {PrecisionId::kFp16, "fp16", {DType::kFloat16, DType::kFloat32, DType::kFloat32, false}},
    {PrecisionId::kFp16Strict, "fp16_strict", {DType::kFloat16, DType::kFloat16, DType::kFloat16, false}},
    {PrecisionId::kBf16, "bf16", {DType::kBFloat16, DType::kFloat32, DType::kFloat32, false}},
    // int8 products accumulate exactly in int32; the requantization (scale, bias, activation)
    // computes in float32.
    {PrecisionId::kInt8, "int8", {DType::kInt8, DType::kFloat32, DType::kInt32, false}},
}};

// row() indexes kPresets by PrecisionId: one row per id, in the enum's order.
constexpr bool ids_follow_rows() {
  for (size_t i = 0; i < kPresets.size(); ++i) {
    if (static_cast<size_t>(kPresets[i].id) != i) return false;
  }
  return true;
}
static_assert(ids_follow_rows(), "kPresets must list every PrecisionId in the enum's order");
static_assert(static_cast<size_t>(PrecisionId::kInt8) + 1 == kPrecisionCount, "kPrecisionCount counts PrecisionId");

const PresetRow& row(PrecisionId id) { return kPresets[static_cast<size_t>(id)]; }

}  // namespace

Precision precision_of(PrecisionId id) { return row(id).precision; }

std::string_view precision_name(PrecisionId id) { return row(id).name; }

std::optional<PrecisionId> precision_from_name(std::string_view name) {
  for (const PresetRow& r : kPresets) {
    if (r.name == name) return r.id;
  }
  if (name == "float32") return PrecisionId::kFp32;
  if (name == "float16" || name == "half") return PrecisionId::kFp16;
  if (name == "bfloat16") return PrecisionId::kBf16;
  return std::nullopt;
}

PrecisionId loosest_allowed(PrecisionMask allowed) {
  // fp16 and fp16_strict come together (--fp16); the preset is named after fp16.
  for (const PrecisionId id : {PrecisionId::kInt8, PrecisionId::kBf16, PrecisionId::kFp16, PrecisionId::kTf32}) {
    if (mask_has(allowed, id)) return id;
  }
  return PrecisionId::kFp32;
}

std::string mask_to_string(PrecisionMask mask) {
  std::string out;
  for (const PresetRow& r : kPresets) {
    if (!mask_has(mask, r.id)) continue;
    if (!out.empty()) out += '|';
    out += r.name;
  }
  return out.empty() ? "none" : out;
}

std::string_view constraints_name(PrecisionConstraints constraints) {
  switch (constraints) {
    case PrecisionConstraints::kNone:
      return "none";
    case PrecisionConstraints::kPrefer:
      return "prefer";
    case PrecisionConstraints::kObey:
      return "obey";
  }
  return "none";
}

std::optional<PrecisionConstraints> constraints_from_name(std::string_view name) {
  if (name == "none") return PrecisionConstraints::kNone;
  if (name == "prefer") return PrecisionConstraints::kPrefer;
  if (name == "obey") return PrecisionConstraints::kObey;
  return std::nullopt;
}

float round_to_half(float x) { return static_cast<float>(Eigen::half(x)); }

float round_to_bfloat16(float x) { return static_cast<float>(Eigen::bfloat16(x)); }

void round_in_place(std::span<float> values, DType format) {
  switch (format) {
    case DType::kFloat32:
      return;
    case DType::kFloat16: {
      size_t i = 0;
#ifdef __F16C__
      // Eight at a time through the hardware conversion, which rounds as Eigen::half does (to
      // nearest even, overflow to inf, subnormals kept): the engine rounds every fp16 layer's
      // inputs and outputs, and a scalar loop was a tenth of its time.
      for (; i + 8 <= values.size(); i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(values.data() + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(values.data() + i, _mm256_cvtph_ps(h));
      }
#endif
      for (; i < values.size(); ++i) values[i] = round_to_half(values[i]);
      return;
    }
    case DType::kBFloat16:
      for (float& v : values) v = round_to_bfloat16(v);
      return;
    default:
      VN_CHECK(false, "round_in_place: {} is not a float storage format", dtype_name(format));
  }
}

void round_to_tf32_in_place(std::span<float> values) {
  for (float& v : values) v = round_to_tf32(v);
}

void round_operands_in_place(std::span<float> values, const Precision& precision) {
  if (precision.tf32_products) {
    round_to_tf32_in_place(values);
  } else {
    round_in_place(values, float_storage(precision));
  }
}

bool keeps_values(std::string_view domain, std::string_view op_type) {
  // Pad, Clip and Resize are not here: an attribute (a pad value, bounds before opset 11) or an
  // interpolation can bring in a value no input has.
  static constexpr std::array<std::string_view, 24> kKeepers = {
      "Abs",           "Concat",   "DepthToSpace", "Expand",       "Flatten", "Gather",  "GatherElements", "GatherND",
      "GlobalMaxPool", "Identity", "Max",          "MaxPool",      "Min",     "Neg",     "ReduceMax",      "ReduceMin",
      "Relu",          "Reshape",  "Slice",        "SpaceToDepth", "Split",   "Squeeze", "Transpose",      "Unsqueeze"};
  if (!domain.empty() && domain != "ai.onnx") return false;
  return std::find(kKeepers.begin(), kKeepers.end(), op_type) != kKeepers.end();
}

bool format_contains(DType wide, DType narrow) {
  if (wide == DType::kInt8) return false;
  return wide == narrow || wide == DType::kFloat32;
}

}  // namespace vn::engine
