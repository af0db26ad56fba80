// SPDX-License-Identifier: Apache-2.0
#include "tui/canvas.h"

#include <gtest/gtest.h>

namespace vn::tui {
namespace {

TEST(DisplayWidth, CountsWideAndCombiningCharacters) {
  EXPECT_EQ(display_width("abc"), 3);
  EXPECT_EQ(display_width("精度"), 4);                 // CJK: two columns each
  EXPECT_EQ(display_width("e\xCC\x81"), 1);            // e + combining acute
  EXPECT_EQ(display_width("\xFF\xFE"), 2);             // invalid bytes count one each
  EXPECT_EQ(display_width(""), 0);
}

TEST(Canvas, WritesClipsAndDumps) {
  Canvas c(6, 2);
  EXPECT_EQ(c.put_text(0, 0, "hello world"), 6);
  EXPECT_EQ(c.put_text(2, 1, "ab", ColorRole::kError), 2);
  EXPECT_EQ(c.dump(), "hello\n  ab\n");  // trailing spaces trimmed, row 0 clipped at 6 columns
  EXPECT_EQ(c.at(0, 0).glyph, "h");
  EXPECT_EQ(c.at(2, 1).role, ColorRole::kError);
  EXPECT_EQ(c.put_text(0, 5, "out of bounds"), 0);
}

TEST(Canvas, WideGlyphsTakeTwoCellsAndNeverStraddleTheEdge) {
  Canvas c(5, 1);
  EXPECT_EQ(c.put_text(0, 0, "精度x"), 5);
  EXPECT_EQ(c.dump(), "精度x\n");
  EXPECT_EQ(c.at(1, 0).glyph, "");  // continuation cell
  Canvas d(3, 1);
  d.put_text(0, 0, "a精度");
  EXPECT_EQ(d.dump(), "a精\n");
  Canvas e(2, 1);
  e.put_text(1, 0, "精");
  EXPECT_EQ(e.dump(), "\n");  // a wide glyph that does not fit becomes a space
}

TEST(Canvas, MaxWidthAndRoles) {
  Canvas c(10, 1);
  EXPECT_EQ(c.put_text(1, 0, "abcdef", ColorRole::kDefault, 3), 3);
  c.set_role(0, 0, 4, ColorRole::kSelection);
  EXPECT_EQ(c.dump(), " abc\n");
  EXPECT_EQ(c.at(3, 0).role, ColorRole::kSelection);
  EXPECT_EQ(c.at(4, 0).role, ColorRole::kDefault);
  c.clear();
  EXPECT_EQ(c.dump(), "\n");
}

}  // namespace
}  // namespace vn::tui
