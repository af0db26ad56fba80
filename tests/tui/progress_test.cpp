// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/progress.h"

#include <gtest/gtest.h>

#include <cmath>

#include "golden.h"

namespace vn::tui {
namespace {

std::string draw(const ProgressBar& p, int w, const Glyphs& glyphs = unicode_glyphs()) {
  Canvas c(w, 1);
  c.set_glyphs(glyphs);
  p.draw(c, {0, 0, w, 1});
  return c.dump();
}

TEST(ProgressBar, Golden80x24) {
  Canvas c(80, 24);
  const double fractions[] = {0, 0.05, 0.333, 0.5, 0.999, 1, 1.5, NAN};
  for (int i = 0; i < 8; ++i) {
    ProgressBar p;
    p.set(fractions[i], "reduce " + std::to_string(i), ProgressBar::format_eta(37.0 * i));
    p.draw(c, {0, i * 3, 80, 3});
  }
  testing::expect_golden("progress_80x24", testing::screen_text(c));
}

TEST(ProgressBar, LayoutDegradesWithWidth) {
  ProgressBar p;
  p.set(0.42, "bisecting nodes", "ETA 1m05s");
  EXPECT_EQ(draw(p, 50), "bisecting nodes [██████▊         ]  42%  ETA 1m05s\n");
  EXPECT_EQ(draw(p, 50, ascii_glyphs()), "bisecting nodes [#######         ]  42%  ETA 1m05s\n");
  EXPECT_EQ(draw(p, 30), "bisecting nodes [███    ]  42%\n");
  EXPECT_EQ(draw(p, 20), "bisect… [██▏  ]  42%\n");
  EXPECT_EQ(draw(p, 12), "[██▏  ]  42%\n");
  EXPECT_EQ(draw(p, 4), " 42%\n");
  EXPECT_EQ(draw(p, 1), "\n");
  EXPECT_EQ(draw(p, 0), "\n");
}

TEST(ProgressBar, EtaFormattingAndEstimate) {
  EXPECT_EQ(ProgressBar::format_eta(42), "ETA 42s");
  EXPECT_EQ(ProgressBar::format_eta(65), "ETA 1m05s");
  EXPECT_EQ(ProgressBar::format_eta(3725), "ETA 1h02m");
  EXPECT_EQ(ProgressBar::format_eta(-1), "ETA --");
  EXPECT_EQ(ProgressBar::format_eta(NAN), "ETA --");
  EXPECT_DOUBLE_EQ(ProgressBar::estimate_remaining(10, 0.25), 30);
  EXPECT_TRUE(std::isnan(ProgressBar::estimate_remaining(10, 0)));
  ProgressBar p;
  p.set(2, "x");
  EXPECT_EQ(p.fraction(), 1.0);
  p.set(NAN, "x");
  EXPECT_EQ(p.fraction(), 0.0);
}

}  // namespace
}  // namespace vn::tui
