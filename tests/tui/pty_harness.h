// SPDX-License-Identifier: Apache-2.0
// A program in a pseudo-terminal, with libvterm as its terminal emulator: end-to-end tests send
// keys, resize the terminal and read the screen as text. Waiting is always "until a condition
// holds or a timeout passes", pumping the program's output meanwhile; never a fixed sleep.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct VTerm;
struct VTermScreen;

namespace vn::tui::testing {

/// Terminal modes the program set, as the emulator saw them.
struct PtyTermProps {
  bool alt_screen = false;
  bool cursor_visible = true;
};

class PtySession {
 public:
  /// Starts `argv` in a new pseudo-terminal of `cols` × `rows` with `env` (NAME=VALUE entries)
  /// added to the environment. Null when the terminal or the process cannot be created.
  static std::unique_ptr<PtySession> spawn(const std::vector<std::string>& argv, int cols, int rows,
                                           const std::vector<std::string>& env = {});
  /// Kills the program if it still runs (its own pid only) and closes the terminal.
  ~PtySession();
  PtySession(const PtySession&) = delete;
  PtySession& operator=(const PtySession&) = delete;

  /// Writes raw bytes as if typed ("\x1b" for Esc, "\r" for Enter).
  void send(std::string_view bytes);
  /// Pumps output until `condition` holds (true) or `timeout` passes (false).
  bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);
  /// wait_until the screen contains `text`.
  bool wait_for_text(std::string_view text, std::chrono::milliseconds timeout);
  /// The screen, one line per row, trailing spaces trimmed.
  std::string screen() const;
  /// Row `row` of the screen, trailing spaces trimmed.
  std::string line(int row) const;
  /// Resizes the terminal (TIOCSWINSZ, which sends SIGWINCH to the program) and the emulator.
  void resize(int cols, int rows);
  int rows() const { return rows_; }
  /// True while the program shows the alternate screen (full-screen mode).
  bool alternate_screen() const { return props_.alt_screen; }
  /// False while the program hides the cursor (curses does in full-screen mode).
  bool cursor_visible() const { return props_.cursor_visible; }
  /// True when the terminal's line discipline is back in canonical mode with echo, as a shell
  /// leaves it (curses turns both off while it runs).
  bool canonical_with_echo() const;
  /// Sends signal `sig` to the program (its own pid only).
  void signal(int sig);
  /// Pumps output until the program exits or `timeout` passes; its wait status when it exited.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

 private:
  PtySession() = default;
  bool pump(std::chrono::milliseconds wait);

  int master_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  int cols_ = 0;
  int rows_ = 0;
  PtyTermProps props_;
  VTerm* vt_ = nullptr;
  VTermScreen* screen_ = nullptr;
};

}  // namespace vn::tui::testing
