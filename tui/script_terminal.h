// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "tui/canvas.h"
#include "tui/terminal.h"

namespace vn::tui {

/// An in-memory Terminal for tests and scripted runs: it replays queued keys and resize events,
/// never waits (read_key returns nullopt at once when the queue is empty) and keeps the last
/// presented Canvas.
class ScriptTerminal final : public Terminal {
 public:
  /// A terminal of `width` × `height` cells drawing with `glyphs` (must outlive the terminal).
  ScriptTerminal(int width, int height, const Glyphs& glyphs = unicode_glyphs());

  /// Queues one key.
  void push_key(const Key& key);
  /// Queues keys by name, separated by spaces ("j j Enter Ctrl-W ?"). Returns false, queuing
  /// nothing, when a name does not parse.
  bool push_keys(std::string_view names);
  /// Queues each character of `utf8` as a key (typing text).
  void push_text(std::string_view utf8);
  /// Queues the keys decoded from raw terminal bytes (escape sequences included).
  void push_bytes(std::string_view bytes);
  /// Queues a resize: when read, the size changes and Key::kResize is returned.
  void push_resize(int width, int height);
  /// Queues Key::kInterrupt, as a termination signal would.
  void push_interrupt();
  /// Number of queued events.
  size_t pending() const { return script_.size(); }

  // Terminal (see terminal.h).
  Size size() const override { return size_; }
  std::optional<Key> read_key(std::chrono::milliseconds timeout) override;
  void present(const Canvas& canvas) override;
  void invalidate() override { ++invalidations_; }
  void set_cursor(std::optional<Point> position) override { cursor_ = position; }
  const Glyphs& glyphs() const override { return *glyphs_; }
  void set_mouse_enabled(bool enabled) override { mouse_enabled_ = enabled; }

  /// The last presented canvas (blank before the first present).
  const Canvas& screen() const { return screen_; }
  /// screen().dump().
  std::string dump() const { return screen_.dump(); }
  /// Number of present() calls.
  int present_count() const { return presents_; }
  /// Number of invalidate() calls.
  int invalidate_count() const { return invalidations_; }
  /// The cursor set for the last frame (nullopt: hidden).
  const std::optional<Point>& cursor() const { return cursor_; }
  /// The last set_mouse_enabled() value.
  bool mouse_enabled() const { return mouse_enabled_; }
  /// The timeout of the last read_key() call.
  std::chrono::milliseconds last_timeout() const { return last_timeout_; }

 private:
  struct Event {
    Key key;
    Size size;
  };
  std::deque<Event> script_;
  Size size_;
  const Glyphs* glyphs_;
  Canvas screen_;
  std::optional<Point> cursor_;
  int presents_ = 0;
  int invalidations_ = 0;
  bool mouse_enabled_ = false;
  std::chrono::milliseconds last_timeout_{0};
};

}  // namespace vn::tui
