// SPDX-License-Identifier: Apache-2.0
// Scenario files (assets/scenarios/*.json): a model with the data, engine build, comparison and
// check options that make it fail in one known way, and the path through the flowchart and the
// culprit that triage is expected to find. `vernier triage --scenario FILE` and `vernier demo`
// run them; the tests check the expectations.
//
// Options keep the command line's spelling (fault specs, "[NAME:]VALUE" tolerances, value
// ranges): the command line's parsers read them, so a scenario means exactly what the same flags
// would. Paths in the file are relative to the file's folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace vn::flow {

/// The external check of a scenario's reduction (`--check` and its verdict rules).
struct ScenarioCheck {
  std::vector<std::string> command;  ///< argv, run in the triage work folder
  std::vector<std::string> fail_regex;
  std::vector<int> fail_codes;
  std::vector<int> ignore_fail_codes;
  double timeout_s = 0;  ///< 0: no limit
};

/// What triage is expected to find.
struct ScenarioExpect {
  std::string outcome;  ///< "localized", "no_bug", "not_localized", "no_failure"
  /// Node ids of the path, each question's as "id:yes" or "id:no".
  std::vector<std::string> path;
  std::string culprit;  ///< the culprit as triage names it; empty when none is named
};

/// A parsed scenario file. Every optional or empty field leaves the command line's default.
struct Scenario {
  std::filesystem::path file;  ///< the file it was read from
  std::string name;            ///< short id ("fp16_overflow")
  std::string title;           ///< one line
  std::string description;     ///< what goes wrong and why
  std::filesystem::path model;

  // Data (--seed, --val-range, --load-inputs, --iterations).
  std::optional<uint32_t> seed;
  std::vector<std::string> val_range;
  std::vector<std::filesystem::path> load_inputs;
  std::optional<int> iterations;

  // Engine under test (--engine-runner, --runner-option KEY=VALUE); empty: the built-in engine.
  std::string engine_runner;
  std::vector<std::string> runner_options;

  // Engine build.
  std::vector<std::string> precisions;  ///< "fp16", "bf16", "tf32", "int8": --fp16 ...
  bool deterministic = false;
  std::optional<uint64_t> builder_seed;
  std::optional<double> timing_margin;
  std::vector<std::string> inject_fault;
  std::vector<std::string> layer_precisions;
  std::string precision_constraints;
  std::filesystem::path calibration_data;
  std::string calibration_method;

  // Comparison (--atol, --rtol).
  std::vector<std::string> atol;
  std::vector<std::string> rtol;

  // Triage.
  std::optional<int> builds;             ///< --builds
  std::optional<ScenarioCheck> check;    ///< the reduction's external check

  ScenarioExpect expect;
};

/// Files larger than this are refused before they are read.
inline constexpr uintmax_t kMaxScenarioBytes = uintmax_t{1} << 20;

/// Reads a scenario file: {"format": "vernier-scenario", "version": 1, "name", "title",
/// "description", "model", "data": {...}, "engine": {...}, "compare": {...}, "triage": {...},
/// "check": {...}, "expect": {...}} (the keys: README.md, "The scenario zoo"). Paths are made relative to
/// the file's folder; unknown keys are refused so that a misspelt option never goes unnoticed.
/// Errors: kIoError naming the file and the key at fault (unreadable, too large, too deeply
/// nested, not a scenario, a value of the wrong type).
Result<Scenario> load_scenario(const std::filesystem::path& path);

}  // namespace vn::flow
