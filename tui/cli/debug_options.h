// SPDX-License-Identifier: Apache-2.0
// The option groups shared by the debug subcommands (CLI.md `debug ...`): the external check and
// its verdict rules, artifacts and debug replays.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/check.h"

namespace vn::cli {

/// The `--check CMD ARGS...` of this command line, taken out of argv by main() before parsing
/// (it takes the rest of the line, so the check's own options are never read as Vernier's).
/// Subcommands that accept it call accept_check_command(); main() refuses it for any other.
void set_check_command(std::optional<std::vector<std::string>> argv);
const std::optional<std::vector<std::string>>& check_command();
/// Marks `app` as a subcommand that takes `--check` (it shows in its help).
void accept_check_command(CLI::App& app);
/// Whether `app` accepts --check.
bool accepts_check_command(const CLI::App* app);
/// Forgets the subcommands marked by accept_check_command, before a new command tree is built.
void clear_accepted_check_commands();

/// How an external check's exit becomes a verdict (`--fail-regex`, `--fail-code`, ...).
struct CheckOptions {
  std::vector<std::string> fail_regex;
  std::vector<int> fail_codes;
  std::vector<int> ignore_fail_codes;
  double check_timeout = 0;
  bool crash_is_failure = false;
  bool show_output = false;

  void add_to(CLI::App& app);
  /// The external check of `argv` (default: `--check`) with these rules, run in `cwd` (default:
  /// the current folder); nullopt without a command. Errors name the bad regex or the conflicting
  /// flags.
  Result<std::optional<debug::ExternalChecker>> checker(
      const std::optional<std::vector<std::string>>& argv = check_command(), const std::filesystem::path& cwd = {}) const;
};

/// `--artifacts`, `--artifacts-dir`.
struct ArtifactOptions {
  std::vector<std::string> artifacts;
  std::string artifacts_dir = "vernier_artifacts";

  void add_to(CLI::App& app);
  /// The --artifacts as paths.
  std::vector<std::filesystem::path> paths() const { return {artifacts.begin(), artifacts.end()}; }
};

/// `--save-debug-replay`, `--load-debug-replay`.
struct ReplayOptions {
  std::string save_debug_replay = "vernier_debug_replay.json";
  std::string load_debug_replay;

  void add_to(CLI::App& app);
};

/// Prints an external check's captured output the way Polygraphy does: for failing iterations
/// (or every one with --show-output), stdout then stderr under banners.
void print_check_output(const debug::CheckResult& result, bool show_always);

}  // namespace vn::cli
