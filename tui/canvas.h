// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tui/style.h"
#include "tui/text.h"

namespace vn::tui {

/// A rectangle of cells: top-left corner (x, y), width and height. Sizes of 0 or less are empty.
struct Rect {
  int x = 0;
  int y = 0;
  int w = 0;
  int h = 0;

  /// True when the rectangle holds no cell.
  bool empty() const { return w <= 0 || h <= 0; }
  /// True when cell (px, py) lies inside.
  bool contains(int px, int py) const { return px >= x && px < x + w && py >= y && py < y + h; }
  /// The rectangle shrunk by `margin` cells on every side (never below zero size).
  Rect inset(int margin) const;
  /// The rows [top, top + rows) of this rectangle, clipped to it.
  Rect rows(int top, int rows) const;
  /// The part of this rectangle that also lies in `other`.
  Rect intersect(const Rect& other) const;

  friend bool operator==(const Rect&, const Rect&) = default;
};

/// One screen cell: a grapheme (UTF-8) and its role. A double-width glyph occupies its cell and
/// a continuation cell whose glyph is empty.
struct Cell {
  std::string glyph = " ";
  ColorRole role = ColorRole::kDefault;
};

/// An off-screen grid of cells that views draw into. Only the curses binding copies it to the
/// terminal; tests read it back with dump(). Writes never leave the grid, and overwriting half of
/// a double-width glyph blanks its other half, so the grid always describes a displayable line.
class Canvas {
 public:
  /// A blank canvas; negative sizes count as 0. Draws with unicode_glyphs() until set_glyphs().
  Canvas(int width, int height);

  /// Size in cells.
  int width() const { return width_; }
  int height() const { return height_; }
  /// The whole canvas as a Rect at (0, 0).
  Rect bounds() const { return {0, 0, width_, height_}; }

  /// The glyph set widgets draw with (Unicode or ASCII), chosen by whoever creates the canvas.
  const Glyphs& glyphs() const { return *glyphs_; }
  /// Selects the glyph set; `glyphs` must outlive the canvas (the built-in sets are static).
  void set_glyphs(const Glyphs& glyphs) { glyphs_ = &glyphs; }

  /// Blanks every cell.
  void clear();
  /// Writes `utf8` at (x, y), clipped at the right edge and at `max_width` columns when given.
  /// Returns the number of columns written. A wide glyph that would straddle the clip edge is
  /// replaced by a space. Control characters are dropped; combining marks join the previous cell.
  int put_text(int x, int y, std::string_view utf8, ColorRole role = ColorRole::kDefault, int max_width = -1);
  /// Like put_text, but nothing is written outside `clip`. Returns the columns written.
  int put_text(const Rect& clip, int x, int y, std::string_view utf8, ColorRole role = ColorRole::kDefault);
  /// Sets the role of `count` cells from (x, y) without changing their glyphs.
  void set_role(int x, int y, int count, ColorRole role);
  /// Fills `area` (clipped to the canvas) with a one-column `glyph` in `role`.
  void fill(const Rect& area, std::string_view glyph = " ", ColorRole role = ColorRole::kDefault);
  /// Draws a border around `area` with the canvas's box glyphs and, when it fits, `title` in the
  /// top edge. Areas narrower or shorter than 2 cells get no border.
  void draw_box(const Rect& area, ColorRole role = ColorRole::kDefault, std::string_view title = {});
  /// True when (x, y) is a cell of the canvas.
  bool contains(int x, int y) const { return x >= 0 && x < width_ && y >= 0 && y < height_; }
  /// The cell at (x, y). Precondition: contains(x, y).
  const Cell& at(int x, int y) const;

  /// The screen as text, one line per row, trailing spaces trimmed.
  std::string dump() const;
  /// The roles as one letter per cell, one line per row, trailing default cells trimmed:
  /// '.' default, 'H' header, 'S' selection, 'd' dim, 'o' ok, 'w' warning, 'e' error, 'a' accent.
  std::string dump_roles() const;

 private:
  Cell& cell(int x, int y) { return cells_[static_cast<size_t>(y * width_ + x)]; }
  // Writes one glyph of width 1 or 2 at (x, y), repairing any double-width glyph it overlaps.
  void write_glyph(int x, int y, std::string glyph, int width, ColorRole role);
  // Blanks the half of a double-width glyph that remains at (x, y) after its other half was overwritten.
  void break_wide_glyph_at(int x, int y);

  int width_;
  int height_;
  std::vector<Cell> cells_;
  const Glyphs* glyphs_;
};

}  // namespace vn::tui
