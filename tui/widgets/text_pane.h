// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tui/actions.h"
#include "tui/canvas.h"

namespace vn::tui {

/// One logical line of a TextPane and its role.
struct TextLine {
  std::string text;
  ColorRole role = ColorRole::kDefault;
};

/// A scrollable pane of text lines (logs, details, help), optionally wrapped at the pane width,
/// with search. Scrolling is by display row; without wrapping, left/right scroll horizontally.
/// A pane scrolled to the bottom follows appended lines (like `tail -f`).
///
/// Handles: up/down, page up/down, home/end, left/right (only without wrapping),
/// next_match/prev_match (when a search is set).
class TextPane {
 public:
  /// An empty pane that wraps.
  TextPane() = default;

  /// Replaces the content and scrolls to the top.
  void set_lines(std::vector<TextLine> lines);
  /// Adds a line at the end; keeps following the end when the pane showed it.
  void append(TextLine line);
  /// The logical lines.
  const std::vector<TextLine>& lines() const { return lines_; }
  /// Wraps long lines at the pane width (default) or lets them run off the right edge.
  void set_wrap(bool wrap);
  /// True when long lines wrap.
  bool wrap() const { return wrap_; }

  /// Sets the area; re-wraps the text.
  void resize(Rect area);
  /// The area of the last resize().
  const Rect& area() const { return area_; }
  /// Draws the visible rows; search matches in kAccent, the current match in kSelection.
  void draw(Canvas& canvas) const;
  /// Applies a scroll or search action; returns HandlerResult flags.
  unsigned handle(Action action);

  /// Highlights `text` (smart case) and scrolls to its first match at or after the top row.
  /// Returns whether there is a match; an empty text clears the search.
  bool set_search(std::string_view text);
  /// The search text ("" when none).
  const std::string& search() const { return search_; }
  /// Scrolls to the next (wrapping) display row with a match; false when there is none.
  bool next_match();
  /// Scrolls to the previous (wrapping) display row with a match; false when there is none.
  bool prev_match();

  /// First display row shown.
  size_t top() const { return top_; }
  /// Number of display rows (after wrapping).
  size_t row_count() const { return rows_.size(); }
  /// Scrolls so that display row `row` is at the top (clamped).
  void scroll_to(size_t row);
  /// Scrolls to the last page and follows appended lines.
  void scroll_to_end();
  /// "top-bottom/total" rows shown, as in "1-20/300", for status lines.
  std::string position_text() const;

 private:
  struct Row {
    size_t line;
    std::string text;
  };
  void rebuild_rows();
  void add_rows(size_t line_index);
  size_t max_top() const;
  bool at_end() const { return top_ >= max_top(); }
  bool row_has_match(size_t row) const;
  bool jump_to_match(size_t from, bool forward);

  std::vector<TextLine> lines_;
  std::vector<Row> rows_;
  Rect area_;
  bool wrap_ = true;
  size_t top_ = 0;
  int left_ = 0;
  std::string search_;
  std::optional<size_t> match_row_;
};

}  // namespace vn::tui
