// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "views/screens/models.h"
#include "views/screens/session_screen.h"

namespace vn::views {

/// The Graph screen: the model's DAG as lanes, one node per row like `git log --graph`, with each
/// node's op, name, output shape, engine precision/tactic and error (coloured and marked with a
/// symbol). Follows the selection of the other screens; Enter opens the node's Tensor screen.
/// Drawing touches only the visible rows, so it stays fast on 5,000 nodes. A session without a
/// comparison shows the model without errors, the feed's note on the last row.
///
/// Handles: up/down, page up/down, home/end, enter; worst (w) jumps to the likeliest culprit (rank
/// 1 of the comparison's culprit ranking), then down the ranking, then to the unranked nodes by
/// largest error; `/` highlights matching rows, n/N jump. Mouse: a click selects
/// a row, a click on the selected row opens it.
class GraphView final : public SessionScreen {
 public:
  explicit GraphView(std::shared_ptr<SessionFeed> feed) : SessionScreen(std::move(feed)) {}

  std::string_view id() const override { return "graph"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  std::string status_text() const override;
  unsigned handle_mouse(const tui::Key& event) override;
  bool filterable() const override { return true; }
  std::string filter_text() const override { return filter_; }
  void apply_filter(std::string_view text) override;
  std::string switch_target() const override { return "tensor"; }

  /// The rows shown (for tests and the benchmark).
  const std::vector<GraphRow>& rows() const { return rows_; }
  /// Index of the selected row.
  size_t selected() const { return selected_; }

 protected:
  void on_result(const session::LayerwiseSession& session) override;
  void on_selection(int64_t node) override;
  bool shows_model() const override { return true; }
  void draw_content(tui::Canvas& canvas) const override;
  unsigned handle_content(tui::Action action) override;

 private:
  void select(size_t row);
  bool matches(size_t row) const;
  bool jump(bool forward);
  void jump_worst();
  // Below the header, above the note's row (when there is a note).
  int body_height() const {
    const int rows = area_.h - 1 - (feed().note().empty() ? 0 : 1);
    return rows > 0 ? rows : 0;
  }

  std::vector<GraphRow> rows_;
  size_t lane_width_ = 0;  // widest lane string
  size_t selected_ = 0;
  size_t top_ = 0;
  std::string filter_;
  std::vector<size_t> by_error_;  // compared rows, largest error first (NaN/Inf first)
  size_t next_worst_ = 0;         // where the next `worst` jumps in by_error_
};

}  // namespace vn::views
