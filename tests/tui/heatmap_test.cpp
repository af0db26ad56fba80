// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/heatmap.h"

#include <gtest/gtest.h>

#include <cmath>

#include "golden.h"

namespace vn::tui {
namespace {

Heatmap gradient(int rows, int cols) {
  std::vector<double> values;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) values.push_back(static_cast<double>(r + c));
  }
  Heatmap h;
  h.set_values(rows, cols, std::move(values));
  return h;
}

std::string draw(const Heatmap& h, int w, int rows, const Glyphs& glyphs = unicode_glyphs()) {
  Canvas c(w, rows);
  c.set_glyphs(glyphs);
  h.draw(c, {0, 0, w, rows});
  return c.dump();
}

TEST(Heatmap, Golden80x24) {
  Heatmap h = gradient(16, 32);
  Canvas c(80, 24);
  h.draw(c, {0, 0, 80, 24});
  testing::expect_golden("heatmap_80x24", testing::screen_text(c));
}

TEST(Heatmap, ShadesAndLegendInUnicodeAndAscii) {
  Heatmap h;
  h.set_values(2, 3, {0, 1, 2, 3, 4, NAN});
  EXPECT_EQ(h.range(), std::make_pair(0.0, 4.0));
  EXPECT_EQ(draw(h, 20, 3), "  ░░▒▒\n▓▓██××\n0  ░▒▓█ 4  NaN 1\n");
  EXPECT_EQ(draw(h, 20, 3, ascii_glyphs()), "  ..::\n++##??\n0  .:+# 4  NaN 1\n");
  Canvas c(20, 3);
  h.draw(c, {0, 0, 20, 3});
  EXPECT_EQ(c.dump_roles(), "ooooww\neeeeee\ndddddddddddddddd\n");
}

TEST(Heatmap, DownsamplesByMaximumSoOneBadElementShows) {
  std::vector<double> values(100 * 100, 0.0);
  values[57 * 100 + 33] = 1.0;
  Heatmap h;
  h.set_values(100, 100, std::move(values));
  const std::string screen = draw(h, 10, 6);
  EXPECT_EQ(screen, "\n\n   █\n\n\n0  ░▒▓█ 1\n");  // row 57 / 20, column 33 / 10
}

TEST(Heatmap, FixedRangeClampsAndTinySizes) {
  Heatmap h = gradient(3, 3);
  h.set_range(0, 2);
  EXPECT_EQ(draw(h, 6, 4, ascii_glyphs()), "  ::##\n::####\n######\n0  .:+\n");
  h.clear_range();
  EXPECT_EQ(h.range(), std::make_pair(0.0, 4.0));
  EXPECT_EQ(draw(h, 1, 1), "█\n");
  EXPECT_EQ(draw(h, 0, 2), "\n\n");
  Heatmap bad;
  bad.set_values(2, 2, {1, 2, 3});  // size mismatch
  EXPECT_EQ(bad.rows(), 0);
  EXPECT_EQ(draw(bad, 10, 2), "(no data)\n\n");
}

}  // namespace
}  // namespace vn::tui
