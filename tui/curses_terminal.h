// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "tui/style.h"
#include "tui/terminal.h"

namespace vn::tui {

/// How to open a CursesTerminal.
struct CursesOptions {
  /// terminfo entry for newterm(); null uses $TERM.
  const char* term_type = nullptr;
  /// Output and input streams; null means stdout and stdin. Tests pass /dev/null for a headless screen.
  FILE* output = nullptr;
  FILE* input = nullptr;
  /// Installs SIGINT, SIGTERM and SIGHUP handlers (see CursesTerminal). Only one open terminal
  /// at a time can own them.
  bool handle_signals = true;
  /// The theme; when unset, choose_theme(env, colours of the terminal).
  std::optional<Theme> theme;
  /// The glyph set (must outlive the terminal); when null, choose_glyphs(env), and ASCII whenever
  /// the C library's locale cannot encode UTF-8.
  const Glyphs* glyphs = nullptr;
  /// The environment consulted for NO_COLOR, the locale variables and TERM.
  EnvLookup env = process_environment();
  /// Sets stderr aside while the screen is up (see CursesTerminal); unset: when stderr is a
  /// terminal.
  std::optional<bool> capture_stderr;
};

/// The Terminal on a real terminal through ncursesw. This file and curses_terminal.cpp are the
/// only toolkit files that know curses.
///
/// open() starts curses with newterm() (cbreak, noecho, keypad, a 25 ms Esc delay, hidden cursor)
/// and, when the C library's locale is still "C", sets LC_CTYPE from the environment so that
/// UTF-8 text can be written. Cells are written with wide-character calls, roles become the
/// theme's colour pairs and attributes, and characters the locale cannot encode show as '?'.
///
/// Signals: SIGINT, SIGTERM and SIGHUP only set a flag (the async-signal-safe path); the next
/// read_key() returns Key::kInterrupt, the App leaves its loop and close() (or the destructor)
/// restores the terminal with endwin(). The program can then re-raise caught_signal(). If a second
/// signal arrives before that, the handler restores the saved terminal modes and the terminfo
/// exit sequences with write()/tcsetattr() only, and lets the signal's default action run.
/// Terminal resizes arrive from ncurses as KEY_RESIZE and become Key::kResize.
///
/// Stderr: what is written to it while the screen is up (a library's warning, a sanitizer's
/// note) would land in the middle of the frame, where nothing redraws it. It goes to a file
/// ($TMPDIR/vernier-stderr-XXXXXX) instead, written out to the real stderr and removed by
/// close(); a process that dies before close() leaves the file behind.
class CursesTerminal final : public Terminal {
 public:
  /// Opens the terminal, or returns null with a reason in `error` (unknown TERM, not a terminal,
  /// another CursesTerminal already open).
  static std::unique_ptr<CursesTerminal> open(CursesOptions options, std::string& error);
  /// Calls close().
  ~CursesTerminal() override;
  CursesTerminal(const CursesTerminal&) = delete;
  CursesTerminal& operator=(const CursesTerminal&) = delete;

  /// Ends curses and restores the terminal and the previous signal handlers. Idempotent; every
  /// other call is invalid afterwards.
  void close();
  /// The signal (SIGINT, SIGTERM, SIGHUP) that produced Key::kInterrupt; 0 when none arrived.
  int caught_signal() const;
  /// Resizes curses' idea of the screen (resizeterm), for terminals whose size the program sets.
  void resize(int width, int height);
  /// The theme in use.
  const Theme& theme() const { return theme_; }
  /// Colours the terminal supports (terminfo "colors"; 0 without colour).
  int color_count() const { return colors_; }
  /// True when the locale encodes UTF-8 (otherwise non-ASCII glyphs show as '?').
  bool utf8() const { return utf8_; }

  // Terminal (see terminal.h).
  Size size() const override;
  std::optional<Key> read_key(std::chrono::milliseconds timeout) override;
  void present(const Canvas& canvas) override;
  void invalidate() override;
  void set_cursor(std::optional<Point> position) override { cursor_ = position; }
  const Glyphs& glyphs() const override { return *glyphs_; }
  void set_mouse_enabled(bool enabled) override;

 private:
  struct State;
  CursesTerminal();
  void apply_theme();
  std::optional<Key> read_escape_sequence();

  std::unique_ptr<State> state_;
  Theme theme_;
  const Glyphs* glyphs_ = nullptr;
  int colors_ = 0;
  bool utf8_ = false;
  bool use_color_ = false;
  std::optional<Point> cursor_;
  std::deque<Key> pending_;
};

/// The Key for a code from wget_wch(): `function_key` when it returned KEY_CODE_YES (KEY_UP,
/// KEY_F(n), KEY_BTAB, KEY_RESIZE, and xterm's modified keys such as kUP5 = Ctrl-Up, recognised
/// by their terminfo names), otherwise a character (key_from_code_point). nullopt for codes that
/// are not keys (KEY_MOUSE, which needs getmouse(), and unknown codes).
std::optional<Key> key_from_curses(int code, bool function_key);

}  // namespace vn::tui
