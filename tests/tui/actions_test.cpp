// SPDX-License-Identifier: Apache-2.0
#include "tui/actions.h"

#include <gtest/gtest.h>

#include <set>

namespace vn::tui {
namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

TEST(ActionTable, NamesAreUniqueAndEveryDefaultKeyParses) {
  std::set<std::string_view> names;
  for (const ActionInfo& info : action_table()) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate action name " << info.name;
    EXPECT_FALSE(info.help.empty()) << info.name;
    EXPECT_FALSE(info.group.empty()) << info.name;
    for (std::string_view key : words(info.default_keys)) {
      EXPECT_TRUE(parse_key(key).has_value()) << info.name << ": bad default key '" << key << "'";
    }
    EXPECT_EQ(find_action(info.name), &info);
    EXPECT_EQ(action_info(info.action), &info);
    EXPECT_EQ(action_name(info.action), info.name);
  }
  EXPECT_EQ(action_info(Action::kNone), nullptr);
  EXPECT_EQ(action_name(Action::kNone), "none");
  EXPECT_EQ(find_action("no_such_action"), nullptr);
}

TEST(ActionTable, NoKeyIsBoundTwiceInOneContext) {
  const Bindings bindings;
  for (const ActionInfo& a : action_table()) {
    for (const ActionInfo& b : action_table()) {
      if (a.action >= b.action || a.context != b.context) continue;
      for (const Key& key : bindings.keys_for(a.action)) {
        const auto other = bindings.keys_for(b.action);
        EXPECT_EQ(std::find(other.begin(), other.end(), key), other.end())
            << key_name(key) << " is bound to both " << a.name << " and " << b.name;
      }
    }
  }
}

TEST(ActionTable, ScreenIndices) {
  EXPECT_EQ(screen_index(Action::kScreen1), 0);
  EXPECT_EQ(screen_index(Action::kScreen9), 8);
  EXPECT_EQ(screen_index(Action::kQuit), std::nullopt);
}

TEST(Bindings, DefaultsFollowTheConventions) {
  const Bindings b;
  const auto lookup = [&](std::string_view key, KeyContext context = KeyContext::kNormal) {
    return b.lookup(*parse_key(key), context);
  };
  EXPECT_EQ(lookup("j"), Action::kDown);
  EXPECT_EQ(lookup("Down"), Action::kDown);
  EXPECT_EQ(lookup("k"), Action::kUp);
  EXPECT_EQ(lookup("h"), Action::kLeft);
  EXPECT_EQ(lookup("l"), Action::kRight);
  EXPECT_EQ(lookup("g"), Action::kHome);
  EXPECT_EQ(lookup("G"), Action::kEnd);
  EXPECT_EQ(lookup("PgDn"), Action::kPageDown);
  EXPECT_EQ(lookup("Enter"), Action::kEnter);
  EXPECT_EQ(lookup("Esc"), Action::kBack);
  EXPECT_EQ(lookup("q"), Action::kBack);
  EXPECT_EQ(lookup("Q"), Action::kQuit);
  EXPECT_EQ(lookup("Tab"), Action::kNextPane);
  EXPECT_EQ(lookup("Shift-Tab"), Action::kPrevPane);
  EXPECT_EQ(lookup("/"), Action::kFilter);
  EXPECT_EQ(lookup("n"), Action::kNextMatch);
  EXPECT_EQ(lookup("N"), Action::kPrevMatch);
  EXPECT_EQ(lookup("?"), Action::kHelp);
  EXPECT_EQ(lookup(":"), Action::kCommandLine);
  EXPECT_EQ(lookup("3"), Action::kScreen3);
  EXPECT_EQ(lookup("F3"), Action::kScreen3);
  EXPECT_EQ(lookup("z"), Action::kNone);
}

TEST(Bindings, PromptContextOverridesThenFallsBackToNormal) {
  const Bindings b;
  EXPECT_EQ(b.lookup(Key::of('g'), KeyContext::kPrompt), Action::kGood);
  EXPECT_EQ(b.lookup(Key::of('b'), KeyContext::kPrompt), Action::kBad);
  EXPECT_EQ(b.lookup(Key::of('s'), KeyContext::kPrompt), Action::kSkip);
  EXPECT_EQ(b.lookup(Key::of('u'), KeyContext::kPrompt), Action::kUndo);
  EXPECT_EQ(b.lookup(Key::of('y'), KeyContext::kPrompt), Action::kYes);
  EXPECT_EQ(b.lookup(Key::of('n'), KeyContext::kPrompt), Action::kNo);
  EXPECT_EQ(b.lookup(Key::of(Key::kEnter), KeyContext::kPrompt), Action::kAccept);
  EXPECT_EQ(b.lookup(Key::of(Key::kEscape), KeyContext::kPrompt), Action::kBack);  // from kNormal
  EXPECT_EQ(b.lookup(Key::of('?'), KeyContext::kPrompt), Action::kHelp);
}

