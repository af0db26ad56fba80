// SPDX-License-Identifier: Apache-2.0
#include "tui/style.h"

#include <cstdlib>

namespace vn::tui {
namespace {

// Themes hold one style per role, indexed by ColorRole.
static_assert(static_cast<size_t>(ColorRole::kAccent) + 1 == kColorRoleCount, "kColorRoleCount counts ColorRole");

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

namespace {

// One glyph set from the side-by-side list of tui/glyphs.inc.
Glyphs make_glyphs(bool ascii) {
  Glyphs g;
  g.ascii = ascii;
#define VN_UNPAREN(...) __VA_ARGS__
#define VN_GLYPH(field, unicode, ascii_glyph) g.field = ascii ? ascii_glyph : unicode;
#define VN_GLYPHS(field, unicode, ascii_glyphs)                                    \
  g.field = ascii ? decltype(g.field){VN_UNPAREN ascii_glyphs} : decltype(g.field){VN_UNPAREN unicode};
#include "tui/glyphs.inc"
#undef VN_GLYPHS
#undef VN_GLYPH
#undef VN_UNPAREN
  return g;
}

}  // namespace

const Glyphs& unicode_glyphs() {
  static const Glyphs glyphs = make_glyphs(false);
  return glyphs;
}

const Glyphs& ascii_glyphs() {
  static const Glyphs glyphs = make_glyphs(true);
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
