// SPDX-License-Identifier: Apache-2.0
#include "tui/style.h"

#include <cstdlib>

namespace vn::tui {
namespace {

void set(Theme& theme, ColorRole role, RoleStyle style) { theme.roles[static_cast<size_t>(role)] = style; }

bool contains_utf8_codeset(std::string value) {
  for (char& c : value) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return value.find("utf-8") != std::string::npos || value.find("utf8") != std::string::npos;
}

}  // namespace

Theme default_theme() {
  Theme theme;
  theme.name = "default";
  theme.uses_color = true;
  set(theme, ColorRole::kDefault, {});
  set(theme, ColorRole::kHeader, {Color::kCyan, Color::kDefault, kAttrBold});
  set(theme, ColorRole::kSelection, {Color::kBlack, Color::kCyan, kAttrNone});
  set(theme, ColorRole::kDim, {Color::kDefault, Color::kDefault, kAttrDim});
  set(theme, ColorRole::kOk, {Color::kGreen, Color::kDefault, kAttrNone});
  set(theme, ColorRole::kWarning, {Color::kYellow, Color::kDefault, kAttrBold});
  set(theme, ColorRole::kError, {Color::kRed, Color::kDefault, kAttrBold});
  set(theme, ColorRole::kAccent, {Color::kMagenta, Color::kDefault, kAttrBold});
  return theme;
}

Theme monochrome_theme() {
  Theme theme;
  theme.name = "monochrome";
  theme.uses_color = false;
  set(theme, ColorRole::kDefault, {});
  set(theme, ColorRole::kHeader, {Color::kDefault, Color::kDefault, kAttrBold | kAttrUnderline});
  set(theme, ColorRole::kSelection, {Color::kDefault, Color::kDefault, kAttrReverse});
  set(theme, ColorRole::kDim, {Color::kDefault, Color::kDefault, kAttrDim});
  set(theme, ColorRole::kOk, {});
  set(theme, ColorRole::kWarning, {Color::kDefault, Color::kDefault, kAttrUnderline});
  set(theme, ColorRole::kError, {Color::kDefault, Color::kDefault, kAttrBold | kAttrReverse});
  set(theme, ColorRole::kAccent, {Color::kDefault, Color::kDefault, kAttrBold});
  return theme;
}

const Glyphs& unicode_glyphs() {
  static const Glyphs glyphs = [] {
    Glyphs g;
    g.ascii = false;
    g.horizontal = "─";
    g.vertical = "│";
    g.top_left = "┌";
    g.top_right = "┐";
    g.bottom_left = "└";
    g.bottom_right = "┘";
    g.tee_left = "├";
    g.tee_right = "┤";
    g.tee_up = "┴";
    g.tee_down = "┬";
    g.cross = "┼";
    g.bar_full = "█";
    g.bar_empty = "░";
    g.bar_eighths = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    g.spark = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    g.shade = {" ", "░", "▒", "▓", "█"};
    g.arrow_up = "↑";
    g.arrow_down = "↓";
    g.arrow_left = "←";
    g.arrow_right = "→";
    g.sort_ascending = "▲";
    g.sort_descending = "▼";
    g.bullet = "●";
    g.check = "✓";
    g.cross_mark = "✗";
    g.pointer = "▶";
    g.ellipsis = "…";
    g.missing = "×";
    return g;
  }();
  return glyphs;
}

const Glyphs& ascii_glyphs() {
  static const Glyphs glyphs = [] {
    Glyphs g;
    g.ascii = true;
    g.horizontal = "-";
    g.vertical = "|";
    g.top_left = "+";
    g.top_right = "+";
    g.bottom_left = "+";
    g.bottom_right = "+";
    g.tee_left = "+";
    g.tee_right = "+";
    g.tee_up = "+";
    g.tee_down = "+";
    g.cross = "+";
    g.bar_full = "#";
    g.bar_empty = ".";
    g.bar_eighths = {" ", " ", " ", " ", "#", "#", "#", "#"};
    g.spark = {"_", ".", "-", "~", "=", "+", "*", "#"};
    g.shade = {" ", ".", ":", "+", "#"};
    g.arrow_up = "^";
    g.arrow_down = "v";
    g.arrow_left = "<";
    g.arrow_right = ">";
    g.sort_ascending = "^";
    g.sort_descending = "v";
    g.bullet = "*";
    g.check = "+";
    g.cross_mark = "x";
    g.pointer = ">";
    g.ellipsis = "~";
    g.missing = "?";
    return g;
  }();
  return glyphs;
}

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool no_color_requested(const EnvLookup& env) {
  const auto value = env("NO_COLOR");
  return value && !value->empty();
}

bool unicode_capable(const EnvLookup& env) {
  const auto term = env("TERM");
  if (term && (*term == "dumb" || *term == "linux")) return false;
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const auto value = env(name);
    if (value && !value->empty()) return contains_utf8_codeset(*value);
  }
  return false;
}

Theme choose_theme(const EnvLookup& env, int terminal_colors) {
  if (no_color_requested(env) || terminal_colors < 8) return monochrome_theme();
  return default_theme();
}

const Glyphs& choose_glyphs(const EnvLookup& env) { return unicode_capable(env) ? unicode_glyphs() : ascii_glyphs(); }

}  // namespace vn::tui
