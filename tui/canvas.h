// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vn::tui {

/// What a cell means, not what colour it is: themes map roles to colours, and NO_COLOR or a
/// monochrome terminal maps them to attributes only.
enum class ColorRole : uint8_t { kDefault, kHeader, kSelection, kDim, kOk, kWarning, kError, kAccent };

/// One screen cell: a grapheme (UTF-8) and its role. A double-width glyph occupies its cell and
/// a continuation cell whose glyph is empty.
struct Cell {
  std::string glyph = " ";
  ColorRole role = ColorRole::kDefault;
};

/// Display width of a UTF-8 string in terminal columns (CJK and other wide characters count 2,
/// combining marks 0). Invalid bytes count 1 each.
int display_width(std::string_view utf8);

/// An off-screen grid of cells that views draw into. Only the curses binding copies it to the
/// terminal; tests read it back with dump().
class Canvas {
 public:
  Canvas(int width, int height);

  int width() const { return width_; }
  int height() const { return height_; }

  void clear();
  /// Writes `utf8` at (x, y), clipped at the right edge and at `max_width` columns when given.
  /// Returns the number of columns written. A wide glyph that would straddle the clip edge is
  /// replaced by a space.
  int put_text(int x, int y, std::string_view utf8, ColorRole role = ColorRole::kDefault, int max_width = -1);
  /// Sets the role of `count` cells from (x, y) without changing their glyphs.
  void set_role(int x, int y, int count, ColorRole role);
  const Cell& at(int x, int y) const;

  /// The screen as text, one line per row, trailing spaces trimmed.
  std::string dump() const;

 private:
  int width_;
  int height_;
  std::vector<Cell> cells_;
};

}  // namespace vn::tui
