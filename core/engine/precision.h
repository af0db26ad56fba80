// SPDX-License-Identifier: Apache-2.0
// The engine's numeric precisions: what a layer stores, computes and accumulates in, and the
// rounding helpers that make a float32 buffer hold exactly the values a reduced-precision engine
// would hold.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/ir/dtype.h"

namespace vn::engine {

/// The precision presets a layer can run in. The engine keeps every activation in a float32
/// buffer and rounds it to the preset's formats exactly where a real engine rounds: at every
/// layer's output (storage), at the operands of matrix products (tf32, or the storage format) and
/// at the accumulators of fp16-accumulate tactics. int8 layers hold the values of their int8 grid
/// (a per-tensor scale times an integer in [-128, 127]) in the same float32 buffers.
enum class PrecisionId : uint8_t {
  kFp32,        ///< float32 throughout
  kTf32,        ///< float32 storage; matrix-product operands rounded to 10 mantissa bits; float32 accumulate
  kFp16,        ///< float16 storage; float32 compute and accumulate
  kFp16Strict,  ///< float16 storage, compute and accumulate
  kBf16,        ///< bfloat16 storage; float32 compute and accumulate
  kInt8,        ///< int8 storage (per-tensor activation and per-output-channel weight scales); int32 accumulate
};

/// Number of PrecisionId values.
inline constexpr size_t kPrecisionCount = 6;

/// A precision as its three formats. `tf32_products` marks tf32, whose compute format is float32
/// with the operands of matrix products rounded to tf32 (10 mantissa bits, float32 range).
struct Precision {
  DType storage = DType::kFloat32;     ///< what layer outputs and weights are rounded to
  DType compute = DType::kFloat32;     ///< the format of intermediate results (exp(x) in Softmax, ...)
  DType accumulate = DType::kFloat32;  ///< the format of running sums
  bool tf32_products = false;

  bool operator==(const Precision&) const = default;
};

/// The formats of a preset.
Precision precision_of(PrecisionId id);
/// "fp32", "tf32", "fp16", "fp16_strict", "bf16" or "int8": the spelling of plans, replays and the CLI.
std::string_view precision_name(PrecisionId id);
/// Parses a preset name; also accepts Polygraphy's "float32", "float16", "bfloat16" and "half".
std::optional<PrecisionId> precision_from_name(std::string_view name);

/// A set of presets, one bit per PrecisionId.
using PrecisionMask = uint32_t;

constexpr PrecisionMask mask_of(PrecisionId id) { return PrecisionMask{1} << static_cast<unsigned>(id); }
constexpr bool mask_has(PrecisionMask mask, PrecisionId id) { return (mask & mask_of(id)) != 0; }

/// One-preset masks, to combine with |.
inline constexpr PrecisionMask kFp32 = mask_of(PrecisionId::kFp32);
inline constexpr PrecisionMask kTf32 = mask_of(PrecisionId::kTf32);
inline constexpr PrecisionMask kFp16 = mask_of(PrecisionId::kFp16);
inline constexpr PrecisionMask kFp16Strict = mask_of(PrecisionId::kFp16Strict);
inline constexpr PrecisionMask kBf16 = mask_of(PrecisionId::kBf16);
inline constexpr PrecisionMask kInt8 = mask_of(PrecisionId::kInt8);
inline constexpr PrecisionMask kAllPrecisions = kFp32 | kTf32 | kFp16 | kFp16Strict | kBf16 | kInt8;

/// "fp32|fp16" in PrecisionId order; "none" for an empty mask.
std::string mask_to_string(PrecisionMask mask);

/// The precision with the coarsest rounding a build allowed `allowed` may choose (int8, then
/// bf16, fp16, tf32; fp32 when none of them; fp16_strict counts as fp16, which --fp16 allows
/// with it): what sets the tolerance preset of comparisons with
/// it and the resolution its outputs can be judged at.
PrecisionId loosest_allowed(PrecisionMask allowed);

/// How per-layer precision requests (`--layer-precisions`) bind the builder, as in TensorRT.
enum class PrecisionConstraints : uint8_t {
  kNone,    ///< requests are ignored: the builder chooses freely
  kPrefer,  ///< a request is followed when some tactic can run the layer in it, else ignored with a warning
  kObey,    ///< a request is followed, and the build fails when no tactic can run the layer in it
};

/// "none", "prefer", "obey".
std::string_view constraints_name(PrecisionConstraints constraints);
/// Inverse of constraints_name.
std::optional<PrecisionConstraints> constraints_from_name(std::string_view name);

// ---- Rounding ----------------------------------------------------------------------------------

/// x rounded to the nearest float16 value, ties to even; beyond 65504 it overflows to ±inf and
/// below the subnormal range it flushes to ±0, as a float16 store does. NaN stays NaN.
float round_to_half(float x);

/// x rounded to the nearest bfloat16 value, ties to even (8 exponent bits: float32's range).
float round_to_bfloat16(float x);

/// x rounded to tf32 (float32's sign and exponent, 10 mantissa bits), ties to even. Values near
/// FLT_MAX round up to ±inf as the hardware conversion does; inf and NaN pass through.
inline float round_to_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  if ((u & 0x7f800000u) != 0x7f800000u) {
    u += 0x0fffu + ((u >> 13) & 1u);
    u &= ~0x1fffu;
  }
  std::memcpy(&x, &u, sizeof(u));
  return x;
}

