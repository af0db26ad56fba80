// SPDX-License-Identifier: Apache-2.0
// `vernier triage`'s options and entry point, shared with `vernier demo` (triage on the bundled
// demo scenario).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/flow/scenario.h"
#include "tui/cli/debug_options.h"
#include "tui/cli/options.h"

namespace vn::cli {

struct TriageArgs {
  std::string model;
  /// --scenario: a scenario file (core/flow/scenario.h) whose options fill those not given.
  std::string scenario;
  bool headless = false;
  std::string workdir;  ///< empty: a fresh folder named vernier_triage[_N] in the current folder
  std::string resume;   ///< --resume: the work folder of the session to continue
  /// The triage arguments that start this run again, stored in the session for --resume; empty:
  /// this process's command line after `triage`.
  std::vector<std::string> command;
  std::string lang;
  bool force = false;
  int builds = 5;
  int threads = 0;
  DataOptions data;
  CompareOptions compare;
  EngineOptions engine;
  RunnerFlags runners;  ///< --engine-runner: the engine under test, when not the built-in one
  CheckOptions check;
  /// The options given on the command line ("--fp16", "model", ...): they override the scenario's.
  std::set<std::string> given;
};

/// Runs triage as the command line asked; returns the exit code.
int run_triage(TriageArgs args);

/// Fills the options of `args` that are not in `args.given` from `scenario` (scenario_args.cpp).
/// The check's argv goes to `check_argv` unless the command line gave a --check.
void apply_scenario(const flow::Scenario& scenario, TriageArgs& args, std::optional<std::vector<std::string>>& check_argv);

}  // namespace vn::cli
