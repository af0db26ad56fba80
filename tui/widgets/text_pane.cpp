// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/text_pane.h"

#include <algorithm>

#include "tui/text.h"

namespace vn::tui {

void TextPane::set_lines(std::vector<TextLine> lines) {
  lines_ = std::move(lines);
  top_ = 0;
  left_ = 0;
  match_row_.reset();
  rebuild_rows();
}

void TextPane::append(TextLine line) {
  const bool follow = at_end();
  lines_.push_back(std::move(line));
  add_rows(lines_.size() - 1);
  if (follow) top_ = max_top();
}

void TextPane::set_wrap(bool wrap) {
  wrap_ = wrap;
  left_ = 0;
  rebuild_rows();
}

void TextPane::resize(Rect area) {
  const bool follow = !rows_.empty() && at_end() && top_ > 0;
  area_ = area;
  rebuild_rows();
  if (follow) top_ = max_top();
}

void TextPane::add_rows(size_t line_index) {
  const std::string& text = lines_[line_index].text;
  if (!wrap_ || area_.w <= 0) {
    rows_.push_back({line_index, text});
    return;
  }
  for (std::string& row : wrap_text(text, area_.w)) rows_.push_back({line_index, std::move(row)});
}

void TextPane::rebuild_rows() {
  // Keep the first visible logical line on screen across a re-wrap.
  const size_t anchor = top_ < rows_.size() ? rows_[top_].line : 0;
  rows_.clear();
  for (size_t i = 0; i < lines_.size(); ++i) add_rows(i);
  top_ = 0;
  while (top_ < rows_.size() && rows_[top_].line < anchor) ++top_;
  top_ = std::min(top_, max_top());
  match_row_.reset();
}

size_t TextPane::max_top() const {
  const auto height = static_cast<size_t>(std::max(0, area_.h));
  return rows_.size() > height ? rows_.size() - height : 0;
}

void TextPane::scroll_to(size_t row) { top_ = std::min(row, max_top()); }

void TextPane::scroll_to_end() { top_ = max_top(); }

unsigned TextPane::handle(Action action) {
  const size_t page = static_cast<size_t>(std::max(1, area_.h));
  const size_t before_top = top_;
  const int before_left = left_;
  switch (action) {
    case Action::kUp:
      scroll_to(top_ > 0 ? top_ - 1 : 0);
      break;
    case Action::kDown:
      scroll_to(top_ + 1);
      break;
    case Action::kPageUp:
      scroll_to(top_ > page ? top_ - page : 0);
      break;
    case Action::kPageDown:
      scroll_to(top_ + page);
      break;
    case Action::kHome:
      scroll_to(0);
      break;
    case Action::kEnd:
      scroll_to_end();
      break;
    case Action::kLeft:
      if (wrap_ || left_ == 0) return kIgnored;
      left_ = std::max(0, left_ - std::max(1, area_.w / 2));
      break;
    case Action::kRight:
      if (wrap_) return kIgnored;
      left_ += std::max(1, area_.w / 2);
      break;
    case Action::kNextMatch:
      if (search_.empty()) return kIgnored;
      next_match();
      return kHandled | kRedraw;
    case Action::kPrevMatch:
      if (search_.empty()) return kIgnored;
      prev_match();
      return kHandled | kRedraw;
    default:
      return kIgnored;
  }
  return top_ != before_top || left_ != before_left ? kHandled | kRedraw : kHandled;
}

bool TextPane::row_has_match(size_t row) const {
  return !search_.empty() &&
         find_text(rows_[row].text, search_, smart_case_ignores_case(search_)) != std::string::npos;
}

bool TextPane::jump_to_match(size_t from, bool forward) {
  const size_t n = rows_.size();
  for (size_t step = 0; step < n; ++step) {
    const size_t row = forward ? (from + step) % n : (from + n - step) % n;
    if (row_has_match(row)) {
      match_row_ = row;
      const auto height = static_cast<size_t>(std::max(1, area_.h));
      if (row < top_ || row >= top_ + height) scroll_to(row);
      return true;
    }
  }
  match_row_.reset();
  return false;
}

bool TextPane::set_search(std::string_view text) {
  search_ = std::string(text);
  match_row_.reset();
  if (search_.empty() || rows_.empty()) return false;
  return jump_to_match(top_, true);
}

bool TextPane::next_match() {
  if (search_.empty() || rows_.empty()) return false;
  return jump_to_match(match_row_ ? (*match_row_ + 1) % rows_.size() : top_, true);
}

bool TextPane::prev_match() {
  if (search_.empty() || rows_.empty()) return false;
  const size_t n = rows_.size();
  return jump_to_match(match_row_ ? (*match_row_ + n - 1) % n : top_, false);
}

std::string TextPane::position_text() const {
  if (rows_.empty()) return "0/0";
  const size_t last = std::min(rows_.size(), top_ + static_cast<size_t>(std::max(1, area_.h)));
  return std::to_string(top_ + 1) + "-" + std::to_string(last) + "/" + std::to_string(rows_.size());
}

void TextPane::draw(Canvas& canvas) const {
  if (area_.empty()) return;
  canvas.fill(area_);
  const bool ignore_case = smart_case_ignores_case(search_);
  for (int r = 0; r < area_.h; ++r) {
    const size_t index = top_ + static_cast<size_t>(r);
    if (index >= rows_.size()) break;
    const Row& row = rows_[index];
    const int y = area_.y + r;
    const int x = area_.x - left_;
    canvas.put_text(area_, x, y, row.text, lines_[row.line].role);
    if (search_.empty()) continue;
    const ColorRole role = match_row_ == index ? ColorRole::kSelection : ColorRole::kAccent;
    const std::string_view text = row.text;
    for (size_t at = find_text(text, search_, ignore_case); at != std::string::npos;) {
      const int start = x + display_width(text.substr(0, at));
      const int width = display_width(text.substr(at, search_.size()));
      const int clipped_start = std::max(start, area_.x);
      const int clipped_end = std::min(start + width, area_.x + area_.w);
      if (clipped_end > clipped_start) canvas.set_role(clipped_start, y, clipped_end - clipped_start, role);
      const size_t next = find_text(text.substr(at + search_.size()), search_, ignore_case);
      at = next == std::string::npos ? next : at + search_.size() + next;
    }
  }
}

}  // namespace vn::tui
