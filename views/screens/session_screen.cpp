// SPDX-License-Identifier: Apache-2.0
#include "views/screens/session_screen.h"

#include "tui/i18n.h"
#include "tui/text.h"
#include "tui/widgets/progress.h"

namespace vn::views {

void SessionScreen::resize(tui::Rect area) {
  area_ = area;
  layout();
}

void SessionScreen::draw(tui::Canvas& canvas) const {
  canvas.fill(area_);
  // Without a comparison (and, for a feed that runs no job, before its first session) the note.
  if ((shown_ != nullptr && !compared() && !shows_model()) ||
      (shown_ == nullptr && feed_->progress() == nullptr && !feed_->note().empty())) {
    int y = area_.y;
    for (const std::string& line : tui::wrap_text(feed_->note(), area_.w)) {
      if (y >= area_.y + area_.h) break;
      canvas.put_text(area_, area_.x, y++, line, tui::ColorRole::kDim);
    }
  } else if (shown_ != nullptr) {
    draw_content(canvas);
  } else if (area_.h > 0) {
    const auto progress = feed_->progress();
    if (progress == nullptr || progress->state == session::JobState::kRunning) {
      tui::ProgressBar bar;
      bar.set(progress ? progress->fraction : 0, progress ? progress->label : std::string(tui::tr("waiting")));
      bar.draw(canvas, area_.rows(0, 1));
      canvas.put_text(area_, area_.x, area_.y + 1,
                      confirm_cancel_ ? tui::tr("Press x again to cancel the comparison; any other key goes on")
                                      : tui::tr("x cancels"),
                      confirm_cancel_ ? tui::ColorRole::kWarning : tui::ColorRole::kDim);
    } else {
      canvas.put_text(area_, area_.x, area_.y,
                      std::string(tui::tr(session::job_state_name(progress->state))) + ": " + progress->status.message(),
                      tui::ColorRole::kError);
    }
  }
}

unsigned SessionScreen::handle(tui::Action action) {
  if (confirm_cancel_) {
    // The confirmation takes the next key: x again cancels, any other only withdraws it.
    confirm_cancel_ = false;
    if (action == tui::Action::kCancelJob) feed_->cancel();
    return tui::kHandled | tui::kRedraw;
  }
  if (action == tui::Action::kCancelJob) {
    if (!feed_->running()) return tui::kIgnored;
    confirm_cancel_ = true;
    return tui::kHandled | tui::kRedraw;
  }
  if (shown_ == nullptr || (!compared() && !shows_model())) return tui::kIgnored;
  return handle_content(action);
}

bool SessionScreen::tick(std::chrono::steady_clock::time_point now) {
  (void)now;
  bool changed = false;
  if (generation_ != feed_->generation()) {
    generation_ = feed_->generation();
    shown_.reset();
    changed = true;
  }
  if (shown_ == nullptr) {
    if (auto result = feed_->result()) {
      shown_ = std::move(result);
      on_result(*shown_);
      changed = true;
    } else if (const auto progress = feed_->progress(); progress && progress->version != progress_version_) {
      progress_version_ = progress->version;
      changed = true;
    }
  }
  if (note_version_ != feed_->note_version()) {
    note_version_ = feed_->note_version();
    changed = true;
  }
  if (shown_ != nullptr && selection_version_ != feed_->selection_version()) {
    selection_version_ = feed_->selection_version();
    on_selection(feed_->selected_node());
    changed = true;
  }
  return changed;
}

void SessionScreen::publish_selection(int64_t node) {
  feed_->select(node);
  selection_version_ = feed_->selection_version();
}

}  // namespace vn::views
