// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/status_line.h"

namespace vn::tui {

void StatusLine::set_message(std::string text, ColorRole role) {
  message_ = std::move(text);
  message_role_ = role;
}

void StatusLine::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  const Rect row = area.rows(0, 1);
  canvas.fill(row, " ", ColorRole::kDim);
  const Glyphs& g = canvas.glyphs();
  const bool has_message = !message_.empty();
  const std::string& left = has_message ? message_ : left_;
  const ColorRole left_role = has_message ? message_role_ : ColorRole::kDefault;
  const int left_width = display_width(left);
  const int right_width = display_width(right_);
  // The right text is shown only when it fits beside the whole left text with a gap of two.
  const bool show_right = !right_.empty() && right_width + 2 + left_width <= row.w;
  const int left_room = show_right ? row.w - right_width - 2 : row.w;
  canvas.put_text(row, row.x, row.y, truncate_to_width(left, left_room, g.ellipsis), left_role);
  if (show_right) canvas.put_text(row, row.x + row.w - right_width, row.y, right_, ColorRole::kDim);
}

}  // namespace vn::tui
