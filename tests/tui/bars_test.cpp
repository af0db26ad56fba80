// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/bars.h"

#include <gtest/gtest.h>

#include <cmath>

#include "golden.h"

namespace vn::tui {
namespace {

std::vector<Bar> error_bars() {
  return {{"conv1", 0.5, "0.5"}, {"relu1", 1.0, "1"}, {"conv2_long_name", 0.0625, "0.0625"}, {"gemm", NAN, "nan"},
          {"add", -1, "-1"}};
}

std::string draw_bars(const BarChart& chart, int w, int h, const Glyphs& glyphs = unicode_glyphs()) {
  Canvas c(w, h);
  c.set_glyphs(glyphs);
  chart.draw(c, {0, 0, w, h});
  return c.dump();
}

TEST(BarChart, Golden80x24) {
  BarChart chart;
  chart.set_bars(error_bars());
  Canvas c(80, 24);
  chart.draw(c, {0, 0, 80, 24});
  testing::expect_golden("bars_80x24", testing::screen_text(c));
}

TEST(BarChart, ScalesWithEighthBlocksAndAsciiFallback) {
  BarChart chart;
  chart.set_bars({{"a", 1.0, "1"}, {"b", 0.5625, "0.56"}});
  EXPECT_EQ(draw_bars(chart, 20, 2), "a █████████████    1\nb ███████▍      0.56\n");
  EXPECT_EQ(draw_bars(chart, 20, 2, ascii_glyphs()), "a #############    1\nb #######       0.56\n");
  chart.set_max(2.0);
  EXPECT_EQ(draw_bars(chart, 20, 2), "a ██████▌          1\nb ███▋          0.56\n");
  chart.set_max(0);
  chart.set_log_scale(true);
  chart.set_bars({{"a", 999, "999"}, {"b", 9, "9"}});
  EXPECT_EQ(draw_bars(chart, 20, 2), "a ██████████████ 999\nb ████▋            9\n");  // log10(10) / log10(1000)
}

TEST(BarChart, NarrowAndTinySizes) {
  BarChart chart;
  chart.set_bars(error_bars());
  EXPECT_EQ(draw_bars(chart, 20, 8),
            "conv1  ███▌      0.5\n"
            "relu1  ███████     1\n"
            "conv2… ▌       0.06…\n"
            "gemm   ×         nan\n"
            "add               -1\n"
            "\n\n\n");
  EXPECT_EQ(draw_bars(chart, 12, 2), "con… ███▌\nrel… ███████\n");  // the value text gave way first
  EXPECT_EQ(draw_bars(chart, 1, 1), "▌\n");
  EXPECT_EQ(draw_bars(chart, 0, 3), "\n\n\n");
}

TEST(Sparkline, ScalesTheNewestValuesToTheWidth) {
  Sparkline s;
  s.set_values({0, 1, 2, 3, 4, 5, 6, 7});
  Canvas c(8, 2);
  s.draw(c, {0, 0, 8, 2});
  EXPECT_EQ(c.dump(), "▁▂▃▄▅▆▇█\n\n");
  Canvas narrow(4, 1);
  s.draw(narrow, {0, 0, 4, 1});  // the last four values, rescaled
  EXPECT_EQ(narrow.dump(), "▁▃▆█\n");
  s.set_values({1, NAN, 1});
  Canvas ascii(5, 1);
  ascii.set_glyphs(ascii_glyphs());
  s.draw(ascii, {0, 0, 5, 1});
  EXPECT_EQ(ascii.dump(), "~?~\n");  // a flat series sits in the middle
  EXPECT_EQ(ascii.at(1, 0).role, ColorRole::kError);
  Canvas none(0, 0);
  s.draw(none, {0, 0, 0, 0});
  EXPECT_EQ(none.dump(), "");
}

TEST(Sparkline, At80x24ShowsTheLastEightyValuesInTheFirstRow) {
  std::vector<double> values;
  for (int i = 0; i < 100; ++i) values.push_back(i < 20 ? 1000.0 : static_cast<double>(i));
  Sparkline s;
  s.set_values(std::move(values));
  Canvas c(80, 24);
  s.draw(c, c.bounds());
  const std::string screen = c.dump();
  const std::string first_row = screen.substr(0, screen.find('\n'));
  EXPECT_EQ(display_width(first_row), 80);
  EXPECT_EQ(first_row.substr(0, 3), "▁");  // 20, the smallest shown: the 1000s scrolled off
  EXPECT_EQ(first_row.substr(first_row.size() - 3), "█");
  EXPECT_EQ(screen.substr(screen.find('\n')), std::string(24, '\n'));
}

TEST(Histogram, FromValuesCountsBinsAndNonFinite) {
  const std::vector<double> values = {0, 0.1, 0.2, 0.5, 0.9, 1.0, NAN, INFINITY, -INFINITY};
  const Histogram h = Histogram::from_values(values, 4);
  EXPECT_EQ(h.edges(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(h.counts(), (std::vector<uint64_t>{3, 0, 1, 2}));
  EXPECT_EQ(h.nan_count(), 1u);
  EXPECT_EQ(h.inf_count(), 2u);
  const Histogram same = Histogram::from_values(std::vector<double>{2, 2, 2}, 10);
  EXPECT_EQ(same.counts(), (std::vector<uint64_t>{3}));
  const Histogram empty = Histogram::from_values(std::vector<double>{NAN}, 10);
  EXPECT_TRUE(empty.counts().empty());
  Histogram invalid;
  invalid.set_bins({1, 0}, {5});
  EXPECT_TRUE(invalid.counts().empty());
}

TEST(Histogram, Golden80x24AndMergesBinsWhenShort) {
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) values.push_back(std::pow(static_cast<double>(i % 100) / 100.0, 3));
  values.push_back(NAN);
  Histogram h = Histogram::from_values(values, 10);
  Canvas c(80, 24);
  h.draw(c, {0, 0, 80, 24});
  testing::expect_golden("histogram_80x24", testing::screen_text(c));
  Canvas small(30, 4);  // 10 bins into 3 rows: merged by 4, plus the NaN row
  h.draw(small, {0, 0, 30, 4});
  EXPECT_EQ(small.dump(),
            "0..0.388   ███████████████ 730\n"
            "0.388..0.… ████████████    190\n"
            "0.776..0.… ██████████       80\n"
            "NaN        █▋                1\n");
  Canvas tiny(3, 1);
  h.draw(tiny, {0, 0, 3, 1});
  EXPECT_EQ(tiny.dump(), "███\n");  // everything merged into one bar, no room for the NaN row
}

TEST(ShortNumber, ThreeSignificantDigits) {
  EXPECT_EQ(short_number(0.000123456), "0.000123");
  EXPECT_EQ(short_number(123456), "1.23e+05");
  EXPECT_EQ(short_number(NAN), "nan");
  EXPECT_EQ(short_number(-INFINITY), "-inf");
}

}  // namespace
}  // namespace vn::tui
