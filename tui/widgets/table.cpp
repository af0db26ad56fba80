// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "tui/i18n.h"

namespace vn::tui {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::optional<double> parse_number(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.back() == '%') text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int natural_compare(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      while (i < a.size() && a[i] == '0') ++i;
      while (j < b.size() && b[j] == '0') ++j;
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && is_digit(a[ei])) ++ei;
      while (ej < b.size() && is_digit(b[ej])) ++ej;
      if (ei - i != ej - j) return ei - i < ej - j ? -1 : 1;
      if (const int c = a.substr(i, ei - i).compare(b.substr(j, ej - j)); c != 0) return c < 0 ? -1 : 1;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

std::string_view cell_text(const TableRow& row, size_t column) {
  return column < row.cells.size() ? std::string_view(row.cells[column]) : std::string_view();
}

ColorRole cell_role(const TableRow& row, size_t column) {
  return column < row.cell_roles.size() ? row.cell_roles[column] : row.role;
}

}  // namespace

int compare_cells(std::string_view a, std::string_view b) {
  const auto na = parse_number(a);
  const auto nb = parse_number(b);
  if (na && nb) {
    const bool a_nan = std::isnan(*na);
    const bool b_nan = std::isnan(*nb);
    if (a_nan || b_nan) return a_nan == b_nan ? 0 : (a_nan ? 1 : -1);
    return *na < *nb ? -1 : (*na > *nb ? 1 : 0);
  }
  if (na) return -1;
  if (nb) return 1;
  return natural_compare(a, b);
}

Table::Table(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

void Table::set_columns(std::vector<TableColumn> columns) {
  columns_ = std::move(columns);
  if (sort_column_ >= static_cast<int>(columns_.size())) sort_column_ = -1;
  first_scrolled_column_ = 1;
  rebuild_order(selected_row());
}

void Table::set_rows(std::vector<TableRow> rows) {
  const auto keep = selected_row();
  rows_ = std::move(rows);
  rebuild_order(keep && *keep < rows_.size() ? keep : std::nullopt);
}

void Table::resize(Rect area) {
  area_ = area;
  keep_selection_visible();
}

bool Table::row_matches(size_t row_index) const {
  if (filter_.empty()) return true;
  const bool ignore_case = smart_case_ignores_case(filter_);
  for (const std::string& cell : rows_[row_index].cells) {
    if (find_text(cell, filter_, ignore_case) != std::string_view::npos) return true;
  }
  return false;
}

void Table::rebuild_order(std::optional<size_t> keep_row) {
  order_.clear();
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (filter_mode_ == FilterMode::kHide && !row_matches(i)) continue;
    order_.push_back(i);
  }
  if (sort_column_ >= 0) {
    const auto column = static_cast<size_t>(sort_column_);
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      const std::string_view ta = cell_text(rows_[a], column), tb = cell_text(rows_[b], column);
      // Numbers first in either direction: "-" (nothing measured) is never the worst.
      const bool na = parse_number(ta).has_value(), nb = parse_number(tb).has_value();
      if (na != nb) return na;
      const int c = compare_cells(ta, tb);
      return descending_ ? c > 0 : c < 0;
    });
  } else if (descending_) {
    std::reverse(order_.begin(), order_.end());
  }
  selected_ = order_.empty() ? 0 : std::min(selected_, order_.size() - 1);
  if (keep_row) {
    const auto it = std::find(order_.begin(), order_.end(), *keep_row);
    if (it != order_.end()) selected_ = static_cast<size_t>(it - order_.begin());
  }
  keep_selection_visible();
}

void Table::select_position(size_t position) {
  if (order_.empty()) return;
  selected_ = std::min(position, order_.size() - 1);
  keep_selection_visible();
}

void Table::keep_selection_visible() {
  const auto height = static_cast<size_t>(body_height());
  if (height == 0 || order_.empty()) {
    top_ = 0;
    return;
  }
  if (selected_ < top_) top_ = selected_;
  if (selected_ >= top_ + height) top_ = selected_ - height + 1;
  const size_t max_top = order_.size() > height ? order_.size() - height : 0;
  top_ = std::min(top_, max_top);
}

