// SPDX-License-Identifier: Apache-2.0
// The catalogue of tactics (core/engine/tactics.inc) as a table: lookups by name, by layer kind
// and by precision.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/engine/precision.h"

namespace vn::engine {

/// What a layer computes, which decides the tactics that can run it. The value is also the
/// "implementation" number of tactic replays, so the order is fixed: append only.
enum class LayerKind : uint8_t {
  kConv,        ///< Conv, with BatchNormalization, bias, residual add and activation fused in
  kGemm,        ///< Gemm or MatMul, with bias, residual add and activation fused in
  kSoftmax,     ///< Softmax
  kLayerNorm,   ///< LayerNormalization, or its decomposed ReduceMean/Sub/Pow/... pattern
  kReduce,      ///< ReduceSum, ReduceMean
  kActivation,  ///< Sigmoid, Tanh, Exp, Erf, and the SiLU and GELU patterns
  kPool,        ///< AveragePool, GlobalAveragePool
  kEltwise,     ///< residual Add followed by Relu
  kGeneric,     ///< any other op, run by its reference kernel
};

/// "Conv", "Gemm", "Softmax", "LayerNorm", "Reduce", "Activation", "Pool", "Eltwise", "Generic".
std::string_view layer_kind_name(LayerKind kind);
/// Inverse of layer_kind_name.
std::optional<LayerKind> layer_kind_from_name(std::string_view name);

/// One tactic per line of tactics.inc.
enum class TacticId : uint8_t {
#define VN_TACTIC(id, kind, name, precisions, description) id,
#include "core/engine/tactics.inc"
#undef VN_TACTIC
};

/// A row of the catalogue.
struct TacticInfo {
  TacticId id;
  LayerKind kind;
  std::string_view name;
  PrecisionMask precisions;
  std::string_view description;

  bool supports(PrecisionId precision) const { return mask_has(precisions, precision); }
};

/// Every tactic, in tactics.inc order.
std::span<const TacticInfo> all_tactics();
/// The row of `id`.
const TacticInfo& tactic_info(TacticId id);
/// The tactic named `name`, or nullptr.
const TacticInfo* find_tactic(std::string_view name);
/// The tactics of `kind`, in catalogue order.
std::vector<const TacticInfo*> tactics_for(LayerKind kind);
/// The 64-bit id tactic replays store for a tactic: FNV-1a of its name, stable across releases
/// because names are.
int64_t tactic_replay_id(TacticId id);

}  // namespace vn::engine
