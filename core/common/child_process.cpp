// SPDX-License-Identifier: Apache-2.0
#include "core/common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace vn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Milliseconds to wait in one poll: short, so that cancellation and time limits are noticed.
int poll_slice_ms(Clock::time_point start, double timeout_s) {
  if (timeout_s <= 0) return 20;
  const double left = timeout_s - seconds_since(start);
  return std::clamp(static_cast<int>(left * 1000.0) + 1, 0, 20);
}

// write(2) with SIGPIPE held back: a runner that died must be an error, not the end of Vernier.
ssize_t write_no_sigpipe(int fd, const char* data, size_t n) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const ssize_t written = write(fd, data, n);
  const int saved_errno = errno;
  if (written < 0 && saved_errno == EPIPE && !was_pending) {
    // The SIGPIPE this write raised is pending on this thread: take it before unblocking.
    const timespec zero{};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved_errno;
  return written;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const std::vector<std::string>& argv,
                                                          const ChildOptions& options) {
  int pipes[3][2];
  for (int i = 0; i < 3; ++i) {
    if (pipe2(pipes[i], O_CLOEXEC) != 0) {
      const int e = errno;
      for (int j = 0; j < i; ++j) {
        close(pipes[j][0]);
        close(pipes[j][1]);
      }
      return make_error(StatusCode::kExternalFailure, "pipe: {}", std::strerror(e));
    }
  }
  SpawnOptions spawn;
  spawn.stdin_fd = pipes[0][0];
  spawn.stdout_fd = pipes[1][1];
  spawn.stderr_fd = pipes[2][1];
  spawn.cwd = options.cwd;
  spawn.env = options.env;
  Result<pid_t> pid = spawn_process_group(argv, spawn);
  close(pipes[0][0]);
  close(pipes[1][1]);
  close(pipes[2][1]);
  if (!pid.ok()) {
    close(pipes[0][1]);
    close(pipes[1][0]);
    close(pipes[2][0]);
    return pid.status();
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->options_ = options;
  child->pid_ = *pid;
  child->in_fd_ = pipes[0][1];
  child->out_fd_ = pipes[1][0];
  child->err_fd_ = pipes[2][0];
  // Our ends never block: every wait is a poll with a time limit.
  for (int fd : {child->in_fd_, child->out_fd_, child->err_fd_}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return child;
}

ChildProcess::~ChildProcess() {
  kill_group();
  close_fd(in_fd_);
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void ChildProcess::append_stderr(const char* data, size_t n) {
  err_tail_.append(data, n);
  if (err_tail_.size() > 2 * options_.stderr_cap) err_tail_.erase(0, err_tail_.size() - options_.stderr_cap);
}

std::string ChildProcess::stderr_tail() const {
  if (err_tail_.size() <= options_.stderr_cap) return err_tail_;
  return err_tail_.substr(err_tail_.size() - options_.stderr_cap);
}

void ChildProcess::pump(int wait_ms, bool want_write) {
  // Stdout is read only while the pending line may still be within the cap; past it the reader
  // reports kTooLong and the child is killed anyway.
  const bool read_out = out_fd_ >= 0 && pending_.size() <= options_.max_line_bytes;
  pollfd fds[3] = {{read_out ? out_fd_ : -1, POLLIN, 0},
                   {err_fd_, POLLIN, 0},
                   {want_write ? in_fd_ : -1, POLLOUT, 0}};
  if (poll(fds, 3, wait_ms) <= 0) return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
    if (n > 0) {
      if (i == 0) {
        pending_.append(buf, static_cast<size_t>(n));
      } else {
        append_stderr(buf, static_cast<size_t>(n));
      }
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close_fd(i == 0 ? out_fd_ : err_fd_);
    }
  }
}

Status ChildProcess::write_line(std::string_view line, double timeout_s) {
  std::string data(line);
  data += '\n';
  size_t done = 0;
  const auto start = Clock::now();
  while (done < data.size()) {
    if (in_fd_ < 0) return make_error(StatusCode::kExternalFailure, "closed its stdin");
    const ssize_t n = write_no_sigpipe(in_fd_, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EPIPE) return make_error(StatusCode::kExternalFailure, "closed its stdin");
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return make_error(StatusCode::kExternalFailure, "cannot write to its stdin: {}", std::strerror(errno));
    }
    if (timeout_s > 0 && seconds_since(start) >= timeout_s) {
      return make_error(StatusCode::kExternalFailure, "did not read its stdin for {:g} s", timeout_s);
    }
    // The pipe is full: the child may be busy writing; keep its other pipes flowing meanwhile.
    pump(poll_slice_ms(start, timeout_s), /*want_write=*/true);
  }
  return Status::OK();
}

LineStatus ChildProcess::read_line(std::string& line, double timeout_s, const std::atomic<bool>* cancel) {
  const auto start = Clock::now();
  size_t scanned = 0;  // bytes of pending_ known to hold no newline
  for (;;) {
    const size_t pos = pending_.find('\n', scanned);
    if (pos != std::string::npos) {
      if (pos > options_.max_line_bytes) return LineStatus::kTooLong;
      line.assign(pending_, 0, pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      pending_.erase(0, pos + 1);
      return LineStatus::kLine;
    }
    scanned = pending_.size();
    if (pending_.size() > options_.max_line_bytes) return LineStatus::kTooLong;
    if (out_fd_ < 0) {
      // Its last words are still in the stderr pipe when it has just died.
      const auto closed_at = Clock::now();
      while (err_fd_ >= 0 && seconds_since(closed_at) < 1.0) pump(20, false);
      return LineStatus::kClosed;
    }
    if (cancel && cancel->load()) return LineStatus::kCancelled;
    if (timeout_s > 0 && seconds_since(start) >= timeout_s) return LineStatus::kTimeout;
    pump(poll_slice_ms(start, timeout_s), false);
  }
}

void ChildProcess::close_stdin() { close_fd(in_fd_); }

bool ChildProcess::try_reap() {
  if (reaped_) return true;
  // Seen without reaping first, so that the group id cannot be reused before the group is killed.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_) {
    return false;
  }
  // Whatever the child left running in its group would outlive it.
  kill(-pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  reaped_ = true;
  return true;
}

bool ChildProcess::wait_exit(double timeout_s) {
  const auto start = Clock::now();
  while (!try_reap()) {
    if (seconds_since(start) >= timeout_s) return false;
    // Keep draining: a child blocked writing its log cannot exit.
    if (out_fd_ >= 0 || err_fd_ >= 0) {
      pump(5, false);
      if (pending_.size() > options_.max_line_bytes) pending_.clear();
    } else {
      poll(nullptr, 0, 5);
    }
  }
  return true;
}

void ChildProcess::kill_group() {
  if (reaped_ || pid_ < 0) return;
  kill(-pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  reaped_ = true;
}

ProcessResult ChildProcess::ending() const {
  ProcessResult r;
  if (WIFEXITED(status_)) r.exit_code = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) r.signal = WTERMSIG(status_);
  r.err = stderr_tail();
  return r;
}

}  // namespace vn
