// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tui/actions.h"
#include "tui/canvas.h"
#include "tui/text.h"

namespace vn::tui {

/// A table column: header title, width and alignment.
struct TableColumn {
  std::string title;
  /// Width in cells; 0 makes the column flexible: flexible columns share what fixed ones leave.
  int width = 0;
  Align align = Align::kLeft;
  /// Narrowest width of a flexible column.
  int min_width = 4;
};

/// One row of cells (one per column; missing cells are blank) and the role it is drawn in.
struct TableRow {
  std::vector<std::string> cells;
  ColorRole role = ColorRole::kDefault;
  /// Per-cell roles overriding `role`; empty, or one per cell.
  std::vector<ColorRole> cell_roles = {};
};

/// How a filter treats rows that do not match.
enum class FilterMode : uint8_t {
  /// Only matching rows are shown.
  kHide,
  /// Every row is shown; matches are highlighted and n/N jump between matching rows.
  kHighlight,
};

/// A sort the `sort` action can choose: a column and its direction.
struct SortKey {
  int column = -1;
  bool descending = false;
};

/// A scrollable, sortable, filterable table with a header row and a selected row.
///
/// Rows keep their index in the vector given to set_rows() (the "row index") whatever the sort
/// and filter; the visible order is a permutation of row indices. The selection always stays
/// visible. Handles: up/down, page up/down, home/end (selection); left/right (horizontal scroll of
/// the columns after the first, which stays pinned; ignored when everything fits); sort (next
/// column, then back to the original order), reverse_sort; next_match/prev_match.
class Table {
 public:
  /// A table with `columns` and no rows.
  explicit Table(std::vector<TableColumn> columns = {});

  /// Replaces the columns; clears the sort when its column no longer exists.
  void set_columns(std::vector<TableColumn> columns);
  /// Replaces the rows, keeping sort and filter, and the selected row index when it still exists.
  void set_rows(std::vector<TableRow> rows);
  /// The rows as given (row index order) and the columns.
  const std::vector<TableRow>& rows() const { return rows_; }
  const std::vector<TableColumn>& columns() const { return columns_; }

  /// Sets the area: the header takes its first row, data rows the rest.
  void resize(Rect area);
  /// The area of the last resize().
  const Rect& area() const { return area_; }
  /// Draws header and visible rows into the area of the last resize(); nothing outside it.
  void draw(Canvas& canvas) const;
  /// Applies a navigation, sort or search action; returns HandlerResult flags.
  unsigned handle(Action action);

  /// Sorts by `column` (numbers numerically, NaN above every number, text in natural order so
  /// "conv10" follows "conv9"; text such as "-" stays below the numbers in either direction);
  /// -1 restores the original order. Stable.
  void sort_by(int column, bool descending = false);
  /// The sorts the `sort` action steps through, in order, before the original order again (e.g.
  /// the worst error first, then the rank); empty: every column in turn, keeping the direction.
  void set_sort_cycle(std::vector<SortKey> cycle) { sort_cycle_ = std::move(cycle); }
  /// The sort column (-1: original order) and direction.
  int sort_column() const { return sort_column_; }
  bool sort_descending() const { return descending_; }

  /// Sets the filter text (a substring of any cell; smart case) and mode. Empty clears it. The
  /// selection stays on the same row when it is still shown, otherwise moves to the first match.
  void set_filter(std::string_view text, FilterMode mode = FilterMode::kHide);
  /// The filter text and mode.
  const std::string& filter() const { return filter_; }
  FilterMode filter_mode() const { return filter_mode_; }
  /// Selects the next (wrapping) shown row that matches the filter; false when there is none.
  bool next_match();
  /// Selects the previous (wrapping) shown row that matches the filter; false when there is none.
  bool prev_match();
  /// True when row `row_index` matches the filter (every row matches an empty filter).
  bool row_matches(size_t row_index) const;

  /// Row index of the selected row; nullopt when no row is shown.
  std::optional<size_t> selected_row() const;
  /// Selects row `row_index` if it is shown; returns whether it is.
  bool select_row(size_t row_index);
  /// Number of rows shown (after filtering).
  size_t visible_count() const { return order_.size(); }
  /// Position of the selection in the shown order (0-based).
  size_t selected_position() const { return selected_; }
  /// First shown position drawn at the top of the body.
  size_t top() const { return top_; }
  /// "selected/shown" as in "3/120" ("0/0" when empty), for status lines.
  std::string position_text() const;
  /// The row index drawn at screen row `y` (header and empty rows: nullopt).
  std::optional<size_t> row_at(int y) const;
  /// The column whose title is drawn at screen column `x` of the header row; nullopt elsewhere.
  std::optional<size_t> column_at(int x) const;
  /// A click at (x, y): selects the row, or sorts by the column whose title was clicked.
  /// HandlerResult flags; kIgnored outside the table.
  unsigned click(int x, int y);

 private:
  struct ColumnSlot {
    size_t column;
    int x;
    int width;
    bool clipped;
  };
  int body_height() const { return area_.h > 1 ? area_.h - 1 : 0; }
  void rebuild_order(std::optional<size_t> keep_row);
  void select_position(size_t position);
  void keep_selection_visible();
  std::vector<ColumnSlot> layout() const;
  bool all_columns_fit() const;
  bool jump_to_match(bool forward);

  std::vector<TableColumn> columns_;
  std::vector<TableRow> rows_;
  std::vector<size_t> order_;
  std::vector<SortKey> sort_cycle_;
  Rect area_;
  size_t selected_ = 0;
  size_t top_ = 0;
  size_t first_scrolled_column_ = 1;
  int sort_column_ = -1;
  bool descending_ = false;
  std::string filter_;
  FilterMode filter_mode_ = FilterMode::kHide;
};

/// Three-way comparison of two cell texts as the table sorts them: numbers (whole-cell decimal
/// or scientific, inf, nan) before text and numerically, NaN after every number, text in natural
/// order (digit runs compared as numbers). Returns <0, 0 or >0.
int compare_cells(std::string_view a, std::string_view b);

}  // namespace vn::tui
