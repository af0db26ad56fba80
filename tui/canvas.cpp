// SPDX-License-Identifier: Apache-2.0
#include "tui/canvas.h"

#include <algorithm>

namespace vn::tui {

Rect Rect::inset(int margin) const {
  return {x + margin, y + margin, std::max(0, w - 2 * margin), std::max(0, h - 2 * margin)};
}

Rect Rect::rows(int top, int count) const {
  const int first = std::clamp(top, 0, std::max(0, h));
  const int last = std::clamp(top + count, first, std::max(0, h));
  return {x, y + first, std::max(0, w), last - first};
}

Rect Rect::intersect(const Rect& other) const {
  const int left = std::max(x, other.x);
  const int top = std::max(y, other.y);
  const int right = std::min(x + w, other.x + other.w);
  const int bottom = std::min(y + h, other.y + other.h);
  return {left, top, std::max(0, right - left), std::max(0, bottom - top)};
}

Canvas::Canvas(int width, int height)
    : width_(width < 0 ? 0 : width),
      height_(height < 0 ? 0 : height),
      cells_(static_cast<size_t>(width_) * static_cast<size_t>(height_)),
      glyphs_(&unicode_glyphs()) {}

void Canvas::clear() {
  for (Cell& c : cells_) c = Cell{};
}

void Canvas::break_wide_glyph_at(int x, int y) {
  if (!contains(x, y)) return;
  Cell& here = cell(x, y);
  if (here.glyph.empty()) {
    here.glyph.assign(1, ' ');
    if (x > 0) cell(x - 1, y).glyph.assign(1, ' ');
  } else if (x + 1 < width_ && cell(x + 1, y).glyph.empty()) {
    cell(x + 1, y).glyph.assign(1, ' ');
  }
}

void Canvas::write_glyph(int x, int y, std::string glyph, int width, ColorRole role) {
  break_wide_glyph_at(x, y);
  if (width == 2) break_wide_glyph_at(x + 1, y);
  cell(x, y) = Cell{std::move(glyph), role};
  if (width == 2) cell(x + 1, y) = Cell{"", role};
}

int Canvas::put_text(int x, int y, std::string_view utf8, ColorRole role, int max_width) {
  const int limit = max_width < 0 ? width_ : std::min(width_, x + max_width);
  return put_text(Rect{0, 0, limit, height_}, x, y, utf8, role);
}

int Canvas::put_text(const Rect& clip, int x, int y, std::string_view utf8, ColorRole role) {
  const Rect area = clip.intersect(bounds());
  if (area.empty() || y < area.y || y >= area.y + area.h || x >= area.x + area.w) return 0;
  const int left = area.x;
  const int limit = area.x + area.w;
  int col = x;
  for (size_t i = 0; i < utf8.size() && col < limit;) {
    const size_t start = i;
    const char32_t cp = next_code_point(utf8, i);
    const int w = code_point_width(cp);
    if (w == 0) {
      // A combining mark joins the previous cell's grapheme; control characters are dropped.
      if (cp >= 0x20 && col > std::max(x, left)) {
        int prev = col - 1;
        if (cell(prev, y).glyph.empty() && prev > left) --prev;
        cell(prev, y).glyph.append(utf8.substr(start, i - start));
      }
      continue;
    }
    if (col < left) {
      // A wide glyph cut by the left edge leaves a blank in its visible half.
      if (col + w > left) write_glyph(left, y, " ", 1, role);
      col += w;
      continue;
    }
    if (col + w > limit) {
      write_glyph(col, y, " ", 1, role);
      ++col;
      break;
    }
    write_glyph(col, y, cp == 0xFFFD ? std::string("\xEF\xBF\xBD") : std::string(utf8.substr(start, i - start)), w,
                role);
    col += w;
  }
  return std::max(0, col - std::max(x, left));
}

void Canvas::set_role(int x, int y, int count, ColorRole role) {
  if (y < 0 || y >= height_) return;
  for (int c = std::max(0, x); c < std::min(width_, x + count); ++c) cell(c, y).role = role;
}

void Canvas::fill(const Rect& area, std::string_view glyph, ColorRole role) {
  const Rect r = area.intersect(bounds());
  for (int y = r.y; y < r.y + r.h; ++y) {
    for (int x = r.x; x < r.x + r.w; ++x) write_glyph(x, y, std::string(glyph), 1, role);
  }
}

void Canvas::draw_box(const Rect& area, ColorRole role, std::string_view title) {
  if (area.w < 2 || area.h < 2) return;
  const Glyphs& g = glyphs();
  const int right = area.x + area.w - 1;
  const int bottom = area.y + area.h - 1;
  for (int x = area.x + 1; x < right; ++x) {
    put_text(area, x, area.y, g.horizontal, role);
    put_text(area, x, bottom, g.horizontal, role);
  }
  for (int y = area.y + 1; y < bottom; ++y) {
    put_text(area, area.x, y, g.vertical, role);
    put_text(area, right, y, g.vertical, role);
  }
  put_text(area, area.x, area.y, g.top_left, role);
  put_text(area, right, area.y, g.top_right, role);
  put_text(area, area.x, bottom, g.bottom_left, role);
  put_text(area, right, bottom, g.bottom_right, role);
  if (!title.empty() && area.w >= 6) {
    std::string label(1, ' ');
    label += truncate_to_width(title, area.w - 6, g.ellipsis);
    label += ' ';
    put_text(area, area.x + 2, area.y, label, role);
  }
}

const Cell& Canvas::at(int x, int y) const { return cells_[static_cast<size_t>(y * width_ + x)]; }

std::string Canvas::dump() const {
  std::string out;
  for (int y = 0; y < height_; ++y) {
    std::string line;
    for (int x = 0; x < width_; ++x) line += at(x, y).glyph;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::string Canvas::dump_roles() const {
  static constexpr char kLetters[kColorRoleCount] = {'.', 'H', 'S', 'd', 'o', 'w', 'e', 'a'};
  std::string out;
  for (int y = 0; y < height_; ++y) {
    std::string line;
    for (int x = 0; x < width_; ++x) line += kLetters[static_cast<size_t>(at(x, y).role)];
    while (!line.empty() && line.back() == '.') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace vn::tui
