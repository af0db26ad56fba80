// SPDX-License-Identifier: Apache-2.0
// Triage sessions: the state of a triage walk kept in its work folder (`<workdir>/session.json`),
// rewritten atomically (temporary file in the same folder, fsync, rename) after every answered
// step and every reduce iteration, so that `vernier triage --resume DIR` continues a walk that a
// crash, `kill -9` or Ctrl-C stopped, without probing an answered step or re-running a recorded
// check again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/debug/reduce.h"
#include "core/debug/replay.h"
#include "core/flow/triage.h"

namespace vn::flow {

/// The state file's name inside the work folder.
inline constexpr std::string_view kSessionFile = "session.json";
/// The folder inside the work folder for the files the state refers to (the rewritten model, the
/// failing case awaiting its bundle).
inline constexpr std::string_view kSessionDir = "session";

/// One recorded iteration of a reduction in progress.
struct SessionIteration {
  std::string key;  ///< the debug replay key ("_N3_ddmin")
  std::string phase;
  int64_t iteration = 0;
  int64_t nodes = 0;  ///< nodes of the candidate
  debug::Verdict verdict = debug::Verdict::kUnresolved;
  std::string reason;
  int run = 0;  ///< the run of the session that checked it
};

/// A reduction in progress: the step it belongs to, what it has cost so far and its iterations in
/// the order they were checked.
struct SessionReduce {
  std::string node;
  double seconds = 0;
  int64_t builds = 0;
  int64_t checks = 0;
  std::vector<SessionIteration> iterations;

  /// The iterations as a debug replay: a reduction given it checks none of them again.
  debug::DebugReplay replay() const;
};

/// A step an undo took back, kept to be taken again unprobed while the walk retraces its way: the
/// step as its probe proposed it (answer: the proposal; not overridden), what the walk handed on
/// after its probe, its reduction's iterations (null when none) and the run that probed it.
struct SessionRedo {
  TriageStep step;
  nlohmann::ordered_json walk;
  nlohmann::ordered_json iterations;
  int run = 0;
};

/// The state of one triage session and its file.
///
/// File format (`session.json`, "format": "vernier-triage-session", "version": 1):
/// - "command": the caller's description of the run (the CLI keeps its arguments and folder there,
///   so a resume reproduces the run's options); "model_hash": engine::model_hash of the model;
/// - "runs": how many runs worked on the session (1 for the first; each --resume adds one);
/// - "path": the answered steps in order (node, answer, summary, evidence, seconds, engine builds,
///   checks, overridden, and "redone" when taken again after an undo) each with the "run" that
///   probed it, the "walk" it handed on (as "walk" below, what an undo back to it restores), and
///   for a step that reduced, the "reduce_iterations" it checked (as in "reduce" below);
/// - "next": the node the walk continues at (null once it has ended);
/// - "pending": a question whose probe has answered but whose answer the `decide` hook has not
///   confirmed yet (the probe is not run again; the hook is asked again), with its
///   "reduce_iterations" when it reduced;
/// - "redo": the steps the last undos took back, in walk order, each as its probe proposed it
///   with its "walk" and "reduce_iterations": taken again unprobed while the walk reaches their
///   nodes in turn, dropped at the first node that differs;
/// - "undos": every undo, in order: {"run", "at" (the question then awaiting its answer),
///   "back_to" (the question asked again), "undone": [{"node", "answer", "overridden"}]};
/// - "walk": what the answered steps hand on to later probes (written and read by triage.cpp);
/// - "reduce": a reduction in progress ({"node", "seconds", "engine_builds", "checks",
///   "iterations": [{"key", "phase", "iteration", "nodes", "verdict", "reason", "run"}]});
/// - "outcome", "culprit", "bundle" once the walk has ended.
class TriageSession {
 public:
  /// A new session for `workdir` (created); nothing is written until save().
  static Result<TriageSession> create(const std::filesystem::path& workdir, nlohmann::ordered_json command,
                                      std::string model_hash);
  /// Reads `<workdir>/session.json` and counts a new run. kInvalidArgument when the folder holds no
  /// session; kIoError naming the field when the file is not a session of this version. Temporary
  /// files an interrupted write left in the folder are removed.
  static Result<TriageSession> open(const std::filesystem::path& workdir);
  /// Whether `workdir` holds a session file.
  static bool exists(const std::filesystem::path& workdir);

