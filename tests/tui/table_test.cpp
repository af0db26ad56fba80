// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/table.h"

#include <gtest/gtest.h>

#include "golden.h"

namespace vn::tui {
namespace {

using testing::expect_golden;
using testing::screen_text;

Table layer_table(size_t rows = 30) {
  Table t({{"Layer", 0, Align::kLeft, 6}, {"Op", 10}, {"Max abs", 10, Align::kRight}, {"Status", 6}});
  std::vector<TableRow> data;
  for (size_t i = 0; i < rows; ++i) {
    const bool bad = i % 7 == 3;
    const double err = bad ? 0.5 + static_cast<double>(i) : 1e-6 * static_cast<double>(i + 1);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", err);
    data.push_back({{"layer" + std::to_string(i), i % 2 ? "Conv" : "Relu", buf, bad ? "FAIL" : "ok"},
                    ColorRole::kDefault,
                    {ColorRole::kDefault, ColorRole::kDefault, bad ? ColorRole::kError : ColorRole::kOk,
                     bad ? ColorRole::kError : ColorRole::kOk}});
  }
  t.set_rows(std::move(data));
  return t;
}

std::string draw(const Table& t, int w, int h) {
  Canvas c(w, h);
  t.draw(c);
  return c.dump();
}

TEST(Table, Golden80x24) {
  Table t = layer_table();
  t.resize({0, 0, 80, 24});
  Canvas c(80, 24);
  t.draw(c);
  expect_golden("table_80x24", screen_text(c));
}

TEST(Table, NarrowAndTinySizes) {
  Table t = layer_table(5);
  t.resize({0, 0, 20, 8});
  EXPECT_EQ(draw(t, 20, 8),
            "Layer  Op         M…\n"
            "layer0 Relu       1…\n"
            "layer1 Conv       2…\n"
            "layer2 Relu       3…\n"
            "layer3 Conv       3…\n"
            "layer4 Relu       5…\n"
            "\n"
            "\n");
  t.resize({0, 0, 1, 1});
  EXPECT_EQ(draw(t, 1, 1), "…\n");
  t.resize({0, 0, 0, 5});
  EXPECT_EQ(draw(t, 0, 5), "\n\n\n\n\n");
  t.resize({0, 0, 10, 0});
  EXPECT_EQ(t.handle(Action::kPageDown), kHandled | kRedraw);
  EXPECT_EQ(t.selected_position(), 1u);  // a page is at least one row
}

TEST(Table, SelectionScrollsIntoView) {
  Table t = layer_table();
  t.resize({0, 0, 40, 5});  // header + 4 rows
  EXPECT_EQ(t.selected_row(), 0u);
  for (int i = 0; i < 5; ++i) t.handle(Action::kDown);
  EXPECT_EQ(t.selected_row(), 5u);
  EXPECT_EQ(t.top(), 2u);
  Canvas c(40, 5);
  t.draw(c);
  EXPECT_EQ(c.dump_roles(),
            "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH\n"
            ".......................oooooooooo.oooooo\n"
            ".......................eeeeeeeeee.eeeeee\n"
            ".......................oooooooooo.oooooo\n"
            "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS\n");
  EXPECT_EQ(t.handle(Action::kPageDown), kHandled | kRedraw);
  EXPECT_EQ(t.selected_row(), 9u);
  EXPECT_EQ(t.handle(Action::kEnd), kHandled | kRedraw);
  EXPECT_EQ(t.selected_row(), 29u);
  EXPECT_EQ(t.top(), 26u);
  EXPECT_EQ(t.handle(Action::kDown), kHandled);  // at the end: consumed, nothing to redraw
  EXPECT_EQ(t.handle(Action::kHome), kHandled | kRedraw);
  EXPECT_EQ(t.top(), 0u);
  EXPECT_EQ(t.handle(Action::kPageUp), kHandled);
  EXPECT_EQ(t.position_text(), "1/30");
  EXPECT_EQ(t.handle(Action::kHelp), kIgnored);
}

TEST(Table, SortsNumericallyWithNaNAboveNumbersAndTextBelowInNaturalOrder) {
  Table t({{"name", 8}, {"err", 8}});
  t.set_rows({{{"conv10", "1e-3"}}, {{"conv9", "nan"}}, {{"conv2", "25"}}, {{"relu", "3"}}, {{"add", "-"}}});
  t.resize({0, 0, 17, 6});
  t.sort_by(1);
  EXPECT_EQ(draw(t, 17, 6),
            "name     err▲\n"
            "conv10   1e-3\n"
            "relu     3\n"
            "conv2    25\n"
            "conv9    nan\n"
            "add      -\n");
  t.handle(Action::kReverseSort);
  EXPECT_TRUE(t.sort_descending());
  // Text ("-": nothing measured) stays below the numbers either way: never the worst.
  EXPECT_EQ(draw(t, 17, 6),
            "name     err▼\n"
            "conv9    nan\n"
            "conv2    25\n"
            "relu     3\n"
            "conv10   1e-3\n"
            "add      -\n");
  t.sort_by(0);
  EXPECT_EQ(draw(t, 17, 6),
            "name▲    err\n"
            "add      -\n"
            "conv2    25\n"
            "conv9    nan\n"
            "conv10   1e-3\n"
            "relu     3\n");
  EXPECT_LT(compare_cells("2", "10"), 0);
  EXPECT_LT(compare_cells("layer2", "layer10"), 0);
  EXPECT_LT(compare_cells("-inf", "-1"), 0);
  EXPECT_LT(compare_cells("inf", "nan"), 0);
  EXPECT_LT(compare_cells("12%", "9.5e1%"), 0);
  EXPECT_EQ(compare_cells("007", "7"), 0);
}

TEST(Table, SortActionCyclesColumnsAndKeepsTheSelectedRow) {
  Table t({{"a", 3}, {"b", 3}});
  t.set_rows({{{"x", "2"}}, {{"y", "1"}}, {{"z", "3"}}});
  t.resize({0, 0, 10, 4});
  t.select_row(1);
  t.handle(Action::kSort);
  EXPECT_EQ(t.sort_column(), 0);
  t.handle(Action::kSort);
  EXPECT_EQ(t.sort_column(), 1);
  EXPECT_EQ(t.selected_row(), 1u);
  EXPECT_EQ(t.selected_position(), 0u);  // "1" sorts first
  t.handle(Action::kSort);
  EXPECT_EQ(t.sort_column(), -1);  // back to the original order
  EXPECT_EQ(t.selected_position(), 1u);
}

TEST(Table, FilterHidesRowsAndNJumpsBetweenMatches) {
  Table t = layer_table();
  t.resize({0, 0, 40, 6});
  t.set_filter("fail");  // smart case: matches FAIL
  EXPECT_EQ(t.visible_count(), 4u);
  EXPECT_EQ(t.selected_row(), 3u);
  EXPECT_EQ(t.handle(Action::kNextMatch), kHandled | kRedraw);
  EXPECT_EQ(t.selected_row(), 10u);
  t.handle(Action::kPrevMatch);
  t.handle(Action::kPrevMatch);  // wraps to the last match
  EXPECT_EQ(t.selected_row(), 24u);
  t.set_filter("FAIL");
  EXPECT_EQ(t.visible_count(), 4u);
  t.set_filter("Fail");  // upper case makes it case-sensitive
  EXPECT_EQ(t.visible_count(), 0u);
  EXPECT_EQ(t.selected_row(), std::nullopt);
  Canvas c(40, 3);
  t.draw(c);
  EXPECT_EQ(c.dump(), "Layer       Op            Max abs Status\n(no rows match \"Fail\")\n\n");
  t.set_filter("");
  EXPECT_EQ(t.visible_count(), 30u);
  EXPECT_EQ(t.handle(Action::kNextMatch), kIgnored);
}

TEST(Table, HighlightModeKeepsRowsAndMarksMatches) {
  Table t = layer_table(12);
  t.resize({0, 0, 40, 13});
  t.set_filter("layer1", FilterMode::kHighlight);
  EXPECT_EQ(t.visible_count(), 12u);
  EXPECT_EQ(t.selected_row(), 1u);
  EXPECT_TRUE(t.next_match());
  EXPECT_EQ(t.selected_row(), 10u);
  EXPECT_TRUE(t.next_match());
  EXPECT_EQ(t.selected_row(), 11u);
  EXPECT_TRUE(t.next_match());
  EXPECT_EQ(t.selected_row(), 1u);  // wraps
  Canvas c(40, 13);
  t.draw(c);
  EXPECT_EQ(c.at(0, 2).role, ColorRole::kSelection);  // layer1, selected
  EXPECT_EQ(c.at(0, 11).role, ColorRole::kAccent);  // layer10 highlighted
  EXPECT_EQ(c.at(6, 11).role, ColorRole::kDefault);
  EXPECT_EQ(c.at(0, 3).role, ColorRole::kDefault);   // layer2 not a match
  EXPECT_FALSE(t.row_matches(2));
}

TEST(Table, HorizontalScrollKeepsTheFirstColumn) {
  Table t = layer_table(3);
  t.resize({0, 0, 24, 4});
  EXPECT_EQ(t.handle(Action::kLeft), kIgnored);
  // The clipped last column is fitted to the room it has, so numbers stay whole.
  EXPECT_EQ(draw(t, 24, 4),
            "Layer  Op         Max a…\n"
            "layer0 Relu        1e-06\n"
            "layer1 Conv        2e-06\n"
            "layer2 Relu        3e-06\n");
  EXPECT_EQ(t.handle(Action::kRight), kHandled | kRedraw);
  EXPECT_EQ(draw(t, 24, 4),
            "Layer     Max abs Status\nlayer0      1e-06 ok\nlayer1      2e-06 ok\nlayer2      3e-06 ok\n");
  EXPECT_EQ(t.handle(Action::kRight), kIgnored);  // everything fits now
  EXPECT_EQ(t.handle(Action::kLeft), kHandled | kRedraw);
}

TEST(Table, SetRowsKeepsTheSelectedRowIndex) {
  Table t = layer_table(10);
  t.resize({0, 0, 40, 5});
  t.select_row(7);
  t.set_rows(layer_table(8).rows());
  EXPECT_EQ(t.selected_row(), 7u);
  t.set_rows(layer_table(3).rows());
  EXPECT_EQ(t.selected_row(), 2u);  // clamped
  EXPECT_FALSE(t.select_row(5));
  t.set_rows({});
  EXPECT_EQ(t.selected_row(), std::nullopt);
  EXPECT_EQ(t.position_text(), "0/0");
  EXPECT_EQ(draw(t, 40, 5), "Layer       Op            Max abs Status\n(no rows)\n\n\n\n");
}

}  // namespace
}  // namespace vn::tui
