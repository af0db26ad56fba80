// SPDX-License-Identifier: Apache-2.0
// A scenario file's options as the command line's: each fills its flag unless the flag was given.
#include "tui/cli/triage_command.h"

namespace vn::cli {
namespace {

std::vector<std::string> strings(const std::vector<std::filesystem::path>& paths) {
  return std::vector<std::string>(paths.begin(), paths.end());
}

}  // namespace

void apply_scenario(const flow::Scenario& s, TriageArgs& args, std::optional<std::vector<std::string>>& check_argv) {
  auto open = [&](const char* name) { return args.given.count(name) == 0; };
  // A value, or a list the scenario gives (empty lists and unset values leave the default).
  auto fill = [&](const char* name, auto& field, const auto& value) {
    if (open(name)) field = value;
  };
  if (open("model")) args.model = s.model.string();

  if (s.seed) fill("--seed", args.data.seed, *s.seed);
  if (!s.val_range.empty()) fill("--val-range", args.data.val_ranges, s.val_range);
  if (!s.load_inputs.empty()) fill("--load-inputs", args.data.load_inputs, strings(s.load_inputs));
  if (s.iterations) fill("--iterations", args.data.iterations, *s.iterations);

  if (!s.engine_runner.empty()) fill("--engine-runner", args.runners.engine_runners, std::vector{s.engine_runner});
  if (!s.runner_options.empty()) fill("--runner-option", args.runners.options, s.runner_options);
  for (const std::string& p : s.precisions) {
    bool& flag = p == "fp16" ? args.engine.fp16 : p == "bf16" ? args.engine.bf16 : p == "tf32" ? args.engine.tf32 : args.engine.int8;
    flag = true;
  }
  if (s.deterministic) args.engine.deterministic = true;
  if (s.builder_seed) fill("--builder-seed", args.engine.builder_seed, s.builder_seed);
  if (s.timing_margin) fill("--timing-margin", args.engine.timing_margin, *s.timing_margin);
  if (!s.inject_fault.empty()) fill("--inject-fault", args.engine.inject_faults, s.inject_fault);
  if (!s.layer_precisions.empty()) fill("--layer-precisions", args.engine.layer_precisions, s.layer_precisions);
  if (!s.precision_constraints.empty()) fill("--precision-constraints", args.engine.precision_constraints, s.precision_constraints);
  if (!s.calibration_data.empty()) fill("--calibration-data", args.engine.calibration_data, s.calibration_data.string());
  if (!s.calibration_method.empty()) fill("--calibration-method", args.engine.calibration_method, s.calibration_method);

  if (!s.atol.empty()) fill("--atol", args.compare.atol, s.atol);
  if (!s.rtol.empty()) fill("--rtol", args.compare.rtol, s.rtol);
  if (s.builds) fill("--builds", args.builds, *s.builds);

  if (s.check) {
    if (!check_argv) check_argv = s.check->command;
    fill("--fail-regex", args.check.fail_regex, s.check->fail_regex);
    // Exit-code rules go together: --fail-code and --ignore-fail-code exclude each other.
    if (open("--fail-code") && open("--ignore-fail-code")) {
      args.check.fail_codes = s.check->fail_codes;
      args.check.ignore_fail_codes = s.check->ignore_fail_codes;
    }
    fill("--check-timeout", args.check.check_timeout, s.check->timeout_s);
  }
}

}  // namespace vn::cli
