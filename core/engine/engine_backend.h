// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/engine/builder.h"
#include "core/engine/plan.h"
#include "core/ops/op_registry.h"

namespace vn::engine {

/// How the engine backend gets its plan.
struct EngineOptions {
  /// How to build (precisions, constraints, timing, replay, faults); ignored when `plan` is set.
  BuildOptions build;
  /// Run this plan instead of building one (`--load-engine`). prepare() refuses it when it was
  /// built for another model or with other outputs.
  std::shared_ptr<const Plan> plan;
};

/// The backend under test (`--engine`): an optimizing inference engine that behaves like TensorRT.
/// prepare() builds a plan (constant folding, fusions, per-layer precision and tactic choice by
/// timing) or loads one, and run() executes its layers. Each layer's float32 outputs hold the
/// values of its storage format.
///
/// The observer is called once per layer, after it ran, with the layer's outputs under their ONNX
/// names and the node that produced them (the last node fused into the layer). Tensors fused away
/// inside a layer (PlanLayer::hidden) are never reported and cannot be returned: marking one as
/// an output prevents the fusion instead (Plan::prevented says which). Folded constants are
/// returned when marked but not reported to the observer. Nodes with subgraphs (If, Loop, Scan)
/// are not supported.
///
/// One backend runs one inference at a time.
class EngineBackend final : public Backend {
 public:
  explicit EngineBackend(EngineOptions options = {}, const ops::OpRegistry& registry = ops::reference_registry());
  ~EngineBackend() override;

  std::string name() const override { return "engine"; }
  /// Supported when the reference registry has a kernel for the node (every op without a tactic
  /// runs its reference kernel) and the node has no subgraph.
  Support supports(const Node& node, int64_t opset) const override;

  /// The plan of the last successful prepare(), or nullptr.
  const Plan* plan() const;

  /// The plan's layers in execution order (op: the anchor node's op type).
  const std::vector<LayerInfo>* layers() const override { return engine_ ? &layer_infos_ : nullptr; }
  bool can_profile() const override { return true; }
  /// Runs one layer with its tactic, precision and faults. Errors: kInvalidArgument for an index
  /// out of range or a wrong number of inputs; the layer's own errors.
  Result<std::vector<Tensor>> run_layer_alone(size_t index, std::span<const Tensor* const> inputs) override;

 protected:
  /// Builds or loads the plan. Errors: kUnsupportedOp listing the unsupported nodes; the
  /// builder's and loader's errors (see build_engine, load_engine).
  Status prepare_impl(const Model& model, const PrepareOptions& options) override;
  /// Streamed (RunOptions::stream), the marked outputs folded at build time go to the observer
  /// first, grouped by the model node that produces them, and are not returned again.
  /// Errors: the failing layer's Status (tagged with its node), kCancelled when RunOptions::cancel
  /// is set (polled between layers) or the observer returns false.
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override;

 private:
  struct Step;

  EngineOptions options_;
  const ops::OpRegistry& registry_;
  int num_threads_ = 1;
  std::unique_ptr<BuiltEngine> engine_;
  std::vector<Step> steps_;
  std::vector<LayerInfo> layer_infos_;
  std::vector<std::string> slot_names_;
  std::vector<int> input_slots_;   // graph runtime inputs
  std::vector<int> output_slots_;  // per output name: the slot, or -1 for a folded constant
  // The folded constant outputs by the model node that produces them (indices of output_names_),
  // reported first when the outputs are streamed.
  std::vector<std::pair<int64_t, std::vector<size_t>>> constants_by_node_;
  std::vector<bool> reported_first_;  // per output: in constants_by_node_
};

}  // namespace vn::engine
