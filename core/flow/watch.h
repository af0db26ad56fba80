// SPDX-License-Identifier: Apache-2.0
// What a triage tells a watcher while it walks (the full-screen UI's screens): the model it works
// on, the layer-wise step's comparison, the extracted subgraph, every reduce iteration, and how far
// each long probe got, with counts and an estimate. Core never waits on a watcher: every hook is
// optional and only handed copies or immutable values.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/debug/reduce.h"
#include "core/ir/graph.h"
#include "core/session/layerwise_session.h"

namespace vn::flow {

/// What a probe counts while it works.
enum class ProgressUnit : uint8_t {
  kNone,   ///< the stage is not counted
  kBuild,  ///< engine builds (the intermittency probe: build 3 of 5)
  kLayer,  ///< layers of the engine under test (layer-wise: layer 120 of 683)
  kCheck,  ///< engine-vs-reference checks (a reduction: check 7 of at most 12)
};

/// How far the running probe got.
struct ProbeProgress {
  std::string node;   ///< the flowchart node whose probe runs
  std::string stage;  ///< what it does now, in English ("comparing layer by layer")
  ProgressUnit unit = ProgressUnit::kNone;
  int64_t done = 0;      ///< units finished; the one at hand is done + 1 while done < total
  int64_t total = 0;     ///< units in all, 0 when unknown
  bool at_most = false;  ///< `total` is an upper bound (a reduction ends early when it can)
  double elapsed = 0;    ///< seconds since the probe started
  /// Seconds left, once a unit finished and the total is known (at most this with at_most):
  /// the stage's mean time per unit so far times the units left.
  std::optional<double> remaining;
  std::string item;  ///< the name of what the unit at hand works on (the layer "conv2"), if any
};

/// The extract step's subgraph and its check.
struct ExtractWatch {
  std::string layer;               ///< the layer the layer-wise comparison named
  std::vector<std::string> nodes;  ///< the names of the subgraph's nodes in the walk's model
  std::string subgraph;            ///< debug::Reducer::describe of it
  std::string verdict;             ///< "bad" (fails alone), "good", "unresolved"
  std::string reason;
};

/// A reduction that starts.
struct ReduceStartWatch {
  int64_t total_nodes = 0;
  std::vector<std::string> labels;  ///< "conv2 (Conv)" for every node of the reduced model, in order
  /// Where the external check reads each candidate (vernier_debug.onnx in the work folder); empty
  /// for the built-in check.
  std::filesystem::path candidate_file;
};

/// The hooks of a triage's watcher (TriageConfig::watch). All optional; called on the thread that
/// runs the triage (progress also on the layer-wise comparison's worker thread), one call at a
/// time. They must return quickly: the walk waits for them.
struct TriageWatch {
  /// The model the walk works on: at the start, and again when a probe rewrote it (sanitize).
  std::function<void(const Model& model)> model;
  /// The layer-wise step's comparison of the walk's model, each tensor's comparison with its
  /// digest, each layer's precision and tactic; or null with the reason when the step compared
  /// nothing (an engine that cannot return intermediate tensors). A resumed walk publishes the
  /// comparison its session kept (the layers' errors, no tensors).
  std::function<void(std::shared_ptr<const session::LayerwiseSession> session, const std::string& why_none)> layerwise;
  std::function<void(const ExtractWatch& extract)> extract;
  std::function<void(const ReduceStartWatch& start)> reduce_start;
  /// The check of `candidate` starts.
  std::function<void(const debug::ReduceCandidate& candidate)> reduce_check;
  /// After every check, as the reducer's observer sees it (replayed iterations of a resumed
  /// reduction too).
  std::function<void(const debug::ReduceIteration& iteration, const debug::ReduceProgress& progress)> reduce_iteration;
  /// The reduction ended: the smallest failing candidate, when one failed.
  std::function<void(const std::optional<debug::ReduceCandidate>& minimal)> reduce_end;
  /// Whenever a probe starts a stage, and as it counts (at most about twenty times a second).
  std::function<void(const ProbeProgress& progress)> progress;
};

/// Counts a probe's progress for TriageWatch::progress: the time since the probe started, each
/// stage's units and the estimate of the time left.
class ProgressReporter {
 public:
  ProgressReporter(const TriageWatch* watch, std::string node);

  /// A new stage: `total` units of `unit` to come (0: not counted; `at_most`: an upper bound).
  void stage(std::string stage, ProgressUnit unit = ProgressUnit::kNone, int64_t total = 0, bool at_most = false);
  /// `done` units of the stage finished, the next working on `item`; `total` replaces the stage's
  /// when given (a reduction's bound moves as it goes).
  void count(int64_t done, std::string item = {}, std::optional<int64_t> total = std::nullopt);

 private:
  void publish(bool force);

  const TriageWatch* watch_;
  ProbeProgress progress_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point stage_start_;
  std::chrono::steady_clock::time_point published_{};
};

}  // namespace vn::flow
