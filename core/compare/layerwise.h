// SPDX-License-Identifier: Apache-2.0
// Layer-wise comparison: the reference and the backend under test run the same model with its
// tensors marked, every tensor both produce is compared by exact name as soon as both sides have
// it and is then freed, and each layer of the backend under test can also be run alone on the
// reference's inputs (its local error). The layers are then ranked as culprits.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/compare/compare.h"
#include "core/compare/tensor_digest.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn {

/// How far a comparison is from its tolerance: the factor by which atol or rtol (whichever needs
/// less) would have to grow for the tensor to pass. At most 1 exactly when it passed; 0 for
/// identical tensors; +inf for NaN errors and tensors that cannot be compared.
double tolerance_excess(const TensorComparison& comparison);

/// One layer of the backend under test, with what was measured about it.
struct LayerComparison {
  LayerInfo layer;
  /// Per output: index into LayerwiseComparison::tensors of its accumulated comparison, or -1
  /// when it was not compared (not marked on both sides).
  std::vector<int> accumulated;
  /// Per output: the layer run alone on the reference's inputs against the reference's outputs.
  /// Empty when local errors were not measured or the layer could not be run alone.
  std::vector<TensorComparison> local;
  std::string local_skipped;  ///< why local errors are missing for this layer, when they were asked for

  double accumulated_excess = 0;  ///< worst tolerance_excess of its outputs' accumulated comparisons
  double input_excess = 0;        ///< worst tolerance_excess of its inputs' accumulated comparisons
  double local_excess = -1;       ///< worst tolerance_excess of `local`; -1 when not measured
  /// Every input whose accumulated error was measured is within tolerance (graph inputs are
  /// exact; inputs that were not compared are not held against the layer).
  bool inputs_within = true;
  /// The layer's own error breaks tolerance while its inputs were within it: its local error
  /// when measured, else its accumulated error.
  bool introduces = false;
  /// Produces NaN or Inf (accumulated or local) where the reference has none.
  bool nonfinite = false;
  /// The culprit score: local_excess when measured, else accumulated_excess / max(1, input_excess)
  /// (how much the layer adds to the error it receives).
  double score = 0;
  int rank = 0;  ///< 1 = likeliest culprit; 0 for layers without any error
};

/// The outcome of a layer-wise comparison of one feed.
struct LayerwiseComparison {
  std::vector<TensorComparison> tensors;  ///< accumulated errors, in the order the test produced them
  std::vector<LayerComparison> layers;    ///< the test's layers in execution order
  std::vector<std::string> only_in_test;  ///< marked by the test only: never compared
  std::vector<std::string> only_in_ref;   ///< marked by the reference only: never compared
  std::vector<std::string> not_produced;  ///< marked on both sides, but one side's run never produced it
  bool local_errors = false;              ///< whether local errors were measured
  std::optional<size_t> first_culprit;    ///< the first layer (execution order) that introduces the error
  std::optional<size_t> first_nonfinite;  ///< the first layer producing NaN/Inf the reference does not
  /// The most tensor bytes the comparison held at once, both sides together: the memory streaming
  /// needs beyond the backends' own (views of the model's initializers cost nothing).
  size_t peak_held_bytes = 0;

  /// Every compared tensor passed (and there was at least one).
  bool passed() const;
  /// Indices into `layers` of the ranked layers, likeliest culprit first.
  std::vector<size_t> ranking() const;
};

struct LayerwiseOptions {
  CompareConfig config;
  /// Also run every layer of the backend under test alone on the reference's inputs.
  bool local_errors = false;
  /// Polled by both runs; when it becomes true the comparison stops with kCancelled.
  const std::atomic<bool>* cancel = nullptr;
  /// When set, called once with every tensor either side returns (`test` says which side), in the
  /// order each side produced them, one call at a time but from either side's thread: how a
  /// caller that must save the outputs keeps them while the comparison streams.
  std::function<void(bool test, const std::string& name, const Tensor& tensor)> on_tensor;
  /// When set, every accumulated comparison keeps the digest of its pair (TensorComparison::digest),
  /// computed by the thread that compares it: what a browser needs of the tensors, which are freed.
  std::optional<DigestLimits> digest;
  /// The threads the two runs share: the reference gets half (rounded up), the test the rest, at
  /// least one each, and neither more than it was prepared with. 0: the machine's cores.
  int threads = 0;
  /// For a test backend without layers of its own: the graph whose nodes are its layers (the
  /// original model, when the test runs a converted copy of it); null: the test's own model.
  const Graph* layer_graph = nullptr;
};

/// Runs `ref` and `test` (both prepared on the same model, usually with PrepareOptions::mark_all)
/// on `feeds` and compares every tensor both return, by exact name only: tensors returned by one
/// side are listed, never paired by position. The runs stream (RunOptions::stream) side by side:
/// the reference on the calling thread, the test on a thread of its own, each with its share of
/// `threads`; each pair is compared by whichever side is not behind the other, and each tensor is
/// freed once compared. A side that holds more than a few MiB of tensors the other has not produced yet waits
/// for it, so the comparison holds about the live tensors of one inference rather than every
/// activation twice. With `local_errors`, each layer of `test` (Backend::layers) is run alone, on
/// the test's thread, as soon as the reference has produced its inputs and outputs. Float64 values of an fp64
/// reference fed to a layer are narrowed to the dtype the model declares (float32 when it declares
/// none). The culprit fields are filled (rank_culprits).
/// Errors: either backend's run error (the other is stopped); kInvalidArgument when local errors
/// are asked of a test backend without layers.
Result<LayerwiseComparison> compare_layerwise(Backend& ref, Backend& test, const TensorMap& feeds,
                                              const LayerwiseOptions& options);

/// Builds a layer-wise comparison from two complete sets of results (saved or loaded files): the
/// layers are the nodes of `graph` in topological order, each reporting its outputs. Without local
/// errors, the culprits come from accumulated errors alone; with `digest`, each comparison keeps its
/// pair's digest. Errors: kInvalidModel for a cyclic graph.
Result<LayerwiseComparison> compare_layerwise_results(const TensorMap& test, const TensorMap& ref, const Graph& graph,
                                                      const CompareConfig& config,
                                                      const std::optional<DigestLimits>& digest = std::nullopt);

/// The layers of `graph` as a backend without fusion would report them: one per node (Constant
/// nodes excepted), in topological order, inputs without initializers.
Result<std::vector<LayerInfo>> graph_layers(const Graph& graph);

/// Fills the excess, introduces, nonfinite, score and rank fields of every layer and the
/// first_culprit and first_nonfinite of `result`, from its tensors and local comparisons.
void rank_culprits(LayerwiseComparison& result);

}  // namespace vn
