// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>

#include "tui/canvas.h"
#include "tui/keys.h"
#include "tui/style.h"

namespace vn::tui {

/// Terminal size in cells.
struct Size {
  int width = 0;
  int height = 0;

  friend bool operator==(const Size&, const Size&) = default;
};

/// A cell position.
struct Point {
  int x = 0;
  int y = 0;

  friend bool operator==(const Point&, const Point&) = default;
};

/// What the App loop needs from a terminal. CursesTerminal talks to a real one; ScriptTerminal
/// replays keys and keeps the last frame in memory for tests. Single-threaded: only the UI
/// thread calls it.
class Terminal {
 public:
  virtual ~Terminal() = default;

  /// The current size in cells.
  virtual Size size() const = 0;
  /// Waits at most `timeout` for one input event; nullopt when none arrived. Resizes arrive as
  /// Key::kResize (size() already reports the new size) and termination signals as Key::kInterrupt.
  virtual std::optional<Key> read_key(std::chrono::milliseconds timeout) = 0;
  /// Shows `canvas` (cells outside the terminal are ignored, missing ones are blank).
  virtual void present(const Canvas& canvas) = 0;
  /// Makes the next present() repaint every cell instead of only the changed ones (for a screen
  /// garbled by other programs' output).
  virtual void invalidate() = 0;
  /// Shows the text cursor at `position`, or hides it for nullopt. Takes effect at the next present().
  virtual void set_cursor(std::optional<Point> position) = 0;
  /// The glyph set this terminal can display (Unicode or ASCII).
  virtual const Glyphs& glyphs() const = 0;
  /// Starts or stops reporting mouse clicks and wheel turns as Key mouse events. Off by default;
  /// terminals without a mouse ignore it.
  virtual void set_mouse_enabled(bool enabled) = 0;
};

}  // namespace vn::tui
