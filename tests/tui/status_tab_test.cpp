// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "golden.h"
#include "tui/widgets/status_line.h"
#include "tui/widgets/tab_bar.h"

namespace vn::tui {
namespace {

std::string draw_status(const StatusLine& s, int w) {
  Canvas c(w, 1);
  s.draw(c, {0, 0, w, 1});
  return c.dump();
}

std::string draw_tabs(const TabBar& t, int w, const Glyphs& glyphs = unicode_glyphs()) {
  Canvas c(w, 1);
  c.set_glyphs(glyphs);
  t.draw(c, {0, 0, w, 1});
  return c.dump();
}

TabBar screens() {
  TabBar t;
  t.set_tabs({"Flowchart", "Graph", "Layers", "Reduce", "Tactics", "Log", "Help"});
  return t;
}

TEST(StatusLine, Golden80x24) {
  Canvas c(80, 24);
  StatusLine s;
  s.set_left("layer-wise comparison running");
  s.set_right("row 3/120");
  s.draw(c, {0, 0, 80, 1});
  s.set_message("cannot open model.onnx: no such file", ColorRole::kError);
  s.draw(c, {0, 2, 80, 1});
  TabBar t = screens();
  t.set_active(2);
  t.draw(c, {0, 4, 80, 1});
  testing::expect_golden("status_tabs_80x24", testing::screen_text(c));
}

TEST(StatusLine, MessageReplacesLeftAndRightGivesWayFirst) {
  StatusLine s;
  s.set_left("running");
  s.set_right("3/120");
  EXPECT_EQ(draw_status(s, 20), "running        3/120\n");
  EXPECT_EQ(draw_status(s, 13), "running\n");
  EXPECT_EQ(draw_status(s, 5), "runn…\n");
  s.set_message("bad key", ColorRole::kWarning);
  EXPECT_EQ(draw_status(s, 20), "bad key        3/120\n");
  Canvas c(20, 1);
  s.draw(c, {0, 0, 20, 1});
  EXPECT_EQ(c.at(0, 0).role, ColorRole::kWarning);
  s.clear_message();
  EXPECT_EQ(draw_status(s, 20), "running        3/120\n");
  EXPECT_EQ(draw_status(s, 1), "…\n");
  EXPECT_EQ(draw_status(s, 0), "\n");
}

TEST(TabBar, DropsPaddingThenShortensTitlesThenScrollsToTheActiveTab) {
  TabBar t = screens();
  EXPECT_EQ(draw_tabs(t, 80), " 1 Flowchart │ 2 Graph │ 3 Layers │ 4 Reduce │ 5 Tactics │ 6 Log │ 7 Help\n");
  // Whole titles without their padding before any is cut.
  EXPECT_EQ(draw_tabs(t, 60), "1 Flowchart│2 Graph│3 Layers│4 Reduce│5 Tactics│6 Log│7 Help\n");
  EXPECT_EQ(draw_tabs(t, 50), "1 Flo~│2 Gra~│3 Lay~│4 Red~│5 Tac~│6 Log│7 Help\n");
  t.set_active(6);
  EXPECT_EQ(draw_tabs(t, 20), "←5 Tac~│6 Log│7 Help\n");
  EXPECT_EQ(draw_tabs(t, 20, ascii_glyphs()), "<5 Tac~|6 Log|7 Help\n");
  t.set_active(3);
  EXPECT_EQ(draw_tabs(t, 20), "←3 Lay~│4 Red~     →\n");
  EXPECT_EQ(draw_tabs(t, 5), "4 Re→\n");  // the active tab alone, cut
  EXPECT_EQ(draw_tabs(t, 1), "→\n");
  EXPECT_EQ(draw_tabs(t, 0), "\n");
  t.set_active(99);  // out of range: ignored
  EXPECT_EQ(t.active(), 3u);
}

TEST(TabBar, TabAtMapsColumnsToTabs) {
  TabBar t = screens();
  const Rect area{0, 0, 80, 1};
  EXPECT_EQ(t.tab_at(area, 0), 0u);
  EXPECT_EQ(t.tab_at(area, 12), 0u);
  EXPECT_EQ(t.tab_at(area, 13), std::nullopt);  // the separator
  EXPECT_EQ(t.tab_at(area, 14), 1u);
  EXPECT_EQ(t.tab_at(area, 79), std::nullopt);
  TabBar empty;
  EXPECT_EQ(empty.tab_at(area, 0), std::nullopt);
  EXPECT_EQ(draw_tabs(empty, 10), "\n");
}

}  // namespace
}  // namespace vn::tui
