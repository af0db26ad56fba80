// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tui/canvas.h"

namespace vn::tui {

/// The row of screen titles, numbered as the keys that select them: " 1 Flowchart │ 2 Graph ".
/// The active tab is drawn in kSelection. When the titles do not fit they lose their padding ("1 Graph"),
/// then they are shortened, and if
/// that is not enough the row scrolls so that the active tab is visible, with arrows marking
/// hidden tabs on either side.
class TabBar {
 public:
  /// Replaces the titles; the active tab is clamped.
  void set_tabs(std::vector<std::string> titles);
  /// Makes tab `index` active (ignored when out of range).
  void set_active(size_t index);
  /// The titles and the index of the active tab.
  const std::vector<std::string>& tabs() const { return titles_; }
  size_t active() const { return active_; }

  /// Draws into the first row of `area`.
  void draw(Canvas& canvas, Rect area) const;
  /// The tab drawn at column `x` when drawn into `area`, for mouse clicks.
  std::optional<size_t> tab_at(Rect area, int x) const;

 private:
  struct Slot {
    size_t index;
    int x;
    std::string text;
  };
  struct Layout {
    std::vector<Slot> slots;
    bool hidden_left = false;
    bool hidden_right = false;
  };
  Layout layout(Rect area) const;

  std::vector<std::string> titles_;
  size_t active_ = 0;
};

}  // namespace vn::tui
