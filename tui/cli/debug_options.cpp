// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/debug_options.h"

#include <set>

#include <fmt/format.h>

namespace vn::cli {
namespace {

std::optional<std::vector<std::string>>& check_argv() {
  static std::optional<std::vector<std::string>> argv;
  return argv;
}

std::set<const CLI::App*>& check_apps() {
  static std::set<const CLI::App*> apps;
  return apps;
}

}  // namespace

void set_check_command(std::optional<std::vector<std::string>> argv) { check_argv() = std::move(argv); }
const std::optional<std::vector<std::string>>& check_command() { return check_argv(); }
void accept_check_command(CLI::App& app) {
  check_apps().insert(&app);
  app.footer(app.get_footer() +
             "\n--check CMD ARGS... runs CMD for every iteration; it takes the rest of the command line, "
             "so it comes last.");
}
bool accepts_check_command(const CLI::App* app) { return check_apps().count(app) > 0; }
void clear_accepted_check_commands() { check_apps().clear(); }

void CheckOptions::add_to(CLI::App& app) {
  const char* group = "Check";
  app.add_option("--fail-regex", fail_regex,
                 "Regexes searched in the check's output; without --fail-code a match alone decides")
      ->group(group);
  auto* codes = app.add_option("--fail-code", fail_codes, "Only these exit codes count as failures")->group(group);
  app.add_option("--ignore-fail-code", ignore_fail_codes, "These exit codes always count as passes")
      ->group(group)
      ->excludes(codes);
  app.add_option("--check-timeout", check_timeout, "Seconds before a check is killed (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app.add_flag("--crash-is-failure", crash_is_failure,
               "Count a check that crashes or times out as a failure (default: unresolved)")
      ->group(group);
  app.add_flag("--show-output", show_output, "Print every check's output (default: failing checks only)")
      ->group(group);
}

Result<std::optional<debug::ExternalChecker>> CheckOptions::checker(const std::optional<std::vector<std::string>>& argv,
                                                                    const std::filesystem::path& cwd) const {
  if (!argv) return std::optional<debug::ExternalChecker>();
  debug::ExternalCheck check;
  check.argv = *argv;
  check.cwd = cwd;
  check.fail_regex = fail_regex;
  check.fail_codes = fail_codes;
  check.ignore_fail_codes = ignore_fail_codes;
  check.timeout_s = check_timeout;
  check.crash_is_failure = crash_is_failure;
  VN_ASSIGN_OR_RETURN(debug::ExternalChecker checker, debug::ExternalChecker::create(std::move(check)));
  return std::optional<debug::ExternalChecker>(std::move(checker));
}

void ArtifactOptions::add_to(CLI::App& app) {
  const char* group = "Artifacts";
  app.add_option("--artifacts", artifacts, "Files or folders moved into good/ or bad/ after every iteration")
      ->group(group);
  app.add_option("--artifacts-dir,--art-dir", artifacts_dir, "Where --artifacts are sorted")->capture_default_str()->group(group);
}

void ReplayOptions::add_to(CLI::App& app) {
  const char* group = "Replay";
  app.add_option("--save-debug-replay", save_debug_replay, "Write every iteration's verdict here")->capture_default_str()
      ->group(group);
  app.add_option("--load-debug-replay", load_debug_replay,
                 "Resume: iterations recorded here are not run again")
      ->group(group);
}

void print_check_output(const debug::CheckResult& result, bool show_always) {
  if (!result.process || (!show_always && result.verdict == debug::Verdict::kGood)) return;
  const ProcessResult& p = *result.process;
  if (!p.out.empty()) fmt::print("========== CAPTURED STDOUT ==========\n{}\n", p.out);
  if (!p.err.empty()) fmt::print("========== CAPTURED STDERR ==========\n{}\n", p.err);
}

}  // namespace vn::cli
