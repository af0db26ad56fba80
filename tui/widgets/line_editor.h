// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "tui/actions.h"
#include "tui/canvas.h"

namespace vn::tui {

/// Entered lines, oldest first, for recall with Up/Down. Empty lines and repeats of the newest
/// entry are not added; beyond `limit` entries the oldest are dropped.
class History {
 public:
  /// An empty history keeping at most `limit` entries.
  explicit History(size_t limit = 200) : limit_(limit) {}

  /// Adds `entry` as the newest.
  void add(std::string entry);
  /// Number of entries.
  size_t size() const { return entries_.size(); }
  /// Entry `index`, 0 being the oldest. Precondition: index < size().
  const std::string& at(size_t index) const { return entries_[index]; }

 private:
  size_t limit_;
  std::deque<std::string> entries_;
};

/// A one-line text editor with readline-style keys (the kEdit actions of actions.inc): cursor
/// movement, Backspace/Delete, Ctrl-K/U/W kills and history recall. Text is edited by code point
/// and drawn by display width, so CJK text keeps the cursor in the right column.
class LineEditor {
 public:
  /// An empty editor recalling from `history` (may be null; must outlive the editor).
  explicit LineEditor(History* history = nullptr) : history_(history) {}

  /// Replaces the text, puts the cursor at its end and restarts history recall.
  void set_text(std::string_view utf8);
  /// Empties the line.
  void clear() { set_text({}); }
  /// The text as UTF-8.
  std::string text() const;
  /// Cursor position in code points from the start (0..length).
  size_t cursor() const { return cursor_; }

  /// Inserts `utf8` at the cursor (control characters are dropped).
  void insert(std::string_view utf8);
  /// Applies an editing action. Returns HandlerResult flags: kHandled | kRedraw for the editing
  /// and history actions (even when nothing changed, e.g. Backspace at the start), kIgnored for
  /// all others, including submit and cancel, which belong to the owner.
  unsigned handle(Action action);

  /// Draws `prefix` then the text into the first row of `area`, scrolled horizontally so that the
  /// cursor stays visible.
  void draw(Canvas& canvas, Rect area, std::string_view prefix, ColorRole role = ColorRole::kDefault) const;
  /// The screen column of the cursor when drawn that way.
  int cursor_x(Rect area, std::string_view prefix) const;

 private:
  // Columns the text is shifted left by so the cursor fits in `room` columns.
  int scroll_for(int room) const;
  void recall(size_t index);

  std::u32string text_;
  size_t cursor_ = 0;
  History* history_;
  // Position in the history while recalling; history_->size() means the line being typed.
  size_t recall_index_ = 0;
  std::u32string draft_;
  bool recalling_ = false;
};

}  // namespace vn::tui
