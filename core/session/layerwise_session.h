// SPDX-License-Identifier: Apache-2.0
// The layer-wise comparison of a model as a session job: runs the reference and the engine layer
// by layer and keeps what the screens show (the graph, every comparison with the digest of its
// pair, each layer's precision and tactic). The tensors themselves are freed as they are compared.
#pragma once

#include <memory>
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
  /// Every accumulated comparison carries the digest of its pair (TensorComparison::digest) when
  /// the session was compared live or loaded from a report that kept them.
  LayerwiseComparison comparison;
  /// Per entry of comparison.layers: the engine layer's precision ("fp16") and tactic names.
  std::vector<std::string> layer_precision;
  std::vector<std::string> layer_tactic;
};

/// Fills the session's layer_precision and layer_tactic from the engine's `plan` ("" for layers
/// the plan does not have, and for every layer when `plan` is null).
void describe_layers(const engine::Plan* plan, LayerwiseSession& session);

struct LayerwiseSessionOptions {
  engine::EngineOptions engine;
  CompareConfig config;
  bool local_errors = true;
  int threads = 1;
  /// What each comparison keeps of its pair for the tensor detail.
  DigestLimits digest;
};

/// A layer-wise comparison that can run again with another tolerance: the model, the feed and the
/// two prepared backends (the reference first, the backend under test second). One run at a time.
class LayerwiseRunner {
 public:
  /// Prepares the reference backend and the engine (options.engine) with every tensor marked.
  /// Errors: the backends'.
  static Result<std::unique_ptr<LayerwiseRunner>> build(Model model, TensorMap feeds, LayerwiseSessionOptions options);
  /// Takes backends already prepared on `*model` with every tensor marked (a backend keeps
  /// pointing into the model it was prepared on, so the runner keeps it alive).
  LayerwiseRunner(std::shared_ptr<const Model> model, TensorMap feeds, std::unique_ptr<Backend> ref,
                  std::unique_ptr<Backend> test, LayerwiseSessionOptions options);

  /// Runs both backends on the feed and compares every tensor with `config`, reporting progress
  /// (tensors compared out of the model's node outputs) and log lines through `context`; stops
  /// with kCancelled when cancelled. Errors: the backends'.
  Result<LayerwiseSession> run(const CompareConfig& config, JobContext& context);

 private:
  std::shared_ptr<const Model> model_;
  TensorMap feeds_;
  std::unique_ptr<Backend> ref_;
  std::unique_ptr<Backend> test_;
  LayerwiseSessionOptions options_;
};

/// Writes the layer table of `session` to `path` as tab-separated values: a header line, then
/// layer, op, culprit rank, accumulated and local excess (factors of the tolerance) per layer.
/// Errors: kIoError when the file cannot be written.
Status export_layer_table(const LayerwiseSession& session, const std::filesystem::path& path);

}  // namespace vn::session