  const std::filesystem::path& workdir() const { return workdir_; }
  std::filesystem::path file() const { return workdir_ / kSessionFile; }
  /// `<workdir>/session/`, created on first use.
  Result<std::filesystem::path> files_dir() const;
  const nlohmann::ordered_json& command() const { return command_; }
  const std::string& model_hash() const { return model_hash_; }
  int run() const { return run_; }
  /// Whether the session was read from its file (a resume) rather than started.
  bool resumed() const { return resumed_; }

  /// Answered steps, in order (marked resumed once read back).
  const std::vector<TriageStep>& path() const { return path_; }
  /// The node the walk continues at; empty before the first save of a new session (the chart's
  /// start) and once the walk has ended.
  const std::string& next() const { return next_; }
  bool ended() const { return ended_; }
  const std::string& outcome() const { return outcome_; }
  const std::string& culprit() const { return culprit_; }
  const std::string& bundle() const { return bundle_; }
  const nlohmann::ordered_json& walk() const { return walk_; }
  const std::optional<TriageStep>& pending() const { return pending_; }
  /// What the walk handed on after the probe of path()[index] (null for a step recorded by a
  /// Vernier that did not keep it).
  const nlohmann::ordered_json& step_walk(size_t index) const { return path_walks_[index]; }
  const std::vector<SessionRedo>& redo() const { return redo_; }
  /// The undos so far, as the file's "undos".
  const nlohmann::ordered_json& undos() const { return undos_; }
  const std::optional<SessionReduce>& reduce() const { return reduce_; }

  /// Marks the walk as being at `node` (the chart's start, for a new session).
  void start_at(std::string node) { next_ = std::move(node); }
  /// What the walk hands on before any step (a new session's first save).
  void set_walk(nlohmann::ordered_json walk) { walk_ = std::move(walk); }
  /// A question's probe has answered `step`, and its hand-on is `walk`; the answer awaits `decide`.
  void set_pending(const TriageStep& step, nlohmann::ordered_json walk);
  /// `step` is answered, the walk continues at `next` (empty: it ended) and `walk` is what the
  /// steps so far hand on. Clears the pending answer and the reduction in progress.
  void record_step(TriageStep step, std::string next, nlohmann::ordered_json walk);
  /// Takes back path()[index] and every step after it, and the pending question (which must be
  /// set): they go before the redo steps, path()[index] becomes the pending question again as its
  /// probe proposed it, with the walk it handed on then (walk()), and the walk continues at it.
  /// The undo is added to undos().
  void undo_to(size_t index);
  /// The first redo step when it is at `node`, taken off the redo list and made the pending step
  /// (its walk is walk()); otherwise the redo list is dropped (the walk left the way it retraces)
  /// and nothing is returned.
  std::optional<SessionRedo> take_redo(const std::string& node);
  /// One more iteration of the reduction of step `node` (starting one when none is in progress for
  /// it), with the step's cost so far.
  void record_iteration(const std::string& node, const debug::ReduceIteration& iteration, double seconds,
                        int64_t builds, int64_t checks);
  /// The walk ended with `outcome` (the chart's end or a probe's), naming `culprit`; `bundle` is
  /// the bug-report bundle when one was written.
  void end(std::string outcome, std::string culprit, std::string bundle);

  /// Writes the state atomically (kIoError naming the file).
  Status save() const;
  nlohmann::ordered_json to_json() const;

 private:
  TriageSession() = default;

  std::filesystem::path workdir_;
  nlohmann::ordered_json command_;
  std::string model_hash_;
  int run_ = 1;
  bool resumed_ = false;
  std::vector<TriageStep> path_;
  std::vector<int> path_runs_;  ///< the run that probed each step of path_
  /// The iterations of each step's reduction ("iterations" of "reduce"), null for steps without one.
  std::vector<nlohmann::ordered_json> path_iterations_;
  std::string next_;
  bool ended_ = false;
  std::string outcome_, culprit_, bundle_;
  nlohmann::ordered_json walk_ = nlohmann::ordered_json::object();
  /// The walk each step of path_ handed on (null when unknown).
  std::vector<nlohmann::ordered_json> path_walks_;
  std::optional<TriageStep> pending_;
  /// The pending step's recorded reduction (null when none, or while reduce_ holds it) and the run
  /// that probed it.
  nlohmann::ordered_json pending_iterations_;
  int pending_run_ = 0;
  std::vector<SessionRedo> redo_;
  nlohmann::ordered_json undos_ = nlohmann::ordered_json::array();
  std::optional<SessionReduce> reduce_;
};

}  // namespace vn::flow
