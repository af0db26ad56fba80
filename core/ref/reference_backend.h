// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/backend/backend.h"
#include "core/ops/op_registry.h"

namespace vn::ref {

/// The deepest nesting of subgraphs (an If inside a Loop body inside ...) the reference backend
/// runs; prepare() refuses deeper models with kInvalidModel.
inline constexpr int kMaxSubgraphDepth = 64;

/// How the reference backend computes.
struct ReferenceOptions {
  /// Compute float models in float64 throughout (`--ref-precision fp64`). prepare() rewrites a
  /// private copy of the model (see widen_model_to_fp64 in core/ref/fp64.h), so kernels run as
  /// usual on float64 tensors. Feeds keep the dtypes the model declares and are widened on entry;
  /// run() returns every tensor in the dtype the original model declares for it (graph inputs,
  /// outputs, value_info, initializers), or as float64 where it declares none. The observer sees
  /// the float64 tensors. Operands the ONNX spec pins to float32 (Resize and Upsample scales,
  /// quantization scales, NonMaxSuppression's boxes, scores and thresholds) are narrowed to float32
  /// at that node, and the float results of ops that can only produce float32 (DequantizeLinear,
  /// DynamicQuantizeLinear's scale, TfIdfVectorizer) are widened again. Defaults to false.
  bool fp64 = false;
};

/// The oracle: an interpreter of the standard ONNX ops, computing float models in their own
/// precision (or in float64, see ReferenceOptions) with numerically careful kernels (core/ops).
/// Tensors are freed as soon as their last reader has run, so peak memory follows the live set
/// rather than the whole graph; a tensor that a node reads inside its subgraphs lives until that
/// node has run.
///
/// Subgraphs (If branches, Loop and Scan bodies) are prepared once, with the main graph, and run
/// through ops::SubgraphRunner: each body execution gets its own scope whose names not defined in
/// the body resolve against the enclosing scope's live tensors, however deep the nesting. The
/// observer and node indices concern main-graph nodes only; an error inside a body is reported on
/// the enclosing main-graph node, with the body node named in the message.
///
/// One backend runs one inference at a time.
class ReferenceBackend final : public Backend {
 public:
  /// Uses `registry` for kernels (the process-wide reference registry by default).
  explicit ReferenceBackend(const ops::OpRegistry& registry = ops::reference_registry());
  explicit ReferenceBackend(ReferenceOptions options, const ops::OpRegistry& registry = ops::reference_registry());
  ~ReferenceBackend() override;

  std::string name() const override { return "ref"; }
  /// Supported when a kernel exists for the node's domain, op type and the model's opset. The
  /// nodes of its subgraphs are checked by prepare().
  Support supports(const Node& node, int64_t opset) const override;
  bool can_profile() const override { return true; }

 protected:
  /// Orders the nodes of the main graph and of every subgraph topologically, resolves every
  /// kernel and plans tensor lifetimes. Errors: kUnsupportedOp listing the node without a kernel,
  /// or counting them when there are several ("3 nodes cannot run on the reference backend;
  /// first: ..."), a node inside a subgraph being reported on its enclosing main-graph node;
  /// kInvalidModel for a cyclic subgraph or subgraphs nested deeper than kMaxSubgraphDepth.
  Status prepare_impl(const Model& model, const PrepareOptions& options) override;
  /// Errors: the failing node's Status (tagged with the main-graph node), kCancelled when
  /// RunOptions::cancel is set (polled between nodes and every loop iteration) or the observer
  /// returns false, kInvalidModel when a node reads a tensor nothing defines.
  Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) override;

 private:
  struct Step;
  struct Chain;
  struct Plan;
  class Frame;

  /// Fills `plan` for `graph` (the main graph when `outputs` is non-null, else a subgraph whose
  /// outputs are its declared outputs) and prepares its subgraphs, `depth` levels down.
  /// Unsupported nodes are appended to `problems`; other failures are returned.
  Status build_plan(const Model& model, const Graph& graph, const std::vector<std::string>* outputs, int depth,
                    Plan& plan, std::vector<Status>& problems);
  /// Finds the elementwise chains of `plan` (elementwise_chain.h) and marks their steps: from a
  /// step reading one tensor (the source) and scalars, each next link the one step that reads the
  /// previous link's output, that output being no output of the graph (`kept`), and reading
  /// besides it only the source and scalars. `reads` lists each step's input slots.
  static void mark_chains(const Graph& graph, Plan& plan, const std::vector<std::vector<int>>& reads,
                          const std::vector<bool>& kept);

  const ops::OpRegistry& registry_;
  ReferenceOptions options_;
  int num_threads_ = 1;
  std::unique_ptr<Model> fp64_model_;  // the rewritten copy that runs in fp64 mode
  std::unique_ptr<Plan> main_;
  std::unordered_map<const Graph*, std::unique_ptr<Plan>> bodies_;
  std::vector<std::optional<DType>> output_dtypes_;  // fp64 mode: per output, the dtype to cast back to
};

}  // namespace vn::ref
