// SPDX-License-Identifier: Apache-2.0
// A triage run as `vernier triage` makes it: the work folder chosen, the session started (or the
// one resumed), the flowchart walked, report.json written, and what the transcript ends with (the
// path, the outcome, the cost). The run prints nothing: what the user sees comes through
// TriageRunHooks.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/common/status.h"
#include "core/flow/flowchart.h"
#include "core/flow/session_file.h"
#include "core/flow/triage.h"

namespace vn::flow {

/// The work folder of a triage: `requested`, or when empty the first of vernier_triage,
/// vernier_triage_2, ... in the current folder that does not exist. Errors: kInvalidArgument when
/// it holds an earlier triage (a session or a report.json) and `may_hold_triage` (a resume, or
/// --force) is false.
Result<std::filesystem::path> triage_workdir(const std::filesystem::path& requested, bool may_hold_triage);

struct TriageRunConfig {
  /// What triage works on. Its workdir receives everything (triage_workdir chooses it); its
  /// session is the run's own (set by run_triage_session).
  TriageConfig triage;
  /// The session to continue (TriageSession::open); unset, a new one is started in the workdir
  /// recording `command` (the command line and folder that start it again) and the model's hash,
  /// and a report.json of an earlier triage there is removed.
  std::optional<TriageSession> resumed;
  nlohmann::ordered_json command;
};

struct TriageRunHooks {
  /// The session is ready (started or resumed), before the walk.
  std::function<void(const TriageSession& session)> on_start;
  /// Every answered node, as triage_headless reports them.
  TriageObserver observe;
  /// Walks the chart (for example full-screen, asking each question); unset, triage_headless with
  /// `cancel`.
  std::function<Result<TriageResult>(const Flowchart& chart, TriageConfig config, const TriageObserver& observe)> walk;
  const std::atomic<bool>* cancel = nullptr;
};

struct TriageRunResult {
  TriageResult result;
  /// The report.json written into the work folder.
  std::filesystem::path report;
  /// "sanitize > real_data (no) > ... > minimal".
  std::string path;
  /// Engine builds and checks over the path, and the wall time of this run's walk.
  int64_t builds = 0;
  int64_t checks = 0;
  double seconds = 0;
  /// The session's runs so far (1 for a triage not resumed) and whether this one resumed it.
  int runs = 1;
  bool resumed = false;
  /// A failure was pinned down or lost by the reduction (outcome localized or not_localized).
  bool failing = false;
};

/// Starts or resumes the session, walks `chart` and writes the report. Errors: the session's
/// (unwritable folder, a session that does not fit the chart or the model), the walk's (kCancelled
/// when stopped: the session holds everything answered before), kIoError for the report.
Result<TriageRunResult> run_triage_session(const Flowchart& chart, TriageRunConfig config, const TriageRunHooks& hooks);

}  // namespace vn::flow
