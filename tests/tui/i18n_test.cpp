// SPDX-License-Identifier: Apache-2.0
// The translation table: every row complete, placeholders kept, every action's help in it, and
// tr() recording what it could not translate (the screens' tests fail on any such text).
#include "tui/i18n.h"

#include <gtest/gtest.h>

#include <set>

#include "tui/actions.h"

namespace vn::tui {
namespace {

struct Chinese {
  Chinese() { set_language(Language::kChinese); }
  ~Chinese() { set_language(Language::kEnglish); }
};

size_t placeholders(std::string_view text) {
  size_t n = 0;
  for (size_t at = text.find('{'); at != std::string_view::npos; at = text.find('{', at + 1)) ++n;
  return n;
}

TEST(Translations, EveryRowIsCompleteOnceWithItsPlaceholders) {
  std::set<std::string_view> seen;
  ASSERT_FALSE(translation_table().empty());
  for (const Translation& t : translation_table()) {
    EXPECT_FALSE(t.english.empty());
    EXPECT_FALSE(t.chinese.empty()) << t.english;
    EXPECT_TRUE(seen.insert(t.english).second) << "twice: " << t.english;
    EXPECT_EQ(placeholders(t.english), placeholders(t.chinese)) << t.english;
  }
}

TEST(Translations, EveryActionOfTheKeyTableHasItsHelpAndGroup) {
  const Chinese chinese;
  clear_missing_translations();
  for (const ActionInfo& info : action_table()) {
    EXPECT_NE(tr(info.help), info.help) << info.name;
    EXPECT_NE(tr(info.group), info.group) << info.name;
  }
  EXPECT_EQ(missing_translations(), std::vector<std::string>{});
}

TEST(Translations, TrRecordsWhatItCannotTranslateAndEnglishPassesThrough) {
  EXPECT_EQ(tr("Layers"), "Layers");
  EXPECT_EQ(trf("node {}/{}", 3, 12), "node 3/12");
  const Chinese chinese;
  clear_missing_translations();
  EXPECT_EQ(tr("Layers"), "层");
  EXPECT_EQ(trf("node {}/{}", 3, 12), "节点 3/12");
  EXPECT_EQ(tr("no such text"), "no such text");
  EXPECT_EQ(tr_data("conv2"), "conv2");  // data (a layer's name) is not the table's business
  EXPECT_EQ(tr_data("localized"), "已定位");
  EXPECT_EQ(missing_translations(), std::vector<std::string>{"no such text"});
  clear_missing_translations();
  EXPECT_TRUE(missing_translations().empty());
  EXPECT_EQ(language_from_code("zh"), Language::kChinese);
  EXPECT_EQ(language_from_code("fr"), std::nullopt);
}

}  // namespace
}  // namespace vn::tui
