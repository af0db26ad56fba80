// SPDX-License-Identifier: Apache-2.0
// Tactic replays (`--save-tactics`, `--load-tactics`): per layer, the tactic and precision a build
// chose, in Polygraphy's TacticReplayData layout so that Polygraphy's `inspect tactics` and
// `inspect diff-tactics` read them too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/engine/plan.h"

namespace vn::engine {

/// A tensor as TensorRT's TensorInfo describes it.
struct ReplayTensor {
  std::string dtype;  ///< TensorRT's spelling: "DataType.FLOAT", "DataType.HALF", "DataType.BF16", ...
  Shape strides;      ///< element strides of the dense build shape
};

/// One layer's choice.
struct ReplayEntry {
  std::string layer;
  TacticId tactic = TacticId::kReference;
  PrecisionId precision = PrecisionId::kFp32;
  std::vector<std::string> nodes;  ///< the fused members, so a replay refuses a build that fuses differently
  std::vector<ReplayTensor> inputs, outputs;
};

/// A replay: entries in layer order.
struct TacticReplay {
  std::vector<ReplayEntry> entries;

  /// The entry of layer `layer`, or nullptr.
  const ReplayEntry* find(std::string_view layer) const;
};

/// The choices recorded in a plan.
TacticReplay tactic_replay_from_plan(const Plan& plan);

/// {"replay": {LAYER: Algorithm}, "polygraphy_class": "TacticReplayData"}, where each Algorithm has
/// Polygraphy's fields ("implementation": the layer kind's number, "tactic": a 64-bit id hashed
/// from the tactic name, "inputs"/"outputs": TensorInfo) plus "vernier": {"tactic", "precision",
/// "nodes"} with the names.
nlohmann::ordered_json tactic_replay_to_json(const TacticReplay& replay);
/// Reads tactic_replay_to_json's layout. Without the "vernier" fields (a file written elsewhere),
/// the tactic is found from its 64-bit id and the precision from the output dtype. kIoError naming
/// the layer and field that are malformed or unknown.
Result<TacticReplay> tactic_replay_from_json(const nlohmann::ordered_json& json);

/// Writes a replay as JSON with Polygraphy's 4-space indentation. kIoError when it cannot.
Status save_tactic_replay(const TacticReplay& replay, const std::filesystem::path& path);
/// Reads a replay file. kIoError naming the file.
Result<TacticReplay> load_tactic_replay(const std::filesystem::path& path);

}  // namespace vn::engine
