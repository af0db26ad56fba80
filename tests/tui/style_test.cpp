// SPDX-License-Identifier: Apache-2.0
#include "tui/style.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "tui/text.h"

namespace vn::tui {
namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Theme, MonochromeUsesAttributesOnly) {
  const Theme mono = monochrome_theme();
  EXPECT_FALSE(mono.uses_color);
  for (const RoleStyle& style : mono.roles) {
    EXPECT_EQ(style.fg, Color::kDefault);
    EXPECT_EQ(style.bg, Color::kDefault);
  }
  EXPECT_NE(mono.style(ColorRole::kSelection).attrs & kAttrReverse, 0);
  EXPECT_NE(mono.style(ColorRole::kError).attrs & kAttrBold, 0);
  // Every role except the plain ones is distinguishable without colour.
  EXPECT_NE(mono.style(ColorRole::kWarning).attrs, mono.style(ColorRole::kError).attrs);
  EXPECT_NE(mono.style(ColorRole::kHeader).attrs, kAttrNone);
}

TEST(Theme, DefaultThemeColoursTheStatusRoles) {
  const Theme theme = default_theme();
  EXPECT_TRUE(theme.uses_color);
  EXPECT_EQ(theme.style(ColorRole::kOk).fg, Color::kGreen);
  EXPECT_EQ(theme.style(ColorRole::kWarning).fg, Color::kYellow);
  EXPECT_EQ(theme.style(ColorRole::kError).fg, Color::kRed);
}

TEST(ChooseTheme, NoColorOrAColourlessTerminalGivesMonochrome) {
  EXPECT_EQ(choose_theme(fake_env({}), 256).name, "default");
  EXPECT_EQ(choose_theme(fake_env({{"NO_COLOR", "1"}}), 256).name, "monochrome");
  EXPECT_EQ(choose_theme(fake_env({{"NO_COLOR", ""}}), 256).name, "default");  // empty does not count
  EXPECT_EQ(choose_theme(fake_env({}), 0).name, "monochrome");
  EXPECT_EQ(choose_theme(fake_env({}), 2).name, "monochrome");
  EXPECT_EQ(choose_theme(fake_env({}), 8).name, "default");
}

TEST(ChooseGlyphs, FollowsLocalePrecedenceAndTerm) {
  EXPECT_TRUE(choose_glyphs(fake_env({})).ascii);  // no locale at all is not UTF-8
  EXPECT_FALSE(choose_glyphs(fake_env({{"LANG", "en_US.UTF-8"}})).ascii);
  EXPECT_FALSE(choose_glyphs(fake_env({{"LANG", "zh_CN.utf8"}})).ascii);
  EXPECT_TRUE(choose_glyphs(fake_env({{"LANG", "C"}})).ascii);
  // LC_ALL overrides LC_CTYPE, which overrides LANG; empty values are skipped.
  EXPECT_TRUE(choose_glyphs(fake_env({{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}})).ascii);
  EXPECT_FALSE(choose_glyphs(fake_env({{"LC_ALL", ""}, {"LC_CTYPE", "C.UTF-8"}, {"LANG", "C"}})).ascii);
  EXPECT_TRUE(choose_glyphs(fake_env({{"LC_CTYPE", "POSIX"}, {"LANG", "en_US.UTF-8"}})).ascii);
  // Terminals without the glyphs.
  EXPECT_TRUE(choose_glyphs(fake_env({{"LANG", "en_US.UTF-8"}, {"TERM", "dumb"}})).ascii);
  EXPECT_TRUE(choose_glyphs(fake_env({{"LANG", "en_US.UTF-8"}, {"TERM", "linux"}})).ascii);
  EXPECT_FALSE(choose_glyphs(fake_env({{"LANG", "en_US.UTF-8"}, {"TERM", "xterm-256color"}})).ascii);
}

TEST(Glyphs, AsciiSetIsSevenBitAndEveryGlyphIsOneColumn) {
  const auto check = [](const Glyphs& g, bool ascii) {
    // Every field of the list (tui/glyphs.inc), so that a new glyph is checked as soon as it is added.
    std::vector<std::string_view> all;
#define VN_GLYPH(field, unicode, ascii_glyph) all.push_back(g.field);
#define VN_GLYPHS(field, unicode, ascii_glyphs) all.insert(all.end(), g.field.begin(), g.field.end());
#include "tui/glyphs.inc"
#undef VN_GLYPHS
#undef VN_GLYPH
    EXPECT_EQ(all.size(), 46u);
    for (std::string_view glyph : all) {
      EXPECT_EQ(display_width(glyph), 1) << "'" << glyph << "'";
      if (ascii) {
        for (char c : glyph) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << "'" << glyph << "'";
      }
    }
  };
  check(ascii_glyphs(), true);
  check(unicode_glyphs(), false);
  EXPECT_TRUE(ascii_glyphs().ascii);
  EXPECT_FALSE(unicode_glyphs().ascii);
}

TEST(ProcessEnvironment, ReadsTheRealEnvironment) {
  ::setenv("VN_STYLE_TEST_VAR", "x", 1);
  EXPECT_EQ(process_environment()("VN_STYLE_TEST_VAR"), "x");
  ::unsetenv("VN_STYLE_TEST_VAR");
  EXPECT_EQ(process_environment()("VN_STYLE_TEST_VAR"), std::nullopt);
}

}  // namespace
}  // namespace vn::tui
