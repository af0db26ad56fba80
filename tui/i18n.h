// SPDX-License-Identifier: Apache-2.0
// The language of the terminal UI: one translation table (tui/i18n_zh.inc) for every string the
// toolkit and the screens show, keyed by the English text, as gettext keys by its msgid.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace vn::tui {

/// The languages the UI speaks.
enum class Language : uint8_t { kEnglish, kChinese };

/// Sets the language of every later tr() (the program sets it once, before the UI starts).
void set_language(Language language);
/// The language set last (English until set).
Language language();
/// "en" → English, "zh" → Chinese; nullopt for anything else.
std::optional<Language> language_from_code(std::string_view code);

/// One row of the translation table.
struct Translation {
  std::string_view english;
  std::string_view chinese;
};

/// Every row of tui/i18n_zh.inc, in file order.
std::span<const Translation> translation_table();

/// `english` in the current language. In English, or for text the table lacks, `english` itself
/// (so it must outlive the result); in Chinese a lacking text is also recorded for
/// missing_translations(), which the tests read after drawing every screen. Thread-safe.
std::string_view tr(std::string_view english);

/// Like tr(), for text that comes from data rather than from the program (evidence keys written by
/// core probes): translated when the table has it, never recorded as missing.
std::string_view tr_data(std::string_view english);

/// tr(english) used as a format string: trf("{} check(s)", n). The Chinese row must hold the
/// same placeholders (the table's test checks it).
template <class... Args>
std::string trf(std::string_view english, Args&&... args) {
  return fmt::format(fmt::runtime(tr(english)), std::forward<Args>(args)...);
}

/// The texts tr() was asked for in Chinese and could not translate, sorted, each once.
std::vector<std::string> missing_translations();
/// Forgets the recorded missing texts.
void clear_missing_translations();

}  // namespace vn::tui
