// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/line_editor.h"

#include <gtest/gtest.h>

namespace vn::tui {
namespace {

TEST(LineEditor, InsertsAndMovesTheCursor) {
  LineEditor e;
  e.insert("bind quit");
  EXPECT_EQ(e.text(), "bind quit");
  EXPECT_EQ(e.cursor(), 9u);
  e.handle(Action::kEditHome);
  e.insert(">");
  EXPECT_EQ(e.text(), ">bind quit");
  e.handle(Action::kEditEnd);
  e.handle(Action::kEditLeft);
  e.handle(Action::kEditLeft);
  e.insert("\x01X");  // control characters are dropped
  EXPECT_EQ(e.text(), ">bind quXit");
  e.handle(Action::kEditRight);
  e.handle(Action::kEditRight);
  e.handle(Action::kEditRight);
  EXPECT_EQ(e.cursor(), 11u);
  EXPECT_EQ(e.handle(Action::kSubmit), kIgnored);
  EXPECT_EQ(e.handle(Action::kDown), kIgnored);
}

TEST(LineEditor, DeletesAndKills) {
  LineEditor e;
  e.set_text("view  layers now");
  e.handle(Action::kEditBackspace);
  EXPECT_EQ(e.text(), "view  layers no");
  e.handle(Action::kKillWord);
  EXPECT_EQ(e.text(), "view  layers ");
  e.handle(Action::kKillWord);  // the spaces before the cursor, then the word
  EXPECT_EQ(e.text(), "view  ");
  e.handle(Action::kEditHome);
  e.handle(Action::kEditDelete);
  EXPECT_EQ(e.text(), "iew  ");
  e.handle(Action::kEditRight);
  e.handle(Action::kKillToEnd);
  EXPECT_EQ(e.text(), "i");
  e.set_text("abc");
  e.handle(Action::kEditLeft);
  e.handle(Action::kKillToStart);
  EXPECT_EQ(e.text(), "c");
  EXPECT_EQ(e.cursor(), 0u);
  EXPECT_EQ(e.handle(Action::kEditBackspace), kHandled | kRedraw);  // at the start: nothing to delete
  EXPECT_EQ(e.text(), "c");
  e.handle(Action::kEditEnd);
  e.handle(Action::kEditDelete);
  EXPECT_EQ(e.text(), "c");
}

TEST(LineEditor, EditsCjkByCodePoint) {
  LineEditor e;
  e.set_text("精度x");
  e.handle(Action::kEditLeft);
  e.handle(Action::kEditBackspace);
  EXPECT_EQ(e.text(), "精x");
  Canvas c(10, 1);
  e.draw(c, {0, 0, 10, 1}, ":");
  EXPECT_EQ(c.dump(), ":精x\n");
  EXPECT_EQ(e.cursor_x({0, 0, 10, 1}, ":"), 3);  // after the two columns of 精
}

TEST(LineEditor, HistoryRecallKeepsTheDraft) {
  History h(3);
  h.add("one");
  h.add("two");
  h.add("two");  // repeat of the newest: not added
  h.add("");
  EXPECT_EQ(h.size(), 2u);
  LineEditor e(&h);
  e.insert("dra");
  e.handle(Action::kHistoryPrev);
  EXPECT_EQ(e.text(), "two");
  e.handle(Action::kHistoryPrev);
  EXPECT_EQ(e.text(), "one");
  e.handle(Action::kHistoryPrev);  // oldest: stays
  EXPECT_EQ(e.text(), "one");
  e.handle(Action::kHistoryNext);
  e.handle(Action::kHistoryNext);
  EXPECT_EQ(e.text(), "dra");
  e.handle(Action::kHistoryNext);
  EXPECT_EQ(e.text(), "dra");
  h.add("three");
  h.add("four");
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.at(0), "two");  // the oldest fell off
  LineEditor no_history;
  EXPECT_EQ(no_history.handle(Action::kHistoryPrev), kHandled | kRedraw);
  EXPECT_EQ(no_history.text(), "");
}

TEST(LineEditor, ScrollsToKeepTheCursorVisible) {
  LineEditor e;
  e.set_text("0123456789abcdef");
  Canvas c(8, 1);
  e.draw(c, {0, 0, 8, 1}, ":");
  EXPECT_EQ(c.dump(), ":abcdef\n");
  EXPECT_EQ(e.cursor_x({0, 0, 8, 1}, ":"), 7);
  e.handle(Action::kEditHome);
  e.draw(c, {0, 0, 8, 1}, ":");
  EXPECT_EQ(c.dump(), ":0123456\n");
  EXPECT_EQ(e.cursor_x({0, 0, 8, 1}, ":"), 1);
  Canvas tiny(1, 1);
  e.draw(tiny, {0, 0, 1, 1}, ":");
  EXPECT_EQ(tiny.dump(), ":\n");
  EXPECT_EQ(e.cursor_x({0, 0, 1, 1}, ":"), 0);
  Canvas none(0, 1);
  e.draw(none, {0, 0, 0, 1}, ":");
  EXPECT_EQ(none.dump(), "\n");
}

}  // namespace
}  // namespace vn::tui
