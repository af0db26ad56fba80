// SPDX-License-Identifier: Apache-2.0
#include "tui/canvas.h"

#include <algorithm>

namespace vn::tui {
namespace {

// Decodes one UTF-8 sequence at s[i]; returns its code point and advances i. Invalid bytes
// decode as U+FFFD one byte at a time, so hostile names never stall the loop.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + static_cast<size_t>(len) > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += static_cast<size_t>(len);
  return cp;
}

// East Asian Wide and Fullwidth ranges (Unicode 15), which is what terminals render as two
// columns. wcwidth() would depend on the process locale, which tests cannot rely on.
int code_point_width(char32_t cp) {
  if (cp == 0) return 0;
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0xFE00 && cp <= 0xFE0F)) return 0;
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0x33FF) ||
      (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD)) {
    return 2;
  }
  return 1;
}

}  // namespace

int display_width(std::string_view utf8) {
  int w = 0;
  for (size_t i = 0; i < utf8.size();) w += code_point_width(next_code_point(utf8, i));
  return w;
}

Canvas::Canvas(int width, int height)
    : width_(width < 0 ? 0 : width),
      height_(height < 0 ? 0 : height),
      cells_(static_cast<size_t>(width_) * static_cast<size_t>(height_)) {}

void Canvas::clear() {
  for (Cell& c : cells_) c = Cell{};
}

int Canvas::put_text(int x, int y, std::string_view utf8, ColorRole role, int max_width) {
  if (y < 0 || y >= height_ || x >= width_) return 0;
  const int limit = max_width < 0 ? width_ : std::min(width_, x + max_width);
  int col = x;
  for (size_t i = 0; i < utf8.size() && col < limit;) {
    const size_t start = i;
    const char32_t cp = next_code_point(utf8, i);
    const int w = code_point_width(cp);
    if (w == 0) {
      // A combining mark joins the previous cell's grapheme; control characters are dropped.
      if (cp >= 0x20 && col > x && col - 1 >= 0) {
        cells_[static_cast<size_t>(y * width_ + col - 1)].glyph.append(utf8.substr(start, i - start));
      }
      continue;
    }
    if (col < 0) {
      col += w;
      continue;
    }
    Cell& cell = cells_[static_cast<size_t>(y * width_ + col)];
    if (col + w > limit) {
      cell = Cell{" ", role};
      ++col;
      break;
    }
    cell.glyph = cp == 0xFFFD ? std::string("\xEF\xBF\xBD") : std::string(utf8.substr(start, i - start));
    cell.role = role;
    if (w == 2) cells_[static_cast<size_t>(y * width_ + col + 1)] = Cell{"", role};
    col += w;
  }
  return col - x;
}

void Canvas::set_role(int x, int y, int count, ColorRole role) {
  if (y < 0 || y >= height_) return;
  for (int c = std::max(0, x); c < std::min(width_, x + count); ++c) {
    cells_[static_cast<size_t>(y * width_ + c)].role = role;
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

}  // namespace vn::tui
