// SPDX-License-Identifier: Apache-2.0
// The layer-wise comparison of a model as a session job: builds the engine, runs the reference
// and the engine layer by layer, and keeps what the screens show (the graph, every comparison,
// the tensors of both sides, each layer's precision and tactic).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/compare/layerwise.h"
#include "core/engine/engine_backend.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"
#include "core/session/job.h"

namespace vn::session {

/// What a finished layer-wise comparison leaves for browsing. Immutable once published.
struct LayerwiseSession {
  Model model;
  LayerwiseComparison comparison;
  /// Every tensor each side produced, by name (for the tensor detail's heatmap and worst elements).
  /// Kept whole: the session trades memory for drill-in, which suits models of demo size.
  TensorMap test;
  TensorMap ref;
  /// Per entry of comparison.layers: the engine layer's precision ("fp16") and tactic names.
  std::vector<std::string> layer_precision;
  std::vector<std::string> layer_tactic;
};

struct LayerwiseSessionOptions {
  engine::EngineOptions engine;
  CompareConfig config;
  bool local_errors = true;
  int threads = 1;
};

/// Runs the comparison of `model` on `feeds` (reference first, engine under test second),
/// reporting progress (tensors compared out of the model's node outputs) and log lines through
/// `context`, and stopping with kCancelled when it is cancelled. Errors: the backends'.
Result<LayerwiseSession> run_layerwise_session(Model model, const TensorMap& feeds,
                                               const LayerwiseSessionOptions& options, JobContext& context);

/// The finished session `done` compared again from its kept tensors under `config` (a new
/// tolerance): no backend runs. Layers keep the engine's precision and tactic where the new
/// comparison has the same node. Logs the tolerance and the verdict through `context`. Errors: the
/// comparison's.
Result<LayerwiseSession> recompare_layerwise_session(const LayerwiseSession& done, const CompareConfig& config,
                                                     JobContext& context);

/// Writes the layer table of `session` to `path` as tab-separated values: a header line, then
/// layer, op, culprit rank, accumulated and local excess (factors of the tolerance) per layer.
/// Errors: kIoError when the file cannot be written.
Status export_layer_table(const LayerwiseSession& session, const std::filesystem::path& path);

}  // namespace vn::session
