// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "tui/canvas.h"

namespace vn::tui {

/// The one-row status line: left text (what is going on), right text (position, key hints) and
/// a message that replaces the left text until cleared (errors, command results). When the row
/// is too narrow, the right text gives way first.
class StatusLine {
 public:
  /// Sets the left text (shown when there is no message) and the right text.
  void set_left(std::string text) { left_ = std::move(text); }
  void set_right(std::string text) { right_ = std::move(text); }
  /// Shows `text` in `role` (kError for errors, kOk for confirmations) instead of the left text.
  void set_message(std::string text, ColorRole role = ColorRole::kError);
  /// Removes the message; the left text shows again.
  void clear_message() { message_.clear(); }
  /// The current texts, message and message role.
  const std::string& left() const { return left_; }
  const std::string& right() const { return right_; }
  const std::string& message() const { return message_; }
  ColorRole message_role() const { return message_role_; }

  /// Draws into the first row of `area`.
  void draw(Canvas& canvas, Rect area) const;

 private:
  std::string left_;
  std::string right_;
  std::string message_;
  ColorRole message_role_ = ColorRole::kError;
};

}  // namespace vn::tui
