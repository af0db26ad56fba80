// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "tui/view.h"
#include "views/screens/session_feed.h"

namespace vn::views {

/// Base of the screens that show a SessionFeed. While the job runs it draws the job's progress;
/// `cancel_job` (x) asks for confirmation with its own key: x again cancels, any other key goes
/// on (and does nothing else), so no answer to another question can cancel. When a result arrives
/// (or the selection changes) it calls on_result() (on_selection()) from tick(). Derived screens
/// implement draw_content() and handle_content() for the finished session. A session without a
/// comparison (a triage's model before its layer-wise step) shows the feed's note instead, except
/// on screens that show the model alone (shows_model()).
class SessionScreen : public tui::View {
 public:
  explicit SessionScreen(std::shared_ptr<SessionFeed> feed) : feed_(std::move(feed)) {}

  void resize(tui::Rect area) override;
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override;
  bool tick(std::chrono::steady_clock::time_point now) override;

 protected:
  /// Called once per result, before the next draw.
  virtual void on_result(const session::LayerwiseSession& session) = 0;
  /// Called when another screen selected `node`.
  virtual void on_selection(int64_t node) { (void)node; }
  /// Called after resize(), with the same area.
  virtual void layout() {}
  /// True for screens that have something to show of a session without a comparison (the Graph).
  virtual bool shows_model() const { return false; }
  /// The session shown has a comparison (a model alone has none).
  bool compared() const { return shown_ != nullptr && !shown_->comparison.layers.empty(); }
  virtual void draw_content(tui::Canvas& canvas) const = 0;
  virtual unsigned handle_content(tui::Action action) = 0;

  SessionFeed& feed() { return *feed_; }
  const SessionFeed& feed() const { return *feed_; }
  bool has_result() const { return shown_ != nullptr; }
  const session::LayerwiseSession& shown() const { return *shown_; }
  /// Selects `node` for the other screens (without calling this screen's on_selection()).
  void publish_selection(int64_t node);

  tui::Rect area_;

 private:
  std::shared_ptr<SessionFeed> feed_;
  std::shared_ptr<const session::LayerwiseSession> shown_;
  uint64_t generation_ = 0;
  uint64_t progress_version_ = 0;
  uint64_t selection_version_ = 0;
  uint64_t note_version_ = 0;
  bool confirm_cancel_ = false;
};

}  // namespace vn::views
