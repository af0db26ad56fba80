// SPDX-License-Identifier: Apache-2.0
#include "views/screens/help_view.h"

#include <algorithm>

#include "tui/i18n.h"
#include "views/screens/screens.h"

namespace vn::views {

std::string HelpView::title() const { return screen_title(id()); }

std::string HelpView::description() const { return screen_description(id()); }

std::vector<tui::Action> HelpView::help_actions() const {
  using tui::Action;
  return {Action::kUp, Action::kDown, Action::kPageUp, Action::kPageDown, Action::kHome, Action::kEnd,
          Action::kNextMatch, Action::kPrevMatch};
}

bool HelpView::refresh() {
  std::vector<tui::HelpLine> lines = content_ ? content_() : std::vector<tui::HelpLine>{};
  const bool same = lines.size() == shown_.size() &&
                    std::equal(lines.begin(), lines.end(), shown_.begin(), [](const tui::HelpLine& a, const tui::HelpLine& b) {
                      return a.text == b.text && a.role == b.role;
                    });
  if (same) return false;
  shown_ = std::move(lines);
  std::vector<tui::TextLine> text;
  for (const tui::HelpLine& line : shown_) text.push_back({line.text, line.role});
  const size_t top = pane_.top();
  pane_.set_lines(std::move(text));
  pane_.scroll_to(top);
  return true;
}

void HelpView::resize(tui::Rect area) {
  pane_.resize(area);
  refresh();
}

bool HelpView::tick(std::chrono::steady_clock::time_point now) {
  (void)now;
  return refresh();
}

void HelpView::draw(tui::Canvas& canvas) const {
  canvas.fill(pane_.area());
  pane_.draw(canvas);
}

}  // namespace vn::views
