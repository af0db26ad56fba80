// SPDX-License-Identifier: Apache-2.0
// The Log screen.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tui/actions.h"
#include "tui/view.h"
#include "tui/widgets/text_pane.h"
#include "views/screens/session_feed.h"

namespace vn::views {

/// The Log screen: a job's log lines as they arrive, then its outcome, plus lines the program
/// adds (command results). Follows the end like `tail -f`; `/` searches, n/N jump.
class LogView final : public tui::View {
 public:
  /// Returns the job's latest progress (null when there is none).
  using ProgressFn = std::function<std::shared_ptr<const session::JobProgress>()>;

  /// The log of the session feed's job, started afresh when the feed restarts.
  explicit LogView(std::shared_ptr<SessionFeed> feed) : feed_(std::move(feed)) { pane_.set_wrap(true); }
  /// The log of any job (a triage).
  explicit LogView(ProgressFn progress) : progress_(std::move(progress)) { pane_.set_wrap(true); }

  /// Adds a line of the program's own.
  void add(std::string line, tui::ColorRole role = tui::ColorRole::kDefault);
  const tui::TextPane& pane() const { return pane_; }

  std::string_view id() const override { return "log"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  void resize(tui::Rect area) override { pane_.resize(area); }
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override { return pane_.handle(action); }
  bool tick(std::chrono::steady_clock::time_point now) override;
  bool filterable() const override { return true; }
  std::string filter_text() const override { return pane_.search(); }
  void apply_filter(std::string_view text) override { pane_.set_search(text); }
  std::string status_text() const override { return pane_.position_text(); }

 private:
  std::shared_ptr<SessionFeed> feed_;
  ProgressFn progress_;
  tui::TextPane pane_;
  uint64_t generation_ = 0;
  size_t lines_seen_ = 0;
  bool outcome_logged_ = false;
};

}  // namespace vn::views
