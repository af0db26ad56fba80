// SPDX-License-Identifier: Apache-2.0
#include "tui/text.h"

namespace vn::tui {

char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
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
// columns.
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

int display_width(std::string_view utf8) {
  int w = 0;
  for (size_t i = 0; i < utf8.size();) w += code_point_width(next_code_point(utf8, i));
  return w;
}

std::string to_utf8(char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string to_utf8(std::u32string_view text) {
  std::string out;
  for (char32_t cp : text) out += to_utf8(cp);
  return out;
}

std::u32string to_u32(std::string_view utf8) {
  std::u32string out;
  for (size_t i = 0; i < utf8.size();) out += next_code_point(utf8, i);
  return out;
}

std::string truncate_to_width(std::string_view text, int width, std::string_view ellipsis) {
  if (width <= 0) return {};
  if (display_width(text) <= width) return std::string(text);
  const int ellipsis_width = display_width(ellipsis);
  const bool use_ellipsis = !ellipsis.empty() && ellipsis_width <= width;
  const int budget = use_ellipsis ? width - ellipsis_width : width;
  std::string out;
  int used = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    const int w = code_point_width(next_code_point(text, i));
    if (used + w > budget) break;
    out.append(text.substr(start, i - start));
    used += w;
  }
  if (use_ellipsis) out.append(ellipsis);
  return out;
}

std::string fit_to_width(std::string_view text, int width, Align align, std::string_view ellipsis) {
  if (width <= 0) return {};
  std::string out = truncate_to_width(text, width, ellipsis);
  const int pad = width - display_width(out);
  switch (align) {
    case Align::kLeft:
      return out + std::string(static_cast<size_t>(pad), ' ');
    case Align::kRight:
      return std::string(static_cast<size_t>(pad), ' ') + out;
    case Align::kCenter:
      return std::string(static_cast<size_t>(pad / 2), ' ') + out +
             std::string(static_cast<size_t>(pad - pad / 2), ' ');
  }
  return out;
}

namespace {

void push_trimmed(std::vector<std::string>& lines, std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  lines.push_back(std::move(line));
}

void wrap_paragraph(std::string_view text, int width, std::vector<std::string>& lines) {
  std::string line;
  int line_width = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      size_t end = i;
      while (end < text.size() && text[end] == ' ') ++end;
      const int run = static_cast<int>(end - i);
      if (line_width + run <= width) {
        line.append(run, ' ');
        line_width += run;
      } else if (!line.empty()) {
        // Spaces at a wrap point are dropped rather than carried to the next line.
        push_trimmed(lines, std::move(line));
        line.clear();
        line_width = 0;
      }
      i = end;
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ' ') ++end;
    const std::string_view word = text.substr(i, end - i);
    const int word_width = display_width(word);
    if (line_width + word_width <= width) {
      line.append(word);
      line_width += word_width;
    } else if (word_width <= width) {
      push_trimmed(lines, std::move(line));
      line.assign(word);
      line_width = word_width;
    } else {
      for (size_t k = 0; k < word.size();) {
        const size_t start = k;
        const char32_t cp = next_code_point(word, k);
        int w = code_point_width(cp);
        std::string glyph(word.substr(start, k - start));
        if (w > width) {
          glyph.assign(1, '?');
          w = 1;
        }
        if (line_width + w > width) {
          push_trimmed(lines, std::move(line));
          line.clear();
          line_width = 0;
        }
        line.append(glyph);
        line_width += w;
      }
    }
    i = end;
  }
  push_trimmed(lines, std::move(line));
}

}  // namespace

std::vector<std::string> wrap_text(std::string_view text, int width) {
  std::vector<std::string> lines;
  if (width <= 0) return lines;
  size_t start = 0;
  while (true) {
    const size_t newline = text.find('\n', start);
    wrap_paragraph(text.substr(start, newline == std::string_view::npos ? std::string_view::npos : newline - start),
                   width, lines);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  return lines;
}

size_t find_text(std::string_view haystack, std::string_view needle, bool ignore_case) {
  if (!ignore_case) return haystack.find(needle);
  if (needle.empty()) return 0;
  if (needle.size() > haystack.size()) return std::string_view::npos;
  const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && fold(haystack[i + k]) == fold(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

bool smart_case_ignores_case(std::string_view query) {
  for (char c : query) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return true;
}

}  // namespace vn::tui
