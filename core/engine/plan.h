// SPDX-License-Identifier: Apache-2.0
// The engine plan: what a build decided (layers, fused members, precisions, tactics, timings,
// prevented fusions, injected faults) and for which model, saved as JSON (`--save-engine`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/engine/fault.h"
#include "core/engine/fusion.h"
#include "core/engine/precision.h"
#include "core/engine/quantize.h"
#include "core/engine/tactic_registry.h"
#include "core/ir/graph.h"

namespace vn::engine {

/// The dtype and build shape of a tensor a layer reads or writes.
struct TensorDesc {
  DType dtype = DType::kFloat32;
  Shape shape;
};

/// One candidate the builder timed for a layer.
struct TacticTiming {
  TacticId tactic = TacticId::kReference;
  PrecisionId precision = PrecisionId::kFp32;
  double median_ms = 0;  ///< median over the timed runs
};

/// One layer of a plan.
struct PlanLayer {
  std::string name;
  LayerKind kind = LayerKind::kGeneric;
  std::vector<std::string> nodes;    ///< fused member nodes, by name, in execution order
  std::vector<std::string> inputs;   ///< runtime tensors read
  std::vector<std::string> outputs;  ///< tensors visible outside the layer
  std::vector<std::string> hidden;   ///< tensors fused away: not available to outputs or observers
  PrecisionId precision = PrecisionId::kFp32;
  TacticId tactic = TacticId::kReference;
  std::vector<TensorDesc> input_desc;   ///< per input, as seen at build time
  std::vector<TensorDesc> output_desc;  ///< per output, as produced at build time
  std::vector<TacticTiming> timings;    ///< every candidate timed, in candidate order; empty when not timed
  std::string choice;                   ///< how the tactic was chosen ("fastest", "tie broken by seed", ...)
  std::vector<size_t> faults;           ///< indices into Plan::faults of the faults active on this layer
  /// Why a layer of a build that allowed int8 is not int8 ("no int8 tactic for Softmax layers"),
  /// or "" (int8 not allowed, the layer is int8, or its tensors are not float).
  std::string int8_fallback;
};

/// What the builder was asked for, recorded so a plan says how it was made.
struct BuildSettings {
  PrecisionMask allowed = kFp32;
  PrecisionConstraints constraints = PrecisionConstraints::kNone;
  std::vector<std::pair<std::string, PrecisionId>> layer_precisions;
  uint64_t builder_seed = 0;
  double timing_margin = 0.1;
  bool deterministic = false;
  bool replayed = false;                      ///< tactics came from a tactic replay
  std::map<std::string, Shape> input_shapes;  ///< the shapes the builder timed with
};

/// A built engine, as data. Layers are in execution order.
struct Plan {
  /// Bumped whenever the JSON layout or the fusion rules change incompatibly.
  static constexpr int kFormatVersion = 1;

  std::string model_hash;            ///< model_hash() of the model it was built for
  std::string model_name;            ///< the graph's name, for messages
  std::vector<std::string> outputs;  ///< the tensors it returns (graph outputs and marked tensors)
  BuildSettings settings;
  std::vector<std::string> folded;  ///< nodes evaluated at build time by constant folding
  std::vector<PlanLayer> layers;
  std::vector<PreventedFusion> prevented;
  std::vector<FaultSpec> faults;  ///< injected faults (`--inject-fault`), in the order given
  /// The int8 activation scales by tensor name (empty unless int8 was allowed); int8 layers read
  /// theirs from here when the plan is loaded. Weight scales are derived from the weights.
  ScaleTable int8_scales;
  /// Where the int8 scales came from ("entropy over 16 feed(s) of calib.json", "the calibration
  /// cache c.json (minmax)"), or "" when int8 was not allowed.
  std::string calibration;

  /// The layer named `name`, or nullptr.
  const PlanLayer* find_layer(std::string_view name) const;
};

/// A 64-bit hash of everything that decides a model's results: opsets, graph inputs and outputs,
/// nodes (names, ops, edges, attributes) and initializer bytes, as "0x" and 16 hex digits.
std::string model_hash(const Model& model);

/// The plan as JSON: {"format": "vernier-plan", "version": 1, "model": {...}, "build": {...},
/// "outputs": [...], "folded": [...], "layers": [...], "prevented_fusions": [...], "faults": [...]},
/// plus "int8": {"calibration": "...", "scales": {"tensor": scale}} when int8 was allowed (scales
/// written to read back bit-identical) and "int8_fallback" on the layers that stayed in float.
nlohmann::ordered_json plan_to_json(const Plan& plan);
/// Reads plan_to_json's output. kIoError naming what is malformed, or a plan of another format or
/// version.
Result<Plan> plan_from_json(const nlohmann::ordered_json& json);

/// Writes the plan as JSON (atomically). kIoError when the file cannot be written.
Status save_plan(const Plan& plan, const std::filesystem::path& path);
/// Reads a plan file. kIoError naming the file when it is missing or not a plan.
Result<Plan> load_plan(const std::filesystem::path& path);
/// True when `path` holds a Vernier plan (a JSON object whose "format" is "vernier-plan").
bool is_plan_file(const std::filesystem::path& path);

/// kInvalidArgument when `plan` was built for another model than `model`, naming both hashes.
Status check_plan_model(const Plan& plan, const Model& model);

}  // namespace vn::engine
