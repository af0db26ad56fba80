// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace vn::tui {

/// What a cell means, not what colour it is: themes map roles to colours, and NO_COLOR or a
/// monochrome terminal maps them to attributes only.
enum class ColorRole : uint8_t { kDefault, kHeader, kSelection, kDim, kOk, kWarning, kError, kAccent };

/// Number of ColorRole enumerators; themes hold one style per role.
inline constexpr size_t kColorRoleCount = 8;

/// The eight ANSI colours plus the terminal's own default (so its background shows through).
enum class Color : int8_t { kDefault = -1, kBlack, kRed, kGreen, kYellow, kBlue, kMagenta, kCyan, kWhite };

/// Text attributes a theme may combine with a colour pair; bit flags.
enum Attr : uint8_t { kAttrNone = 0, kAttrBold = 1, kAttrReverse = 2, kAttrUnderline = 4, kAttrDim = 8 };

/// How one role is shown: foreground, background and attribute flags (Attr bits).
struct RoleStyle {
  Color fg = Color::kDefault;
  Color bg = Color::kDefault;
  uint8_t attrs = kAttrNone;
};

/// A named mapping from every ColorRole to a RoleStyle. `uses_color` is false for themes that
/// must render with attributes alone (their fg/bg are all kDefault).
struct Theme {
  std::string name;
  bool uses_color = true;
  std::array<RoleStyle, kColorRoleCount> roles{};

  /// The style of `role`.
  const RoleStyle& style(ColorRole role) const { return roles[static_cast<size_t>(role)]; }
};

/// The colour theme: green/yellow/red for ok/warning/error, reverse video for the selection.
Theme default_theme();

/// Attributes only (bold, reverse, underline, dim) so that no information is carried by colour.
Theme monochrome_theme();

/// The glyphs widgets draw with. Two sets exist: Unicode (box drawing, block elements, arrows)
/// and 7-bit ASCII for terminals or locales that cannot show them. Every member is one column wide.
struct Glyphs {
  bool ascii = false;
  // Box drawing.
  std::string_view horizontal, vertical, top_left, top_right, bottom_left, bottom_right;
  std::string_view tee_left, tee_right, tee_up, tee_down, cross;
  /// Horizontal bar: `bar_full` for a whole cell, `bar_eighths[k]` for k/8 of a cell (k = 1..7;
  /// index 0 is an empty cell). ASCII has no partial cells: they round to `bar_full` or empty.
  std::string_view bar_full, bar_empty;
  std::array<std::string_view, 8> bar_eighths;
  /// Sparkline levels, lowest first.
  std::array<std::string_view, 8> spark;
  /// Heatmap shades, lightest first.
  std::array<std::string_view, 5> shade;
  // Arrows and markers.
  std::string_view arrow_up, arrow_down, arrow_left, arrow_right;
  std::string_view sort_ascending, sort_descending;
  std::string_view bullet, check, cross_mark, pointer, ellipsis, missing;
};

/// The Unicode glyph set.
const Glyphs& unicode_glyphs();

/// The 7-bit ASCII glyph set.
const Glyphs& ascii_glyphs();

/// Reads an environment variable: returns nullopt when it is unset. Injected so that tests can
/// describe an environment without touching the process's own.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// An EnvLookup over the process environment (getenv).
EnvLookup process_environment();

/// True when NO_COLOR is set to a non-empty value (https://no-color.org).
bool no_color_requested(const EnvLookup& env);

/// True when the locale named by the first non-empty of LC_ALL, LC_CTYPE, LANG (POSIX
/// precedence) has a UTF-8 codeset ("UTF-8" or "utf8", any case) and TERM is neither "dumb"
/// nor "linux" (whose console fonts lack most box-drawing and block glyphs).
bool unicode_capable(const EnvLookup& env);

/// The monochrome theme when NO_COLOR is requested or the terminal has fewer than 8 colours
/// (`terminal_colors` as reported by the terminal, 0 when it has none); the default theme otherwise.
Theme choose_theme(const EnvLookup& env, int terminal_colors);

/// unicode_glyphs() when unicode_capable(env), ascii_glyphs() otherwise.
const Glyphs& choose_glyphs(const EnvLookup& env);

}  // namespace vn::tui
