// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/text_pane.h"

#include <gtest/gtest.h>

#include "golden.h"

namespace vn::tui {
namespace {

std::vector<TextLine> log_lines(int n) {
  std::vector<TextLine> lines;
  for (int i = 0; i < n; ++i) {
    const bool warn = i % 5 == 4;
    std::string text(1, '[');
    text += std::to_string(i);
    text += "] ";
    text += warn ? "warning: tolerance exceeded on conv" : "step done";
    if (i == 7) text += " with a long explanation that needs more than one row to show in full";
    lines.push_back({std::move(text), warn ? ColorRole::kWarning : ColorRole::kDefault});
  }
  return lines;
}

std::string draw(const TextPane& p, int w, int h) {
  Canvas c(w, h);
  p.draw(c);
  return c.dump();
}

TEST(TextPane, Golden80x24) {
  TextPane p;
  p.set_lines(log_lines(40));
  p.resize({0, 0, 80, 24});
  p.set_search("conv");
  Canvas c(80, 24);
  p.draw(c);
  testing::expect_golden("text_pane_80x24", testing::screen_text(c));
}

TEST(TextPane, WrapsAtThePaneWidth) {
  TextPane p;
  p.set_lines({{"alpha beta gamma delta"}, {"精度精度精度"}});
  p.resize({0, 0, 11, 5});
  EXPECT_EQ(p.row_count(), 4u);
  EXPECT_EQ(draw(p, 11, 5), "alpha beta\ngamma delta\n精度精度精\n度\n\n");
  p.set_wrap(false);
  EXPECT_EQ(p.row_count(), 2u);
  EXPECT_EQ(draw(p, 11, 5), "alpha beta\n精度精度精\n\n\n\n");
  EXPECT_EQ(p.handle(Action::kRight), kHandled | kRedraw);
  // Scrolled by half the width (5 columns); the 精 cut by the left edge leaves a blank.
  EXPECT_EQ(draw(p, 11, 5), " beta gamma\n 度精度\n\n\n\n");
  EXPECT_EQ(p.handle(Action::kLeft), kHandled | kRedraw);
  EXPECT_EQ(p.handle(Action::kLeft), kIgnored);
}

TEST(TextPane, ScrollsByRowsAndPages) {
  TextPane p;
  p.set_lines(log_lines(30));
  p.resize({0, 0, 40, 10});
  EXPECT_EQ(p.handle(Action::kUp), kHandled);
  EXPECT_EQ(p.handle(Action::kDown), kHandled | kRedraw);
  EXPECT_EQ(p.top(), 1u);
  p.handle(Action::kPageDown);
  EXPECT_EQ(p.top(), 11u);
  p.handle(Action::kEnd);
  EXPECT_EQ(p.top(), p.row_count() - 10);
  EXPECT_EQ(p.position_text(), std::to_string(p.top() + 1) + "-" + std::to_string(p.row_count()) + "/" +
                                   std::to_string(p.row_count()));
  p.handle(Action::kHome);
  EXPECT_EQ(p.top(), 0u);
  EXPECT_EQ(p.handle(Action::kQuit), kIgnored);
}

TEST(TextPane, FollowsAppendedLinesAtTheEnd) {
  TextPane p;
  p.resize({0, 0, 20, 3});
  for (int i = 0; i < 5; ++i) p.append({"line " + std::to_string(i)});
  EXPECT_EQ(draw(p, 20, 3), "line 2\nline 3\nline 4\n");
  p.handle(Action::kHome);
  p.append({"line 5"});
  EXPECT_EQ(draw(p, 20, 3), "line 0\nline 1\nline 2\n");  // scrolled away: stays put
  p.scroll_to_end();
  p.append({"line 6"});
  EXPECT_EQ(draw(p, 20, 3), "line 4\nline 5\nline 6\n");
}

TEST(TextPane, SearchHighlightsAndJumps) {
  TextPane p;
  p.set_lines(log_lines(30));
  p.resize({0, 0, 40, 5});
  EXPECT_TRUE(p.set_search("warning"));
  EXPECT_EQ(p.top(), 0u);  // first match (row 4) is already visible
  Canvas c(40, 5);
  p.draw(c);
  EXPECT_EQ(c.at(4, 4).role, ColorRole::kSelection);  // current match
  EXPECT_EQ(c.at(3, 4).role, ColorRole::kWarning);    // the line's own role around it
  EXPECT_EQ(p.handle(Action::kNextMatch), kHandled | kRedraw);
  EXPECT_EQ(p.top(), 11u);  // row of "[9] warning": [7] wraps onto three rows before it
  EXPECT_TRUE(p.prev_match());
  EXPECT_FALSE(p.set_search("absent"));
  EXPECT_FALSE(p.next_match());
  p.set_search("");
  EXPECT_EQ(p.handle(Action::kNextMatch), kIgnored);
}

TEST(TextPane, TinySizes) {
  TextPane p;
  p.set_lines(log_lines(3));
  p.resize({0, 0, 1, 1});
  EXPECT_EQ(draw(p, 1, 1), "[\n");
  p.resize({0, 0, 0, 3});
  EXPECT_EQ(draw(p, 0, 3), "\n\n\n");
  EXPECT_EQ(p.handle(Action::kPageDown), kHandled);  // everything is shown: nothing to scroll
  TextPane empty;
  empty.resize({0, 0, 5, 2});
  EXPECT_EQ(empty.position_text(), "0/0");
  EXPECT_EQ(draw(empty, 5, 2), "\n\n");
}

}  // namespace
}  // namespace vn::tui
