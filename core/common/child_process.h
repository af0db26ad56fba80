// SPDX-License-Identifier: Apache-2.0
// A long-lived child process spoken to line by line over its stdin and stdout (engine runners):
// its own process group, time limits on every write and read, its stderr drained all along into a
// capped tail, and the whole group killed when it misbehaves or is no longer needed.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace vn {

struct ChildOptions {
  /// Working directory and environment additions of the child (SpawnOptions).
  std::filesystem::path cwd;
  std::vector<std::pair<std::string, std::string>> env;
  /// Bytes of stderr kept: the last ones (a runner's log ends with what matters).
  size_t stderr_cap = size_t{64} << 10;
  /// The longest line read_line accepts, newline excluded.
  size_t max_line_bytes = size_t{16} << 20;
};

/// What read_line found.
enum class LineStatus {
  kLine,       ///< a whole line (returned without its newline)
  kTimeout,    ///< no whole line within the time limit
  kClosed,     ///< the child closed its stdout (it exited or crashed) before a whole line
  kTooLong,    ///< the line exceeds ChildOptions::max_line_bytes
  kCancelled,  ///< the cancel flag became true
};

class ChildProcess {
 public:
  /// Starts `argv` (no shell) with pipes on its stdin, stdout and stderr, in a new process group.
  /// Errors: kInvalidArgument (empty argv), kExternalFailure (cannot be started).
  static Result<std::unique_ptr<ChildProcess>> spawn(const std::vector<std::string>& argv, const ChildOptions& options);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Kills the group unless it was reaped, and reaps.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  /// Writes `line` and a newline to the child's stdin, draining its stdout into the pending line
  /// buffer and its stderr into the tail meanwhile, so that a child that writes instead of reading
  /// cannot block the write. Never raises SIGPIPE. kExternalFailure when the child closed its
  /// stdin ("closed its stdin") or the write did not finish within `timeout_s` (0: no limit).
  Status write_line(std::string_view line, double timeout_s);

  /// Reads the next line of the child's stdout, draining its stderr meanwhile. `timeout_s` 0 means
  /// no limit; `cancel` is polled every few milliseconds. On kClosed, the stderr the child still
  /// had in the pipe is read (up to a second) so that stderr_tail() holds its last words.
  LineStatus read_line(std::string& line, double timeout_s, const std::atomic<bool>* cancel = nullptr);

  /// Closes the child's stdin (it sees end of file).
  void close_stdin();
  /// Waits up to `timeout_s` for the child to exit and reaps it; true when it has.
  bool wait_exit(double timeout_s);
  /// Kills the whole process group with SIGKILL and reaps the child.
  void kill_group();
  /// Whether the child has been reaped.
  bool reaped() const { return reaped_; }

  /// The last ChildOptions::stderr_cap bytes the child wrote to stderr.
  std::string stderr_tail() const;
  /// How the child ended, valid once reaped(): exit code or signal (timed_out is never set here).
  ProcessResult ending() const;

 private:
  ChildProcess() = default;
  // Reads whatever is ready on stdout and stderr (poll for up to `wait_ms`); false when stdout is
  // closed and nothing is buffered.
  void pump(int wait_ms, bool want_write);
  void append_stderr(const char* data, size_t n);
  bool try_reap();

  ChildOptions options_;
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string pending_;  // stdout bytes read but not yet returned as lines
  std::string err_tail_;
};

}  // namespace vn
