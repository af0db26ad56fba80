// SPDX-License-Identifier: Apache-2.0
#include "pty_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <vterm.h>

#include "tui/text.h"

#include <cerrno>
#include <cstdlib>

namespace vn::tui::testing {
namespace {

int on_settermprop(VTermProp prop, VTermValue* value, void* user) {
  auto* props = static_cast<PtyTermProps*>(user);
  if (prop == VTERM_PROP_ALTSCREEN) props->alt_screen = value->boolean != 0;
  if (prop == VTERM_PROP_CURSORVISIBLE) props->cursor_visible = value->boolean != 0;
  return 1;
}

void on_output(const char* bytes, size_t len, void* user) {
  // Answers to the program's queries (device attributes, cursor position) go back to it.
  const int fd = *static_cast<int*>(user);
  while (len > 0) {
    const ssize_t n = write(fd, bytes, len);
    if (n <= 0) return;
    bytes += n;
    len -= static_cast<size_t>(n);
  }
}

const VTermScreenCallbacks kCallbacks = [] {
  VTermScreenCallbacks cb{};
  cb.settermprop = on_settermprop;
  return cb;
}();

}  // namespace

std::unique_ptr<PtySession> PtySession::spawn(const std::vector<std::string>& argv, int cols, int rows,
                                              const std::vector<std::string>& env) {
  std::unique_ptr<PtySession> s(new PtySession());
  s->cols_ = cols;
  s->rows_ = rows;
  winsize ws{};
  ws.ws_col = static_cast<unsigned short>(cols);
  ws.ws_row = static_cast<unsigned short>(rows);
  const pid_t pid = forkpty(&s->master_, nullptr, nullptr, &ws);
  if (pid < 0) return nullptr;
  if (pid == 0) {
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  s->pid_ = pid;
  fcntl(s->master_, F_SETFL, fcntl(s->master_, F_GETFL) | O_NONBLOCK);
  s->vt_ = vterm_new(rows, cols);
  vterm_set_utf8(s->vt_, 1);
  vterm_output_set_callback(s->vt_, on_output, &s->master_);
  s->screen_ = vterm_obtain_screen(s->vt_);
  vterm_screen_enable_altscreen(s->screen_, 1);
  vterm_screen_set_callbacks(s->screen_, &kCallbacks, &s->props_);
  vterm_screen_reset(s->screen_, 1);
  return s;
}

PtySession::~PtySession() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (master_ >= 0) close(master_);
  if (vt_ != nullptr) vterm_free(vt_);
}

bool PtySession::canonical_with_echo() const {
  termios t{};
  if (tcgetattr(master_, &t) != 0) return false;
  return (t.c_lflag & ICANON) != 0 && (t.c_lflag & ECHO) != 0;
}

void PtySession::signal(int sig) {
  if (pid_ > 0 && !exited_) kill(pid_, sig);
}

void PtySession::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(master_, bytes.data(), bytes.size());
    if (n < 0 && errno == EAGAIN) {
      pump(std::chrono::milliseconds(10));
      continue;
    }
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

bool PtySession::pump(std::chrono::milliseconds wait) {
  pollfd p{master_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
  char buf[8192];
  bool any = false;
  for (;;) {
    const ssize_t n = read(master_, buf, sizeof buf);
    if (n <= 0) break;
    vterm_input_write(vt_, buf, static_cast<size_t>(n));
    any = true;
  }
  return any;
}

bool PtySession::wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pump(std::chrono::milliseconds(20));
  }
}

bool PtySession::wait_for_text(std::string_view text, std::chrono::milliseconds timeout) {
  return wait_until([&] { return screen().find(text) != std::string::npos; }, timeout);
}

std::string PtySession::line(int row) const {
  std::string out;
  for (int col = 0; col < cols_; ++col) {
    VTermScreenCell cell{};
    vterm_screen_get_cell(screen_, VTermPos{row, col}, &cell);
    if (cell.chars[0] == 0) {
      if (cell.width == 1) out += ' ';
      continue;
    }
    for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; ++i) out += to_utf8(cell.chars[i]);
    if (cell.width > 1) col += cell.width - 1;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string PtySession::screen() const {
  std::string out;
  for (int row = 0; row < rows_; ++row) out += line(row) + "\n";
  return out;
}

void PtySession::resize(int cols, int rows) {
  cols_ = cols;
  rows_ = rows;
  vterm_set_size(vt_, rows, cols);
  winsize ws{};
  ws.ws_col = static_cast<unsigned short>(cols);
  ws.ws_row = static_cast<unsigned short>(rows);
  ioctl(master_, TIOCSWINSZ, &ws);
}

std::optional<int> PtySession::wait_exit(std::chrono::milliseconds timeout) {
  const bool done = wait_until(
      [&] {
        if (!exited_ && waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
        return exited_;
      },
      timeout);
  // Whatever the program wrote last (leaving the alternate screen) is still in the pipe.
  while (pump(std::chrono::milliseconds(0))) {
  }
  if (!done) return std::nullopt;
  return status_;
}

}  // namespace vn::tui::testing
