// SPDX-License-Identifier: Apache-2.0
// Drawing one screen alone on an off-screen Canvas, at the sizes every screen's golden tests use.
#pragma once

#include <string>

#include "tests/tui/golden.h"
#include "tui/canvas.h"
#include "tui/i18n.h"
#include "tui/view.h"

namespace vn::views::testing {

struct ScreenSize {
  int w, h;
  std::string suffix() const { return std::to_string(w) + "x" + std::to_string(h); }
};
/// The usual terminal, a wide one and a narrow one.
inline const ScreenSize kSizes[] = {{80, 24}, {160, 48}, {60, 20}};

/// The UI's language for the scope's lifetime (English again after it).
struct LanguageScope {
  explicit LanguageScope(tui::Language language) { tui::set_language(language); }
  ~LanguageScope() { tui::set_language(tui::Language::kEnglish); }
  LanguageScope(const LanguageScope&) = delete;
  LanguageScope& operator=(const LanguageScope&) = delete;
};

/// The languages every new or changed screen's goldens are drawn in, with their file suffix.
inline const std::pair<tui::Language, const char*> kLanguages[] = {{tui::Language::kEnglish, ""},
                                                                   {tui::Language::kChinese, "_zh"}};

/// Draws `view` alone on a canvas of `size` after one tick (which loads what its feed has).
inline std::string render(tui::View& view, ScreenSize size, const tui::Glyphs& glyphs = tui::unicode_glyphs()) {
  tui::Canvas canvas(size.w, size.h);
  canvas.set_glyphs(glyphs);
  view.resize(canvas.bounds());
  view.tick({});
  view.draw(canvas);
  return tui::testing::screen_text(canvas);
}

}  // namespace vn::views::testing
