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

namespace vn::tui {
namespace {

TEST(Rect, GeometryHelpers) {
  const Rect r{2, 3, 10, 4};
  EXPECT_TRUE(r.contains(2, 3));
  EXPECT_FALSE(r.contains(12, 3));
  EXPECT_EQ(r.inset(1), (Rect{3, 4, 8, 2}));
  EXPECT_EQ(r.inset(5), (Rect{7, 8, 0, 0}));
  EXPECT_EQ(r.rows(1, 2), (Rect{2, 4, 10, 2}));
  EXPECT_EQ(r.rows(3, 5), (Rect{2, 6, 10, 1}));
  EXPECT_EQ(r.intersect(Rect{0, 0, 4, 5}), (Rect{2, 3, 2, 2}));
  EXPECT_TRUE(r.intersect(Rect{20, 20, 1, 1}).empty());
}

TEST(Canvas, ClippedPutTextStaysInsideTheRect) {
  Canvas c(10, 3);
  const Rect clip{2, 1, 4, 1};
  EXPECT_EQ(c.put_text(clip, 0, 1, "abcdefgh"), 4);  // starts left of the clip: columns 2..5 written
  EXPECT_EQ(c.put_text(clip, 3, 0, "zz"), 0);        // row outside the clip
  EXPECT_EQ(c.dump(), "\n  cdef\n\n");
  Canvas d(6, 1);
  d.put_text(Rect{1, 0, 4, 1}, 0, 0, "精度");  // the wide glyph cut by the left edge leaves a blank
  EXPECT_EQ(d.dump(), "  度\n");
}

TEST(Canvas, OverwritingHalfAWideGlyphBlanksTheOtherHalf) {
  Canvas c(6, 1);
  c.put_text(0, 0, "精度");
  c.put_text(1, 0, "x");  // lands on the continuation of 精
  EXPECT_EQ(c.dump(), " x度\n");
  c.put_text(2, 0, "y");  // lands on the first half of 度
  EXPECT_EQ(c.dump(), " xy\n");
  EXPECT_EQ(c.at(3, 0).glyph, " ");
  Canvas d(4, 1);
  d.put_text(0, 0, "ab精");
  d.put_text(1, 0, "度");  // a wide glyph over b and the first half of 精
  EXPECT_EQ(d.dump(), "a度\n");
  EXPECT_EQ(d.at(3, 0).glyph, " ");
}

TEST(Canvas, CombiningMarksJoinTheirBaseAndControlsAreDropped) {
  Canvas c(4, 1);
  EXPECT_EQ(c.put_text(0, 0, "e\xCC\x81x\ty"), 3);
  EXPECT_EQ(c.at(0, 0).glyph, "e\xCC\x81");
  EXPECT_EQ(c.dump(), "e\xCC\x81xy\n");
}

TEST(Canvas, FillBoxAndRoles) {
  Canvas c(8, 4);
  c.draw_box(c.bounds(), ColorRole::kAccent, "T");
  EXPECT_EQ(c.dump(),
            "┌─ T ──┐\n"
            "│      │\n"
            "│      │\n"
            "└──────┘\n");
  c.fill(Rect{1, 1, 6, 2}, "x", ColorRole::kError);
  EXPECT_EQ(c.dump_roles(),
            "aaaaaaaa\n"
            "aeeeeeea\n"
            "aeeeeeea\n"
            "aaaaaaaa\n");
  Canvas ascii(4, 2);
  ascii.set_glyphs(ascii_glyphs());
  ascii.draw_box(ascii.bounds());
  EXPECT_EQ(ascii.dump(), "+--+\n+--+\n");
  Canvas tiny(1, 1);
  tiny.draw_box(tiny.bounds());  // too small for a border: nothing drawn
  EXPECT_EQ(tiny.dump(), "\n");
}

TEST(Canvas, ZeroSizedCanvasIsInert) {
  Canvas c(0, 0);
  EXPECT_EQ(c.put_text(0, 0, "x"), 0);
  c.fill(Rect{0, 0, 5, 5}, "x");
  c.draw_box(Rect{0, 0, 5, 5});
  EXPECT_EQ(c.dump(), "");
  Canvas negative(-3, 2);
  EXPECT_EQ(negative.width(), 0);
}

}  // namespace
}  // namespace vn::tui
