// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/tab_bar.h"

#include <algorithm>

#include "tui/text.h"

namespace vn::tui {
namespace {

// Titles are never shortened below this many columns; the bar scrolls instead.
constexpr int kMinTitleWidth = 4;

// " 1 Graph " padded, "1 Graph" when the padding is what does not fit.
std::string tab_text(size_t index, const std::string& title, int title_width, bool padded) {
  std::string text = padded ? " " : "";
  if (index < 9) {
    text += std::to_string(index + 1);
    text += ' ';
  }
  text += truncate_to_width(title, title_width, "~");
  if (padded) text += ' ';
  return text;
}

}  // namespace

void TabBar::set_tabs(std::vector<std::string> titles) {
  titles_ = std::move(titles);
  active_ = titles_.empty() ? 0 : std::min(active_, titles_.size() - 1);
}

void TabBar::set_active(size_t index) {
  if (index < titles_.size()) active_ = index;
}

TabBar::Layout TabBar::layout(Rect area) const {
  Layout result;
  if (area.empty() || titles_.empty()) return result;
  const size_t n = titles_.size();
  int longest = 0;
  for (const std::string& t : titles_) longest = std::max(longest, display_width(t));
  // Whole titles without their padding before shortened ones; the widest title limit at which
  // every tab fits, else the minimum (and the bar scrolls).
  std::vector<std::string> texts;
  const auto fits = [&](int limit, bool padded) {
    texts.clear();
    int total = static_cast<int>(n) - 1;
    for (size_t i = 0; i < n; ++i) {
      texts.push_back(tab_text(i, titles_[i], limit, padded));
      total += display_width(texts.back());
    }
    return total <= area.w;
  };
  if (!fits(longest, true) && !fits(longest, false)) {
    for (int limit = std::max(longest, kMinTitleWidth); limit >= kMinTitleWidth; --limit) {
      if (fits(limit, false)) break;
    }
  }
  const int right = area.x + area.w;
  for (size_t first = 0; first <= active_; ++first) {
    Layout attempt;
    attempt.hidden_left = first > 0;
    int x = area.x + (first > 0 ? 1 : 0);
    for (size_t i = first; i < n; ++i) {
      const int w = display_width(texts[i]);
      const int limit = i + 1 < n ? right - 1 : right;
      if (x + w > limit) break;
      attempt.slots.push_back({i, x, texts[i]});
      x += w + 1;
    }
    attempt.hidden_right = attempt.slots.empty() || attempt.slots.back().index + 1 < n;
    if (!attempt.slots.empty() && attempt.slots.back().index >= active_) return attempt;
  }
  // Not even the active tab fits beside the arrows: show it alone, cut at the edge.
  result.hidden_left = active_ > 0;
  result.hidden_right = active_ + 1 < n;
  result.slots.push_back({active_, area.x, texts[active_]});
  return result;
}

void TabBar::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  const Rect row = area.rows(0, 1);
  canvas.fill(row, " ", ColorRole::kDim);
  const Glyphs& g = canvas.glyphs();
  const Layout l = layout(row);
  for (size_t k = 0; k < l.slots.size(); ++k) {
    const Slot& slot = l.slots[k];
    const ColorRole role = slot.index == active_ ? ColorRole::kSelection : ColorRole::kDefault;
    const int end = slot.x + canvas.put_text(row, slot.x, row.y, slot.text, role);
    if (k + 1 < l.slots.size()) canvas.put_text(row, end, row.y, g.vertical, ColorRole::kDim);
  }
  if (l.hidden_left && l.slots.front().x > row.x) canvas.put_text(row, row.x, row.y, g.arrow_left, ColorRole::kDim);
  if (l.hidden_right) canvas.put_text(row, row.x + row.w - 1, row.y, g.arrow_right, ColorRole::kDim);
}

std::optional<size_t> TabBar::tab_at(Rect area, int x) const {
  for (const Slot& slot : layout(area.rows(0, 1)).slots) {
    if (x >= slot.x && x < slot.x + display_width(slot.text)) return slot.index;
  }
  return std::nullopt;
}

}  // namespace vn::tui
