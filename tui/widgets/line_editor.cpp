// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/line_editor.h"

#include <algorithm>

#include "tui/text.h"

namespace vn::tui {
namespace {

bool is_space(char32_t c) { return c == U' ' || c == U'\t'; }

int width_of(std::u32string_view text) {
  int w = 0;
  for (char32_t c : text) w += code_point_width(c);
  return w;
}

}  // namespace

void History::add(std::string entry) {
  if (entry.empty() || (!entries_.empty() && entries_.back() == entry)) return;
  entries_.push_back(std::move(entry));
  while (entries_.size() > limit_) entries_.pop_front();
}

void LineEditor::set_text(std::string_view utf8) {
  text_.clear();
  for (char32_t c : to_u32(utf8)) {
    if (c >= 0x20 && c != 0x7F) text_ += c;
  }
  cursor_ = text_.size();
  recalling_ = false;
}

std::string LineEditor::text() const { return to_utf8(text_); }

void LineEditor::insert(std::string_view utf8) {
  std::u32string add;
  for (char32_t c : to_u32(utf8)) {
    if (c >= 0x20 && c != 0x7F) add += c;
  }
  text_.insert(cursor_, add);
  cursor_ += add.size();
}

void LineEditor::recall(size_t index) {
  recall_index_ = index;
  text_ = index < history_->size() ? to_u32(history_->at(index)) : draft_;
  cursor_ = text_.size();
}

unsigned LineEditor::handle(Action action) {
  switch (action) {
    case Action::kEditLeft:
      cursor_ = cursor_ > 0 ? cursor_ - 1 : 0;
      break;
    case Action::kEditRight:
      cursor_ = std::min(cursor_ + 1, text_.size());
      break;
    case Action::kEditHome:
      cursor_ = 0;
      break;
    case Action::kEditEnd:
      cursor_ = text_.size();
      break;
    case Action::kEditBackspace:
      if (cursor_ > 0) text_.erase(--cursor_, 1);
      break;
    case Action::kEditDelete:
      if (cursor_ < text_.size()) text_.erase(cursor_, 1);
      break;
    case Action::kKillToEnd:
      text_.erase(cursor_);
      break;
    case Action::kKillToStart:
      text_.erase(0, cursor_);
      cursor_ = 0;
      break;
    case Action::kKillWord: {
      // Like readline's unix-word-rubout: spaces before the cursor, then the word before them.
      size_t start = cursor_;
      while (start > 0 && is_space(text_[start - 1])) --start;
      while (start > 0 && !is_space(text_[start - 1])) --start;
      text_.erase(start, cursor_ - start);
      cursor_ = start;
      break;
    }
    case Action::kHistoryPrev:
      if (history_ == nullptr || history_->size() == 0) break;
      if (!recalling_) {
        draft_ = text_;
        recall_index_ = history_->size();
        recalling_ = true;
      }
      if (recall_index_ > 0) recall(recall_index_ - 1);
      break;
    case Action::kHistoryNext:
      if (history_ == nullptr || !recalling_) break;
      if (recall_index_ < history_->size()) recall(recall_index_ + 1);
      break;
    default:
      return kIgnored;
  }
  return kHandled | kRedraw;
}

int LineEditor::scroll_for(int room) const {
  const int cursor_column = width_of(std::u32string_view(text_).substr(0, cursor_));
  // One column stays free after the cursor so that it never sits on the right border.
  return room > 0 && cursor_column >= room ? cursor_column - room + 1 : 0;
}

void LineEditor::draw(Canvas& canvas, Rect area, std::string_view prefix, ColorRole role) const {
  if (area.empty()) return;
  const Rect row = area.rows(0, 1);
  canvas.fill(row);
  const int prefix_width = canvas.put_text(row, row.x, row.y, prefix, role);
  const Rect text_area{row.x + prefix_width, row.y, row.w - prefix_width, 1};
  if (text_area.empty()) return;
  canvas.put_text(text_area, text_area.x - scroll_for(text_area.w), row.y, to_utf8(text_), role);
}

int LineEditor::cursor_x(Rect area, std::string_view prefix) const {
  const int prefix_width = std::min(display_width(prefix), std::max(0, area.w));
  const int room = area.w - prefix_width;
  const int cursor_column = width_of(std::u32string_view(text_).substr(0, cursor_));
  return std::min(area.x + prefix_width + cursor_column - scroll_for(room), area.x + std::max(0, area.w - 1));
}

}  // namespace vn::tui