TEST(Bindings, EditContextDoesNotFallBack) {
  const Bindings b;
  EXPECT_EQ(b.lookup(Key::ctrl('a'), KeyContext::kEdit), Action::kEditHome);
  EXPECT_EQ(b.lookup(Key::ctrl('w'), KeyContext::kEdit), Action::kKillWord);
  EXPECT_EQ(b.lookup(Key::of(Key::kUp), KeyContext::kEdit), Action::kHistoryPrev);
  EXPECT_EQ(b.lookup(Key::of('q'), KeyContext::kEdit), Action::kNone);  // types a q
  EXPECT_EQ(b.lookup(Key::of('?'), KeyContext::kEdit), Action::kNone);
}

TEST(Bindings, BindByNameMovesKeysWithinAContext) {
  Bindings b;
  BindStatus s = b.bind("filter", "f");
  EXPECT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(b.lookup(Key::of('f'), KeyContext::kNormal), Action::kFilter);
  EXPECT_EQ(b.lookup(Key::of('/'), KeyContext::kNormal), Action::kFilter);  // other keys stay
  s = b.bind("quit", "q");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message, "q moved from back");
  EXPECT_EQ(b.lookup(Key::of('q'), KeyContext::kNormal), Action::kQuit);
  EXPECT_EQ(b.keys_text(Action::kBack), "Esc");
  // The same key in another context is independent.
  EXPECT_TRUE(b.bind("good", "Ctrl-G").ok());
  EXPECT_EQ(b.lookup(Key::ctrl('g'), KeyContext::kEdit), Action::kCancel);
  EXPECT_EQ(b.lookup(Key::ctrl('g'), KeyContext::kPrompt), Action::kGood);
  EXPECT_EQ(b.bind("good", "g").message, "already bound");
}

TEST(Bindings, InvalidBindingsAreRefusedWithAReason) {
  Bindings b;
  BindStatus s = b.bind("no_such_action", "x");
  EXPECT_EQ(s.code, BindStatus::Code::kUnknownAction);
  EXPECT_EQ(s.message, "unknown action 'no_such_action'");
  s = b.bind("quit", "Ctrl-");
  EXPECT_EQ(s.code, BindStatus::Code::kInvalidKey);
  EXPECT_EQ(s.message, "invalid key 'Ctrl-'");
  s = b.bind("submit", "x");
  EXPECT_EQ(s.code, BindStatus::Code::kReservedKey);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(b.bind("submit", "Ctrl-J").ok());  // a control key is fine in the editor
  s = b.unbind("quit", "z");
  EXPECT_EQ(s.code, BindStatus::Code::kNotBound);
  EXPECT_EQ(b.unbind("bogus", "z").code, BindStatus::Code::kUnknownAction);
  EXPECT_EQ(b.unbind("quit", "???").code, BindStatus::Code::kInvalidKey);
  EXPECT_TRUE(b.unbind("quit", "Q").ok());
  EXPECT_EQ(b.lookup(Key::of('Q'), KeyContext::kNormal), Action::kNone);
  EXPECT_TRUE(b.unbind("quit", "F10").ok());
  EXPECT_EQ(b.keys_text(Action::kQuit), "(unbound)");
}

TEST(HelpText, ListsEveryActionGroupedWithItsKeys) {
  Bindings b;
  const std::string text = help_text(b);
  for (const ActionInfo& info : action_table()) {
    EXPECT_NE(text.find(std::string(info.name)), std::string::npos) << info.name;
    EXPECT_NE(text.find(std::string(info.help)), std::string::npos) << info.help;
  }
  EXPECT_NE(text.find("  Down, j         down            Move down one row\n"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("General\n", 0), 0u);
  // Groups appear once each, in table order.
  const size_t general = text.find("General\n");
  const size_t navigation = text.find("\nNavigation\n");
  const size_t prompts = text.find("\nPrompts\n");
  const size_t editing = text.find("\nEditing\n");
  EXPECT_LT(general, navigation);
  EXPECT_LT(navigation, prompts);
  EXPECT_LT(prompts, editing);
  // Rebinding shows in the generated help.
  ASSERT_TRUE(b.bind("help", "F1").ok());
  EXPECT_NE(help_text(b).find("  ?, F1"), std::string::npos);
  const auto lines = help_lines(b);
  EXPECT_EQ(lines.front().role, ColorRole::kHeader);
}

}  // namespace
}  // namespace vn::tui
