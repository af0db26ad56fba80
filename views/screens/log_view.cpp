// SPDX-License-Identifier: Apache-2.0
#include "views/screens/log_view.h"

#include <algorithm>

#include "tui/i18n.h"
#include "views/screens/screens.h"

namespace vn::views {

void LogView::add(std::string line, tui::ColorRole role) { pane_.append({std::move(line), role}); }

std::string LogView::title() const { return screen_title(id()); }

std::string LogView::description() const { return screen_description(id()); }

std::vector<tui::Action> LogView::help_actions() const {
  using tui::Action;
  return {Action::kUp, Action::kDown, Action::kPageUp, Action::kPageDown, Action::kHome, Action::kEnd,
          Action::kNextMatch, Action::kPrevMatch};
}

void LogView::draw(tui::Canvas& canvas) const {
  canvas.fill(pane_.area());
  pane_.draw(canvas);
}

bool LogView::tick(std::chrono::steady_clock::time_point now) {
  (void)now;
  if (feed_ && generation_ != feed_->generation()) {
    generation_ = feed_->generation();
    lines_seen_ = 0;
    outcome_logged_ = false;
  }
  const auto progress = feed_ ? feed_->progress() : progress_ ? progress_() : nullptr;
  if (progress == nullptr) return false;
  bool changed = false;
  for (; lines_seen_ < progress->log.size(); ++lines_seen_) {
    pane_.append({progress->log[lines_seen_]});
    changed = true;
  }
  if (!outcome_logged_ && progress->state != session::JobState::kRunning) {
    outcome_logged_ = true;
    if (progress->state != session::JobState::kSucceeded) {
      pane_.append({std::string(tui::tr(session::job_state_name(progress->state))) + ": " + progress->status.message(),
                    tui::ColorRole::kError});
      changed = true;
    }
  }
  return changed;
}

}  // namespace vn::views
