// SPDX-License-Identifier: Apache-2.0
// `debug reduce`: shrinks a failing model to the smallest subgraph that still fails a check.
// Polygraphy's bisect and linear modes (an outputs phase, then an inputs phase) and a graph-aware
// delta-debugging mode. Every candidate is a valid model whose boundary tensors carry the dtypes
// and shapes of the reference run, fed with the reference backend's values of those tensors for
// every feed, so a candidate sees what it would see inside the full model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/debug/check.h"
#include "core/debug/replay.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

enum class ReduceMode : uint8_t {
  kBisect,  ///< Polygraphy's bisect: about log2(N) checks per phase; assumes failure is monotone
  kLinear,  ///< Polygraphy's linear: every marker tried in both phases, no early exit
  kDdmin,   ///< contiguous ranges of the topological order, then connected delta debugging
};

std::string_view reduce_mode_name(ReduceMode mode);
std::optional<ReduceMode> reduce_mode_from_name(std::string_view name);

/// A candidate subgraph: node indices of the reducer's model (ascending) and its boundary.
struct ReduceCandidate {
  std::vector<int64_t> nodes;
  std::vector<std::string> inputs;   ///< runtime inputs: tensors read from outside the candidate
  std::vector<std::string> outputs;  ///< what the check compares
  bool operator==(const ReduceCandidate&) const = default;
};

/// One check of a reduction.
struct ReduceIteration {
  std::string key;     ///< the debug replay key ("_N3_outputs")
  std::string phase;   ///< "outputs", "inputs" or "ddmin"
  int64_t iteration = 0;
  ReduceCandidate candidate;
  CheckResult result;
  bool replayed = false;  ///< the verdict came from --load-debug-replay
};

/// Where a reduction stands, after every check.
struct ReduceProgress {
  std::string phase;
  int64_t checks_done = 0;
  /// An upper bound on the checks still to come, whatever their verdicts; -1 when there is none
  /// (ddmin over a range of more nodes than DdminBound tabulates).
  int64_t checks_left = 0;
  int64_t nodes_kept = 0;    ///< nodes of the smallest failing candidate so far
  int64_t total_nodes = 0;
};

/// The check of one candidate; `key` identifies the iteration (for artifacts). Errors end the
/// reduction (kCancelled for quit or Ctrl-C).
using ReduceOracle = std::function<Result<CheckResult>(const ReduceCandidate& candidate, const std::string& key)>;
/// Called after every check (the CLI saves the replay and updates its progress line there).
using ReduceObserver = std::function<Status(const ReduceIteration& iteration, const ReduceProgress& progress)>;

struct ReduceOptions {
  ReduceMode mode = ReduceMode::kBisect;
  bool reduce_outputs = true;  ///< bisect/linear: run the outputs phase
  bool reduce_inputs = true;   ///< bisect/linear: run the inputs phase
};

struct ReduceResult {
  ReduceCandidate minimal;                  ///< the smallest failing candidate (the whole model when none failed)
  bool failed_any = false;                  ///< some candidate failed
  std::optional<ReduceCandidate> min_good;  ///< Polygraphy's --min-good choice, when one passed
  std::vector<ReduceIteration> history;
  int64_t checks = 0;  ///< checks run (replayed iterations excluded)
};

/// A model prepared for reduction: Constant nodes, and nodes computed from initializers alone,
/// lowered to initializers (they are never nodes of a candidate), and the reference values of every
/// tensor for every feed.
class Reducer {
 public:
  /// Loads nothing; runs the reference backend on `model` for every feed with every tensor kept.
  /// Errors: the reference's (unsupported op, bad feed), kInvalidArgument without feeds.
  static Result<Reducer> create(Model model, std::vector<TensorMap> feeds, int threads);

  /// The model candidates are cut from (Constant nodes lowered).
  const Model& model() const { return model_; }
  int64_t node_count() const { return static_cast<int64_t>(model_.graph.nodes.size()); }
  /// The whole model as a candidate.
  ReduceCandidate whole() const;

  /// The candidate as a model: its nodes, its inputs typed from the reference values (integer
  /// inputs that hold the same value for every feed and are not graph inputs are frozen into
  /// initializers, so shape arithmetic stays constant as in the full model), its outputs typed
  /// likewise. Passes the ONNX checker.
  Result<Model> build_model(const ReduceCandidate& candidate) const;
  /// The reference values of the candidate model's runtime inputs, one map per feed.
  std::vector<TensorMap> build_feeds(const ReduceCandidate& candidate) const;
  /// The reference values of the candidate's outputs, one map per feed: what the reference backend
  /// computes for the candidate model on build_feeds(), known without running it.
  std::vector<TensorMap> reference_outputs(const ReduceCandidate& candidate) const;
  /// "2 nodes: conv3 (Conv), relu3 (Relu) | inputs: x3 | outputs: y3".
  std::string describe(const ReduceCandidate& candidate) const;

  /// Runs the reduction. Iterations recorded in `replay` are not checked again (their verdicts
  /// drive the search); every new verdict is recorded there before `observe` is called.
  Result<ReduceResult> reduce(const ReduceOptions& options, DebugReplay& replay, const ReduceOracle& check,
                              const ReduceObserver& observe) const;

  /// The candidate made of `nodes` with its boundary derived: inputs are the tensors they read
  /// from outside, outputs the tensors they produce that flow out (read by a node outside the set,
  /// read by none of the set, or graph outputs).
  ReduceCandidate candidate_of(std::vector<int64_t> nodes) const;

 private:
  Reducer() = default;

  Model model_;
  std::vector<TensorMap> values_;  ///< every tensor of the reference run, per feed
  std::vector<std::vector<std::string>> node_inputs_;  ///< runtime tensors each node reads
  std::vector<std::vector<std::string>> node_outputs_;
  std::vector<std::vector<int64_t>> preds_;            ///< the nodes each node reads from
  std::unordered_map<std::string, int64_t> producer_;  ///< tensor -> producing node
  std::unordered_map<std::string, std::vector<int64_t>> consumers_;  ///< tensor -> reading nodes
};

}  // namespace vn::debug
