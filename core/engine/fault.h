// SPDX-License-Identifier: Apache-2.0
// Fault injection: a testing facility that makes a named layer or tactic of the engine corrupt its
// result under a stated condition, so that every branch of the debugger (layer-wise comparison,
// reduction, tactic diffs) can be exercised on purpose. It is off unless asked for
// (`--inject-fault`), every fault is recorded in the plan, and a given spec corrupts the same
// elements in the same way on every run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/engine/precision.h"
#include "core/ir/tensor.h"

namespace vn::engine {

/// What a fault does to the values it touches.
enum class FaultKind : uint8_t {
  kScale,     ///< x * factor
  kOffset,    ///< x + magnitude
  kNoise,     ///< x + magnitude * n, n a deterministic standard normal draw per element
  kZero,      ///< 0
  kNan,       ///< NaN
  kInf,       ///< +inf
  kBiasDrop,  ///< the layer's bias is never added (Conv, Gemm and MatMul layers with a bias)
};

/// When a fault applies, decided once per layer at build time from the layer's build shapes.
enum class FaultCondition : uint8_t {
  kAlways,
  kChannelsNotMultipleOf8,  ///< output channels (dim 1; the only dim of a 1-D output) % 8 != 0
  kChannelsMultipleOf8,     ///< output channels % 8 == 0
  kReducedPrecision,        ///< the layer runs in fp16, fp16_strict or bf16
  kFused,                   ///< the layer fuses several nodes (marking its inner tensors hides the fault)
};

/// A parsed `--inject-fault` spec: comma-separated key=value pairs.
///   layer=NAME | tactic=NAME   which: a layer (or any node fused into it) or every layer built
///                              with that tactic (exactly one of the two);
///   kind=scale|offset|noise|zero|nan|inf|bias-drop   what (required);
///   factor=F       scale factor (default 2);
///   magnitude=F    offset, or standard deviation of the noise (default 1);
///   fraction=F     share of the elements touched, in (0, 1] (default 1: all);
///   when=always|channels-not-multiple-of-8|channels-multiple-of-8|reduced-precision|fused
///                  condition (default always; case-insensitive, so ALWAYS works);
///   seed=N         selects which elements `fraction` and `noise` touch (default: derived from
///                  the spec text).
struct FaultSpec {
  std::string text;  ///< the spec as given
  std::string layer;
  std::string tactic;
  FaultKind kind = FaultKind::kScale;
  double factor = 2.0;
  double magnitude = 1.0;
  double fraction = 1.0;
  FaultCondition when = FaultCondition::kAlways;
  uint64_t seed = 0;
  /// `missing=ignore`: a layer= target the model lacks is not an error (the fault just never
  /// fires), for checks of reduced models that hold only part of the original.
  bool ignore_if_absent = false;
};

/// Parses a spec. kInvalidArgument with the spec and the offending key or value in the message
/// ("--inject-fault 'layer=a,kind=melt': unknown kind 'melt' (expected scale, offset, ...)").
/// A tactic name is checked against the catalogue here; a layer name when the engine is built.
Result<FaultSpec> parse_fault(std::string_view text);

/// Whether `fault`'s condition holds for a layer of `member_nodes` nodes whose first output has
/// `output_shape` and that runs in `precision`.
bool fault_condition_holds(const FaultSpec& fault, const Shape& output_shape, PrecisionId precision,
                           size_t member_nodes);

/// Corrupts `values` (a layer's float32 output) as `fault` says. kBiasDrop acts inside the kernel
/// and leaves values unchanged here.
void apply_fault(const FaultSpec& fault, std::span<float> values);

}  // namespace vn::engine
