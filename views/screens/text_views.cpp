// SPDX-License-Identifier: Apache-2.0
#include "views/screens/text_views.h"

namespace vn::views {

void LogView::add(std::string line, tui::ColorRole role) { pane_.append({std::move(line), role}); }

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
      pane_.append({std::string(session::job_state_name(progress->state)) + ": " + progress->status.message(),
                    tui::ColorRole::kError});
      changed = true;
    }
  }
  return changed;
}

HelpView::HelpView(const tui::Bindings& bindings)
    : HelpView(bindings,
               {{"Screens", tui::ColorRole::kHeader},
                {"  Graph   the model as lanes, one node per row; marks: ok, ! over tolerance, x far over, N NaN/Inf"},
                {"  Layers  per-layer errors as factors of the tolerance; Enter opens the tensor detail"},
                {"  Log     what the session did; Help this screen"},
                {"Commands (:)", tui::ColorRole::kHeader},
                {"  :goto NODE   select a node     :set atol X | rtol X   compare again"},
                {"  :export FILE write the layer table     :view ID   :bind ACTION KEY   :quit"}}) {}

void HelpView::resize(tui::Rect area) {
  std::vector<tui::TextLine> lines = intro_;
  lines.push_back({""});
  for (tui::HelpLine& line : tui::help_lines(bindings_)) lines.push_back({std::move(line.text), line.role});
  pane_.set_lines(std::move(lines));
  pane_.resize(area);
}

void HelpView::draw(tui::Canvas& canvas) const {
  canvas.fill(pane_.area());
  pane_.draw(canvas);
}

}  // namespace vn::views