std::vector<Table::ColumnSlot> Table::layout() const {
  std::vector<ColumnSlot> slots;
  if (columns_.empty() || area_.w <= 0) return slots;
  int fixed = static_cast<int>(columns_.size()) - 1;
  int flexible = 0;
  for (const TableColumn& c : columns_) {
    if (c.width > 0) {
      fixed += c.width;
    } else {
      ++flexible;
    }
  }
  const int spare = std::max(0, area_.w - fixed);
  std::vector<int> widths;
  int flex_seen = 0;
  for (const TableColumn& c : columns_) {
    if (c.width > 0) {
      widths.push_back(c.width);
      continue;
    }
    ++flex_seen;
    // The last flexible column takes the remainder of the division.
    const int share = flex_seen == flexible ? spare - (spare / flexible) * (flexible - 1) : spare / flexible;
    widths.push_back(std::max(c.min_width, share));
  }
  std::vector<size_t> shown = {0};
  for (size_t c = std::max<size_t>(1, first_scrolled_column_); c < columns_.size(); ++c) shown.push_back(c);
  const int right = area_.x + area_.w;
  int x = area_.x;
  for (size_t c : shown) {
    if (x >= right) break;
    slots.push_back({c, x, std::min(widths[c], right - x), widths[c] > right - x});
    x += widths[c] + 1;
  }
  return slots;
}

bool Table::all_columns_fit() const {
  const auto slots = layout();
  if (slots.empty()) return true;
  return slots.back().column + 1 == columns_.size() && !slots.back().clipped;
}

unsigned Table::handle(Action action) {
  const size_t page = static_cast<size_t>(std::max(1, body_height()));
  const size_t before = selected_;
  switch (action) {
    case Action::kUp:
      select_position(selected_ > 0 ? selected_ - 1 : 0);
      break;
    case Action::kDown:
      select_position(selected_ + 1);
      break;
    case Action::kPageUp:
      select_position(selected_ > page ? selected_ - page : 0);
      break;
    case Action::kPageDown:
      select_position(selected_ + page);
      break;
    case Action::kHome:
      select_position(0);
      break;
    case Action::kEnd:
      select_position(order_.empty() ? 0 : order_.size() - 1);
      break;
    case Action::kLeft:
      if (first_scrolled_column_ <= 1) return kIgnored;
      --first_scrolled_column_;
      return kHandled | kRedraw;
    case Action::kRight:
      if (first_scrolled_column_ + 1 >= columns_.size() || all_columns_fit()) return kIgnored;
      ++first_scrolled_column_;
      return kHandled | kRedraw;
    case Action::kSort: {
      if (columns_.empty()) return kIgnored;
      if (!sort_cycle_.empty()) {
        size_t at = 0;
        while (at < sort_cycle_.size() && sort_cycle_[at].column != sort_column_) ++at;
        // From the original order (or a sort outside the cycle) to the first; after the last, back.
        const SortKey next = at + 1 < sort_cycle_.size() ? sort_cycle_[at + 1]
                             : at == sort_cycle_.size() ? sort_cycle_.front()
                                                        : SortKey{};
        sort_by(next.column, next.descending);
        return kHandled | kRedraw;
      }
      const int next = sort_column_ + 1 < static_cast<int>(columns_.size()) ? sort_column_ + 1 : -1;
      sort_by(next, descending_);
      return kHandled | kRedraw;
    }
    case Action::kReverseSort:
      sort_by(sort_column_, !descending_);
      return kHandled | kRedraw;
    case Action::kNextMatch:
    case Action::kPrevMatch:
      if (filter_.empty()) return kIgnored;
      jump_to_match(action == Action::kNextMatch);
      return kHandled | kRedraw;
    default:
      return kIgnored;
  }
  return selected_ != before ? kHandled | kRedraw : kHandled;
}

void Table::sort_by(int column, bool descending) {
  sort_column_ = column >= 0 && column < static_cast<int>(columns_.size()) ? column : -1;
  descending_ = descending;
  rebuild_order(selected_row());
}

void Table::set_filter(std::string_view text, FilterMode mode) {
  const auto keep = selected_row();
  filter_ = std::string(text);
  filter_mode_ = mode;
  rebuild_order(keep);
  if (filter_.empty()) return;
  const auto now = selected_row();
  if (now && now == keep && row_matches(*now)) return;
  selected_ = 0;
  if (!order_.empty() && !row_matches(order_[0])) jump_to_match(true);
  keep_selection_visible();
}

