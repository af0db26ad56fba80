// SPDX-License-Identifier: Apache-2.0
// Headless triage: walks the flowchart from its start, answering every question with its probe
// (core/flow/triage.cpp), and keeps the evidence of each answer. The probes reuse the comparison,
// engine and debug APIs: the built-in engine-vs-reference check, repeated builds and the tactic
// diff, layer-wise comparison with local errors, and debug reduce.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/compare/compare.h"
#include "core/debug/check.h"
#include "core/debug/tolerance_reach.h"
#include "core/engine/builder.h"
#include "core/eut/engine_under_test.h"
#include "core/flow/flowchart.h"
#include "core/flow/watch.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::flow {

/// One answered node.
struct TriageStep {
  std::string node;                 ///< flowchart node id
  std::optional<bool> answer;       ///< questions only
  std::string summary;              ///< one line of evidence
  nlohmann::ordered_json evidence;  ///< the measurements behind it
  double seconds = 0;               ///< what the probe took
  int64_t builds = 0;               ///< engine builds the probe made
  int64_t checks = 0;               ///< engine-vs-reference checks among them
  bool overridden = false;          ///< the answer is the user's, not the probe's proposal
  bool resumed = false;             ///< probed by an earlier run of the session, restored from its state
  bool redone = false;              ///< probed before an undo and taken again unchanged: its evidence is that probe's
};

/// The answer to a question: yes, no, or take back the answer before it (undo).
enum class Decision : uint8_t { kYes, kNo, kUndo };

/// An undo: the steps taken off the path, oldest first. The first is the question asked again
/// (with its probe's evidence, not probed again); the question whose answer was awaited when the
/// user undid is `at`.
struct TriageUndo {
  std::string at;
  std::vector<TriageStep> undone;
};

class TriageSession;

/// What triage works on.
struct TriageConfig {
  Model model;
  /// The user's own inputs (--load-inputs); empty when none were given.
  std::vector<TensorMap> real_feeds;
  /// Synthetic inputs from the data options (always present).
  std::vector<TensorMap> synthetic_feeds;
  engine::BuildOptions build;  ///< the engine under test, as the user builds it
  /// The engine under test (`--engine-runner`); null: Vernier's built-in engine. Probes that need
  /// what it cannot do (rebuilds that differ, tactic replays, intermediate tensors) are answered
  /// from its capabilities, with the reason in their evidence.
  std::shared_ptr<eut::EngineUnderTest> engine;
  CompareConfig compare;       ///< tolerances of every check
  /// Where the default tolerances of `compare` came from (the flags, a precision's preset),
  /// said in the checks' evidence.
  debug::ToleranceOrigin tolerance_origin;
  int threads = 0;
  /// Engine builds of the intermittency probe (each with its own builder seed).
  int builds = 5;
  /// Where triage writes what it produces (tactic replays of the builds, the minimal model).
  std::filesystem::path workdir;
  /// The reduction's check (`--check`), run in `workdir` after each candidate is written there as
  /// vernier_debug.onnx with its inputs as vernier_debug_inputs.json; unset, the built-in check.
  /// The other probes always use the built-in check.
  std::optional<debug::ExternalChecker> check;
  /// Asked after each question's probe with the proposed answer (`proposed.answer`); returns the
  /// answer to follow, which may differ from the proposal (the user's override), or kUndo. Unset,
  /// the proposal is followed (headless). Called on the thread that runs triage and may block there
  /// (the UI waits for y, n, Enter or u). Not asked when a probe ends the walk itself.
  ///
  /// kUndo takes back the last answered question and every step after it: the walk goes back to
  /// that question and asks it again, with the evidence its probe gathered then (the probe does not
  /// run again), and what later probes were handed (the failing data, the layer-wise comparison,
  /// the culprit, the failing case, the counters) is as it was at that question. Answered as
  /// before, the steps that followed are taken again from their records, unprobed, as long as the
  /// walk reaches the same nodes. Undo needs a session (which keeps each step's state); without
  /// one, or before the first question, the question is asked again.
  std::function<Decision(const FlowNode& node, const TriageStep& proposed)> decide;
  /// Told of every undo, after the walk went back and before the question is asked again.
  std::function<void(const TriageUndo& undo)> on_undo;
  /// The session the walk is kept in (core/flow/session_file.h), or null for none. A new session is
  /// started at the chart's start; one read back (--resume) continues where it stopped: its
  /// answered steps are restored, not probed or asked again, with what they hand on to later
  /// probes, and a reduction in progress checks none of its recorded iterations again. The state
  /// is saved at the start, after every answered step and after every reduce iteration.
  TriageSession* session = nullptr;
  /// What the walk tells a watcher (the full-screen UI) as it goes: the model, the layer-wise
  /// comparison, the extracted subgraph, the reduction and every probe's progress (watch.h).
  TriageWatch watch;
};

/// Where triage ended.
struct TriageResult {
  std::vector<TriageStep> path;
  /// "localized" (a minimal failing case), "no_bug" (the chart's input-sensitive end),
  /// "no_failure" (nothing failed on any data), "not_localized" (a reduction that lost the
  /// failure; headless cannot edit the check).
  std::string outcome;
  std::string culprit;  ///< the layer or tactic named, when one was
  std::filesystem::path bundle;  ///< the bug-report bundle (write_bundle) when localized
  std::string engine;            ///< the engine triaged, as it describes itself
  /// The undos of the session, as its file's "undos" (core/flow/session_file.h); empty when none.
  nlohmann::ordered_json undos = nlohmann::ordered_json::array();
};

/// Called after every answered node, and first for every step a resumed session restores
/// (TriageStep::resumed).
using TriageObserver = std::function<void(const TriageStep& step, const FlowNode& node)>;

/// Walks `chart` headless; when it ends with a minimal failing case, writes the bug-report bundle
/// into `<workdir>/bundle` (core/flow/bundle.h). Errors: the probes' (a model the reference cannot run, unwritable
/// workdir), the session's (its state cannot be written, or does not fit `chart` and the model),
/// kCancelled (the session, if any, holds everything answered before).
Result<TriageResult> triage_headless(const Flowchart& chart, TriageConfig config, const TriageObserver& observe,
                                     const std::atomic<bool>* cancel = nullptr);

/// The report.json of a result: the path with evidence, the outcome, the culprit, and the undos
/// when there were any.
nlohmann::ordered_json triage_report(const TriageResult& result, const Flowchart& chart);

}  // namespace vn::flow
