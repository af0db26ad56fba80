// SPDX-License-Identifier: Apache-2.0
// Checks: what decides whether one iteration of a debug tool (a candidate model, an engine build, a
// repetition) is good or bad. External checks follow Polygraphy's rules for exit codes and fail
// regexes; a crash or a timeout is told apart from the failure being chased.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace vn::debug {

/// The outcome of one check. kUnresolved is neither: the check crashed, timed out, or the user
/// skipped the iteration; searches treat it as "not shown to fail".
enum class Verdict : uint8_t { kGood, kBad, kUnresolved };

/// "good", "bad", "unresolved".
std::string_view verdict_name(Verdict verdict);

/// One check's verdict with the reason it was reached ("exit code 1", "matched 'Difference
/// exceeds'", "killed by signal 11 (SIGSEGV)", "3 of 4 outputs mismatch") and what it cost.
struct CheckResult {
  Verdict verdict = Verdict::kUnresolved;
  std::string reason;
  double seconds = 0;
  /// Set for external checks: how the process ended, with its (capped) output.
  std::optional<ProcessResult> process;
};

/// An external check command and the rules that turn its exit into a verdict.
struct ExternalCheck {
  std::vector<std::string> argv;          ///< run without a shell; argv[0] looked up on PATH
  std::vector<std::string> fail_regex;    ///< ECMAScript regexes searched in stdout+stderr
  std::vector<int> fail_codes;            ///< only these exit codes can be failures
  std::vector<int> ignore_fail_codes;     ///< these exit codes are always passes
  double timeout_s = 0;                   ///< 0: no limit
  /// Count a crash (death by signal, or a shell's 128+N report of one) or a timeout as a failure
  /// instead of as unresolved.
  bool crash_is_failure = false;
  /// Working directory of the command; empty for the current one.
  std::filesystem::path cwd;
};

/// An ExternalCheck with its regexes compiled once.
class ExternalChecker {
 public:
  /// Compiles the regexes. kInvalidArgument naming the regex when one does not compile, when argv
  /// is empty, or when both fail_codes and ignore_fail_codes are given (Polygraphy forbids it).
  static Result<ExternalChecker> create(ExternalCheck check);

  /// Runs the command and classifies its exit. kExternalFailure only when it cannot be started
  /// (missing program); a crash or timeout is a CheckResult, never an error.
  Result<CheckResult> run(const std::atomic<bool>* cancel = nullptr) const;

  /// The verdict for a process that ended as `process` did (see the rules in check.cpp).
  CheckResult classify(const ProcessResult& process) const;

  const ExternalCheck& check() const { return check_; }

 private:
  ExternalCheck check_;
  std::vector<std::regex> regexes_;
};

/// The argv of a `--check` given as the rest of a command line: everything after the first
/// argument equal to "--check" in `args` is returned and removed from `args`; nullopt when there is
/// no "--check". Polygraphy's `--check` takes the remainder the same way, so options of the check
/// command are never read as Vernier's.
std::optional<std::vector<std::string>> take_check_command(std::vector<std::string>& args);

}  // namespace vn::debug
