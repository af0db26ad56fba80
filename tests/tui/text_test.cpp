// SPDX-License-Identifier: Apache-2.0
#include "tui/text.h"

#include <gtest/gtest.h>

namespace vn::tui {
namespace {

using Lines = std::vector<std::string>;

TEST(Utf8, RoundTripsCodePoints) {
  const std::string text = "a精é😀";
  EXPECT_EQ(to_utf8(to_u32(text)), text);
  EXPECT_EQ(to_u32(text).size(), 4u);
  EXPECT_EQ(to_utf8(char32_t{0xD800}), "\xEF\xBF\xBD");  // surrogates are not scalar values
  EXPECT_EQ(to_u32("\xC3"), U"\uFFFD");                  // truncated sequence
}

TEST(TruncateToWidth, CutsByColumnsAndAddsEllipsis) {
  EXPECT_EQ(truncate_to_width("abcdef", 6, "…"), "abcdef");
  EXPECT_EQ(truncate_to_width("abcdef", 4, "…"), "abc…");
  EXPECT_EQ(truncate_to_width("abcdef", 4), "abcd");
  EXPECT_EQ(truncate_to_width("精度精度", 5, "~"), "精度~");
  EXPECT_EQ(truncate_to_width("精度精度", 4), "精度");
  EXPECT_EQ(truncate_to_width("精度", 1), "");  // a wide glyph never half-fits
  EXPECT_EQ(truncate_to_width("abc", 0, "…"), "");
  EXPECT_EQ(truncate_to_width("abc", 1, "...."), "a");  // an ellipsis wider than the room is dropped
}

TEST(FitToWidth, PadsAndAligns) {
  EXPECT_EQ(fit_to_width("ab", 5), "ab   ");
  EXPECT_EQ(fit_to_width("ab", 5, Align::kRight), "   ab");
  EXPECT_EQ(fit_to_width("ab", 5, Align::kCenter), " ab  ");
  EXPECT_EQ(fit_to_width("精", 3, Align::kRight), " 精");
  EXPECT_EQ(fit_to_width("abcdef", 3, Align::kLeft, "~"), "ab~");
  EXPECT_EQ(fit_to_width("x", -1), "");
}

TEST(WrapText, BreaksAtSpacesAndInsideLongWords) {
  EXPECT_EQ(wrap_text("the quick brown fox", 10), (Lines{"the quick", "brown fox"}));
  EXPECT_EQ(wrap_text("abcdefghij", 4), (Lines{"abcd", "efgh", "ij"}));
  EXPECT_EQ(wrap_text("精度精度精度", 5), (Lines{"精度", "精度", "精度"}));
  EXPECT_EQ(wrap_text("a\nb", 10), (Lines{"a", "b"}));
  EXPECT_EQ(wrap_text("", 10), (Lines{""}));
  EXPECT_EQ(wrap_text("  indented", 20), (Lines{"  indented"}));
  EXPECT_EQ(wrap_text("精", 1), (Lines{"?"}));  // wider than the line
  EXPECT_TRUE(wrap_text("anything", 0).empty());
}

TEST(FindText, SmartCase) {
  EXPECT_EQ(find_text("Conv_12", "conv", true), 0u);
  EXPECT_EQ(find_text("Conv_12", "conv", false), std::string::npos);
  EXPECT_EQ(find_text("abc", "", true), 0u);
  EXPECT_EQ(find_text("ab", "abc", true), std::string::npos);
  EXPECT_TRUE(smart_case_ignores_case("conv"));
  EXPECT_FALSE(smart_case_ignores_case("Conv"));
}

}  // namespace
}  // namespace vn::tui
