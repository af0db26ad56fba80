// SPDX-License-Identifier: Apache-2.0
#include "core/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace vn {
namespace {

// Keeps the head and the tail of a stream within a cap.
class CappedBuffer {
 public:
  explicit CappedBuffer(size_t cap) : half_(cap / 2) {}

  void append(const char* data, size_t n) {
    total_ += n;
    const size_t to_head = std::min(n, half_ - std::min(half_, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(data, n);
    if (tail_.size() > 2 * half_) tail_.erase(0, tail_.size() - half_);
  }

  std::string str() const {
    const size_t kept_tail = std::min(tail_.size(), half_);
    const size_t dropped = total_ - head_.size() - kept_tail;
    if (dropped == 0) return head_ + tail_.substr(tail_.size() - kept_tail);
    return head_ + fmt::format("\n[... {} bytes dropped ...]\n", dropped) + tail_.substr(tail_.size() - kept_tail);
  }
  size_t total() const { return total_; }

 private:
  size_t half_;
  size_t total_ = 0;
  std::string head_;
  std::string tail_;
};

std::string signal_label(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

std::string ProcessResult::describe(double timeout_s) const {
  if (timed_out) return timeout_s > 0 ? fmt::format("timed out after {:g} s", timeout_s) : "timed out";
  if (cancelled) return "cancelled";
  if (signal != 0) return "killed by " + signal_label(signal);
  // Commands run through a shell that does not exec them report a child's death by signal N as
  // exit status 128 + N.
  if (exit_code > 128 && exit_code < 128 + 65) {
    return fmt::format("exit code {} (a shell's report of {})", exit_code, signal_label(exit_code - 128));
  }
  return fmt::format("exit code {}", exit_code);
}

Result<pid_t> spawn_process_group(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty() || argv[0].empty()) return make_error(StatusCode::kInvalidArgument, "no command to run");
  // posix_spawn rather than fork: the caller has OpenMP and Eigen threads, and the child must not
  // run anything but exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int fds[3] = {options.stdin_fd, options.stdout_fd, options.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    if (fds[target] >= 0) {
      posix_spawn_file_actions_adddup2(&actions, fds[target], target);
    } else {
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  // The child starts with default signal handling whatever the parent ignores or blocks.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment: the caller's, with options.env's variables replacing theirs.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view key = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(options.env.begin(), options.env.end(),
                                      [&](const auto& kv) { return kv.first == key; });
    if (!replaced) env_strings.emplace_back(entry);
  }
  for (const auto& [key, value] : options.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return make_error(StatusCode::kExternalFailure, "cannot start '{}': {}", argv[0], std::strerror(rc));
  return pid;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return make_error(StatusCode::kInvalidArgument, "no command to run");
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(StatusCode::kExternalFailure, "pipe: {}", std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return make_error(StatusCode::kExternalFailure, "pipe: {}", std::strerror(errno));
  }
  SpawnOptions spawn;
  spawn.stdout_fd = out_pipe[1];
  spawn.stderr_fd = err_pipe[1];
  spawn.cwd = options.cwd;
  const auto start = std::chrono::steady_clock::now();
  Result<pid_t> spawned = spawn_process_group(argv, spawn);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!spawned.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return spawned.status();
  }
  const pid_t pid = *spawned;

  ProcessResult result;
  CappedBuffer out(options.output_cap), err(options.output_cap);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  CappedBuffer* sinks[2] = {&out, &err};
  bool open[2] = {true, true};
  bool killed = false, reaped = false;
  double reaped_at = 0;
  int status = 0;
  char buf[65536];
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto kill_group = [&] {
    kill(-pid, SIGKILL);
    killed = true;
  };
  while (open[0] || open[1] || !reaped) {
    if (!killed) {
      if (options.timeout_s > 0 && elapsed() >= options.timeout_s) {
        result.timed_out = true;
        kill_group();
      } else if (options.cancel && options.cancel->load()) {
        result.cancelled = true;
        kill_group();
      }
    }
    if (!reaped) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
        reaped_at = elapsed();
        // Whatever the child left running in its group would hold the pipes open forever.
        kill(-pid, SIGKILL);
      }
    }
    if (!open[0] && !open[1]) {
      if (!reaped) poll(nullptr, 0, 5);
      continue;
    }
    // A descendant that left the group (setsid) may hold the pipes open; stop waiting for it.
    if (reaped && elapsed() - reaped_at > 1.0) break;
    for (pollfd& f : fds) f.revents = 0;
    const int ready = poll(fds, 2, 20);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        open[i] = false;
        fds[i].fd = -1;
      }
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (!reaped) waitpid(pid, &status, 0);

  result.seconds = elapsed();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  // A process killed for its time limit or a cancellation is described by that, not the signal.
  if (result.timed_out || result.cancelled) result.signal = 0;
  result.out = out.str();
  result.err = err.str();
  result.out_bytes = out.total();
  result.err_bytes = err.total();
  return result;
}

Result<ProcessResult> run_shell(const std::string& command, const ProcessOptions& options) {
  return run_process({"/bin/sh", "-c", command}, options);
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string last_lines(const std::string& text, size_t max_lines) {
  std::vector<std::string> lines;
  size_t end = text.size();
  while (end > 0 && lines.size() < max_lines) {
    size_t start = text.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.insert(lines.begin(), std::move(line));
    end = start == 0 ? 0 : start - 1;
  }
  std::string joined;
  for (const std::string& l : lines) joined += (joined.empty() ? "" : " | ") + l;
  return joined;
}

}  // namespace vn
