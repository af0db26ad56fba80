// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/ops/op_registry.h"

namespace vn::ref {

/// The oracle: an interpreter of the standard ONNX ops, computing float models in their own
/// precision with numerically careful kernels (core/ops). Tensors are freed as soon as their last
/// reader has run, so peak memory follows the live set rather than the whole graph.
class ReferenceBackend final : public Backend {
 public:
  /// Uses `registry` for kernels (the process-wide reference registry by default).
  explicit ReferenceBackend(const ops::OpRegistry& registry = ops::reference_registry());

  std::string name() const override { return "ref"; }
  /// Supported when a kernel exists for the node's domain, op type and the model's opset.
  Support supports(const Node& node, int64_t opset) const override;

 protected:
  /// Orders the nodes topologically, resolves every kernel (failing with the list of all nodes
  /// that have none), and plans tensor lifetimes.
  Status prepare_impl(const Model& model, const PrepareOptions& options) override;
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override;

 private:
  struct Step {
    int64_t node_index = 0;
    int64_t opset = 0;
    ops::KernelFn fn = nullptr;
    std::vector<int> inputs;     // slot per node input; -1 for an omitted optional input
    std::vector<int> outputs;    // slot per node output; -1 for an unnamed output
    std::vector<int> release;    // slots whose last reader is this step
  };

  const ops::OpRegistry& registry_;
  const Graph* graph_ = nullptr;
  int num_threads_ = 1;
  std::vector<Step> steps_;
  std::vector<std::string> slot_names_;
  std::vector<Tensor> constants_;          // per slot: the initializer, or undefined
  std::vector<int> input_slots_;           // runtime inputs, graph order
  std::vector<int> output_slots_;          // per output_names_ entry
  std::vector<bool> keep_;                 // slots never released (outputs, constants)
};

}  // namespace vn::ref