/// Rounds every value to `format` in place: kFloat16, kBFloat16, or kFloat32 (no change). Other
/// dtypes are a programming error.
void round_in_place(std::span<float> values, DType format);
/// Rounds every value to tf32 in place.
void round_to_tf32_in_place(std::span<float> values);
/// The float format of the values a layer keeps unquantized (biases, epilogue results before
/// requantization): the storage format, or float32 for int8.
inline DType float_storage(const Precision& precision) {
  return precision.storage == DType::kInt8 ? DType::kFloat32 : precision.storage;
}

/// Rounds values to the format the operands of matrix products have under `precision`: tf32 for
/// tf32, else the storage format (float32 for int8, whose kernels quantize their own operands).
void round_operands_in_place(std::span<float> values, const Precision& precision);

/// Whether the ONNX operator `op_type` of `domain` makes its float outputs only of its inputs'
/// values (moved, selected, compared, their sign changed) and zeros: from inputs in float16 or
/// bfloat16 it gives values of that format, which rounding again would leave as they are.
bool keeps_values(std::string_view domain, std::string_view op_type);

/// True when every value of format `narrow` is exactly representable in format `wide` (kFloat32,
/// kFloat16, kBFloat16, or kInt8 for a tensor on an int8 grid), so a tensor stored in `narrow`
/// needs no rounding to be read as `wide`. float16 and bfloat16 contain each other in neither
/// direction; an int8 grid is contained only in float32 (and in itself when the scales match,
/// which the format alone does not tell: CompiledLayer::run knows it for the engine's own tensors).
bool format_contains(DType wide, DType narrow);

/// Compile-time rounding of an accumulator after each addition, chosen from a precision's
/// accumulate format with dispatch_accumulate. Kernels are templates over it so that the float32
/// path carries no per-element branch.
struct AccumulateFp32 {
  static float round(float x) { return x; }
};
struct AccumulateFp16 {
  static float round(float x) { return round_to_half(x); }
};
struct AccumulateBf16 {
  static float round(float x) { return round_to_bfloat16(x); }
};

/// Calls `f.template operator()<R>()` with R the rounding policy of `accumulate` (kFloat32,
/// kFloat16 or kBFloat16; anything else is treated as kFloat32).
template <typename F>
decltype(auto) dispatch_accumulate(DType accumulate, F&& f) {
  switch (accumulate) {
    case DType::kFloat16:
      return f.template operator()<AccumulateFp16>();
    case DType::kBFloat16:
      return f.template operator()<AccumulateBf16>();
    default:
      return f.template operator()<AccumulateFp32>();
  }
}

}  // namespace vn::engine