bool Table::jump_to_match(bool forward) {
  const size_t n = order_.size();
  for (size_t step = 1; step <= n; ++step) {
    const size_t pos = forward ? (selected_ + step) % n : (selected_ + n - step % n) % n;
    if (row_matches(order_[pos])) {
      select_position(pos);
      return true;
    }
  }
  return false;
}

bool Table::next_match() { return !filter_.empty() && jump_to_match(true); }

bool Table::prev_match() { return !filter_.empty() && jump_to_match(false); }

std::optional<size_t> Table::selected_row() const {
  if (order_.empty()) return std::nullopt;
  return order_[selected_];
}

bool Table::select_row(size_t row_index) {
  const auto it = std::find(order_.begin(), order_.end(), row_index);
  if (it == order_.end()) return false;
  select_position(static_cast<size_t>(it - order_.begin()));
  return true;
}

std::string Table::position_text() const {
  if (order_.empty()) return "0/0";
  return std::to_string(selected_ + 1) + "/" + std::to_string(order_.size());
}

std::optional<size_t> Table::row_at(int y) const {
  const int r = y - area_.y - 1;
  if (r < 0 || r >= body_height()) return std::nullopt;
  const size_t pos = top_ + static_cast<size_t>(r);
  if (pos >= order_.size()) return std::nullopt;
  return order_[pos];
}

std::optional<size_t> Table::column_at(int x) const {
  for (const ColumnSlot& slot : layout()) {
    if (x >= slot.x && x < slot.x + slot.width) return slot.column;
  }
  return std::nullopt;
}

unsigned Table::click(int x, int y) {
  if (!area_.contains(x, y)) return kIgnored;
  if (y == area_.y) {
    const auto column = column_at(x);
    if (!column) return kHandled;
    const int c = static_cast<int>(*column);
    // A first click sorts the way the sort cycle would (worst first), a second one reverses.
    bool descending = false;
    for (const SortKey& k : sort_cycle_) {
      if (k.column == c) descending = k.descending;
    }
    sort_by(c, c == sort_column_ ? !descending_ : descending);
    return kHandled | kRedraw;
  }
  const auto row = row_at(y);
  if (!row) return kHandled;
  select_row(*row);
  return kHandled | kRedraw;
}

void Table::draw(Canvas& canvas) const {
  if (area_.empty()) return;
  canvas.fill(area_);
  const Glyphs& g = canvas.glyphs();
  const auto slots = layout();
  canvas.set_role(area_.x, area_.y, area_.w, ColorRole::kHeader);
  for (const ColumnSlot& slot : slots) {
    const TableColumn& column = columns_[slot.column];
    std::string title = column.title;
    if (static_cast<int>(slot.column) == sort_column_) {
      title += std::string(descending_ ? g.sort_descending : g.sort_ascending);
    }
    canvas.put_text(area_, slot.x, area_.y, fit_to_width(title, slot.width, column.align, g.ellipsis),
                    ColorRole::kHeader);
  }
  const int height = body_height();
  if (order_.empty() && height > 0) {
    const std::string note = filter_.empty() ? std::string(tr("(no rows)")) : trf("(no rows match \"{}\")", filter_);
    canvas.put_text(area_, area_.x, area_.y + 1, note, ColorRole::kDim);
    return;
  }
  const bool ignore_case = smart_case_ignores_case(filter_);
  for (int r = 0; r < height; ++r) {
    const size_t pos = top_ + static_cast<size_t>(r);
    if (pos >= order_.size()) break;
    const TableRow& row = rows_[order_[pos]];
    const int y = area_.y + 1 + r;
    const bool selected = pos == selected_;
    if (selected) canvas.set_role(area_.x, y, area_.w, ColorRole::kSelection);
    for (const ColumnSlot& slot : slots) {
      const TableColumn& column = columns_[slot.column];
      const std::string text = fit_to_width(cell_text(row, slot.column), slot.width, column.align, g.ellipsis);
      canvas.put_text(area_, slot.x, y, text, selected ? ColorRole::kSelection : cell_role(row, slot.column));
      if (filter_.empty() || selected) continue;
      const size_t at = find_text(text, filter_, ignore_case);
      if (at == std::string::npos) continue;
      const int start = slot.x + display_width(std::string_view(text).substr(0, at));
      const int end = std::min(start + display_width(filter_), slot.x + slot.width);
      canvas.set_role(start, y, end - start, ColorRole::kAccent);
    }
  }
}

}  // namespace vn::tui
