// SPDX-License-Identifier: Apache-2.0
// Child processes for external engines and checks: run in their own process group, with a time
// limit, a cap on the output kept, and the whole group killed when they time out, are cancelled
// or leave stragglers behind.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "core/common/status.h"

namespace vn {

struct ProcessOptions {
  /// Seconds before the process group is killed with SIGKILL; 0 means no limit.
  double timeout_s = 0;
  /// Bytes kept of stdout and of stderr each: the first and the last half of the cap, with a
  /// marker line between them saying how much was dropped. Reading continues past the cap, so a
  /// flooding child never blocks on a full pipe.
  size_t output_cap = size_t{4} << 20;
  /// Working directory of the child; empty for the current one.
  std::filesystem::path cwd;
  /// Polled every few milliseconds; when it becomes true the group is killed and the result says
  /// `cancelled`.
  const std::atomic<bool>* cancel = nullptr;
};

/// How a child process ended.
struct ProcessResult {
  int exit_code = -1;       ///< the exit status when it exited, else -1
  int signal = 0;           ///< the signal that killed it (0 when it exited)
  bool timed_out = false;   ///< killed at ProcessOptions::timeout_s
  bool cancelled = false;   ///< killed because ProcessOptions::cancel became true
  std::string out;          ///< stdout, capped (see ProcessOptions::output_cap)
  std::string err;          ///< stderr, capped
  size_t out_bytes = 0;     ///< bytes the child wrote to stdout in all
  size_t err_bytes = 0;     ///< bytes the child wrote to stderr in all
  double seconds = 0;       ///< wall time from start to reaping

  /// Exited with status 0.
  bool succeeded() const { return exit_code == 0 && signal == 0 && !timed_out && !cancelled; }
  /// "exit code 3", "killed by signal 11 (SIGSEGV)", "timed out after 5 s", "cancelled"; exit
  /// codes 129..192 are also read as a shell's report of a signal.
  std::string describe(double timeout_s = 0) const;
};

/// Runs `argv` (argv[0] looked up on PATH, no shell) with stdin from /dev/null and stdout and
/// stderr captured, in a new process group. Returns when the child has ended and been reaped; any
/// process it left in its group is killed then. Errors: kInvalidArgument for an empty argv,
/// kExternalFailure when the process cannot be started (missing program, not executable).
Result<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

/// Where a spawned child's standard streams go and what it inherits.
struct SpawnOptions {
  int stdin_fd = -1;   ///< dup'ed to the child's stdin; -1 for /dev/null
  int stdout_fd = -1;  ///< dup'ed to the child's stdout; -1 for /dev/null
  int stderr_fd = -1;  ///< dup'ed to the child's stderr; -1 for /dev/null
  /// Working directory of the child; empty for the current one.
  std::filesystem::path cwd;
  /// Variables set in the child's environment (replacing inherited ones of the same name).
  std::vector<std::pair<std::string, std::string>> env;
};

/// Starts `argv` (argv[0] looked up on PATH, no shell) in a new process group whose id is its pid,
/// with default signal handling and no blocked signal whatever the caller's, and returns its pid.
/// The caller reaps it. Errors: kInvalidArgument for an empty argv, kExternalFailure when it cannot
/// be started (missing program, not executable).
Result<pid_t> spawn_process_group(const std::vector<std::string>& argv, const SpawnOptions& options);

/// Runs `command` with /bin/sh -c (see run_process).
Result<ProcessResult> run_shell(const std::string& command, const ProcessOptions& options = {});

/// `text` quoted for /bin/sh: single quotes, with embedded single quotes escaped.
std::string shell_quote(const std::string& text);

/// The last `max_lines` non-empty lines of `text`, joined by " | ", for one-line error messages.
std::string last_lines(const std::string& text, size_t max_lines = 3);

}  // namespace vn
