// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

namespace vn {

/// Can a backend run this node? `reason` says why not, for the user.
struct Support {
  bool supported = true;
  std::string reason;
};

/// What to build: which tensors become outputs, and with how many threads.
struct PrepareOptions {
  /// Tensors to return in addition to the graph outputs (Polygraphy's `--onnx-outputs`).
  std::vector<std::string> outputs;
  /// Return every node output except those of Constant nodes (layer-wise mode).
  bool mark_all = false;
  /// When true, `outputs` replaces the graph outputs instead of adding to them.
  bool replace_outputs = false;
  int num_threads = 1;
};

/// Called after each node with the tensors it produced, in execution order. Tensors are valid
/// only during the call (the backend frees them by lifetime afterwards); copy what must be kept.
/// Returning false stops the run with kCancelled.
using NodeObserver = std::function<bool(int64_t node_index, const Node& node, const TensorMap& outputs)>;

/// The time one main-graph node (or engine layer) took inside run(): the kernel call alone, on a
/// steady clock. A node with subgraphs (If, Loop, Scan) includes its bodies. The names are views
/// of the backend's own (its model's nodes, its layers): valid while the backend lives and is not
/// prepared again. Copies of them, allocated between a run's tensors, split the heap's freed
/// activation buffers, and the next run's outputs faulted in fresh pages (EfficientNetV2-S with
/// --profile: 1500 more page faults a run, its depthwise layers 2.5x slower).
struct LayerTime {
  std::string_view name;  ///< the node's name, or the engine layer's (fused layers join their nodes' names)
  std::string_view op;    ///< the node's op type; a layer's is its main node's
  int64_t node = -1;  ///< the main-graph node (a layer's: the one whose outputs it reports)
  double ms = 0;
};

struct RunOptions {
  NodeObserver observer;
  /// When set, a backend that can time its layers (Backend::can_profile) appends one entry per
  /// node or layer it executed, in execution order; others leave it untouched. Clocks are read
  /// only when it is set.
  std::vector<LayerTime>* profile = nullptr;
  /// Polled between nodes; when it becomes true the run stops with kCancelled.
  const std::atomic<bool>* cancel = nullptr;
  /// Streaming (layer-wise comparison): outputs are freed by lifetime like any other tensor
  /// instead of being kept for the result, so the observer is the only place to see those a
  /// node produces. run() then returns only the outputs the observer was not given (graph inputs
  /// marked as outputs, constants the backend does not report), in output order.
  bool stream = false;
};

/// One layer of a backend that can run its layers one at a time (see Backend::layers).
struct LayerInfo {
  std::string name;                  ///< the backend's layer name (fused layers join their nodes' names)
  std::string op;                    ///< the op type of the layer's main node
  int64_t node = -1;                 ///< the node whose outputs the layer reports (its last node)
  std::vector<std::string> inputs;   ///< runtime tensors read, without constants
  std::vector<std::string> outputs;  ///< tensors visible outside the layer
};

/// An inference backend. The public methods are non-virtual: they validate, then call the
/// protected *_impl methods, so every backend reports bad feeds the same way.
class Backend {
 public:
  virtual ~Backend() = default;

  /// Short name used in reports and runner names ("ref", "engine").
  virtual std::string name() const = 0;
  /// Whether the backend can run `node` under the model's opset `opset`.
  virtual Support supports(const Node& node, int64_t opset) const = 0;

  /// Builds the backend for `model`. The model must outlive the backend. Fails listing every
  /// unsupported node, or naming an unknown output tensor.
  Status prepare(const Model& model, const PrepareOptions& options);

  /// Runs one inference. Every runtime input must be fed with the declared dtype and a shape
  /// compatible with the declared one; extra feeds are ignored. Returns the output tensors in
  /// output order.
  Result<TensorMap> run(const TensorMap& feeds, const RunOptions& options = {});

  /// Names of the tensors run() returns, in order (valid after prepare()).
  const std::vector<std::string>& output_names() const { return output_names_; }
  /// The model given to prepare(), or nullptr.
  const Model* model() const { return model_; }

  /// The layers in execution order, for backends that can run a layer alone (local errors);
  /// nullptr for the others. Valid after prepare().
  virtual const std::vector<LayerInfo>* layers() const { return nullptr; }
  /// Whether run() fills RunOptions::profile (the reference and the built-in engine do; engines
  /// in other processes report only their total time).
  virtual bool can_profile() const { return false; }
  /// Runs layer `index` of layers() alone on `inputs` (one per LayerInfo::inputs, e.g. another
  /// backend's values), returning one tensor per LayerInfo::outputs. The inputs are taken as
  /// given (a layer of reduced precision rounds them on entry, as it would its producers'
  /// values), so the difference from the other backend's outputs is this layer's own error.
  /// Not to be called while run() is executing on another thread.
  virtual Result<std::vector<Tensor>> run_layer_alone(size_t index, std::span<const Tensor* const> inputs);

 protected:
  virtual Status prepare_impl(const Model& model, const PrepareOptions& options) = 0;
  virtual Result<TensorMap> run_impl(const TensorMap& feeds, const RunOptions& options) = 0;

  std::vector<std::string> output_names_;

 private:
  const Model* model_ = nullptr;
};

/// The tensors a prepare() with `options` returns, in order: graph outputs first (unless
/// replaced), then marked tensors in node order, without duplicates. Fails naming a marked
/// tensor that no node, input or initializer defines.
Result<std::vector<std::string>> resolve_output_names(const Graph& graph, const PrepareOptions& options);

/// For backends that get all their tensors at once (external engines, runners): calls
/// options.observer once per node of `graph` that produced a tensor of `result`, in node order,
/// with those tensors, and with options.stream erases them from `result` afterwards. kCancelled
/// when the observer returns false.
Status report_in_node_order(const Graph& graph, TensorMap& result, const RunOptions& options);

/// Checks `feeds` against the graph's runtime inputs: presence, dtype and static dims.
Status validate_feeds(const Graph& graph, const TensorMap& feeds);

}  // namespace vn
