// SPDX-License-Identifier: Apache-2.0
// The Tactics screen: good against bad engine builds, layer by layer. Which tactic each layer ran
// in the good builds and in the bad ones (from their tactic replays) and the diff-tactics score of
// its best suspect, so the choice that separates the bad builds stands out on top.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/debug/diff_tactics.h"
#include "tui/view.h"
#include "tui/widgets/table.h"

namespace vn::views {

/// One tactic choice of one layer on the Tactics screen.
struct TacticsRow {
  std::string layer;
  std::string tactic;  ///< the choice's readable label, "gemm__split_k4 (fp32)"
  int64_t good = 0;    ///< good builds that made this choice
  int64_t bad = 0;     ///< bad builds that made it
  /// bad / bad builds - good / good builds (diff_tactics's score), in [-1, 1].
  double score = 0;
  /// diff_tactics's p-value for a choice with a positive score; 1 otherwise.
  double p_value = 1;
};

/// The Tactics screen's data.
struct TacticsModel {
  int64_t good_builds = 0;
  int64_t bad_builds = 0;
  /// Layers with a suspect first, in diff_tactics's order, then the others by name; within a
  /// layer, its choices by score, best first.
  std::vector<TacticsRow> rows;
};

/// The model of `good` and `bad` builds' replays, scored with debug::diff_tactics.
TacticsModel tactics_model(const std::vector<debug::ReplayChoices>& good, const std::vector<debug::ReplayChoices>& bad);

/// The Tactics screen: a line with the numbers of good and bad builds, then a table with one row
/// per choice of each layer (Layer, Tactic, Good, Bad as "builds/all", Score, p); a choice that
/// separates the builds (score 1) is drawn as an error, others with a positive score as warnings.
/// Sortable and filterable like the Layers screen.
class TacticsView final : public tui::View {
 public:
  TacticsView();

  void set_model(TacticsModel model);
  const TacticsModel& model() const { return model_; }

  std::string_view id() const override { return "tactics"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  unsigned handle_mouse(const tui::Key& event) override { return table_.click(event.x, event.y); }
  void resize(tui::Rect area) override;
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override { return table_.handle(action); }
  bool filterable() const override { return true; }
  std::string filter_text() const override { return table_.filter(); }
  void apply_filter(std::string_view text) override { table_.set_filter(text); }
  std::string status_text() const override;

 private:
  TacticsModel model_;
  tui::Table table_;
  tui::Rect area_;
};

}  // namespace vn::views
