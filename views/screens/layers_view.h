// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "tui/widgets/table.h"
#include "views/screens/models.h"
#include "views/screens/session_screen.h"

namespace vn::views {

/// The Layers screen: one row per engine layer with its accumulated and local error (as the
/// factor over tolerance), the smallest passing atol and rtol, NaN/Inf it produced and its
/// culprit rank. `s` sorts the worst accumulated error first, then the worst local error, then by
/// culprit rank, then back to execution order; `S` reverses; `/` filters, n/N jump between
/// matches; Enter opens the Tensor screen of the layer's first output. Mouse: a click selects a
/// row (on the selected row: opens it), a click on a column title sorts by it.
class LayersView final : public SessionScreen {
 public:
  explicit LayersView(std::shared_ptr<SessionFeed> feed);

  std::string_view id() const override { return "layers"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  std::string status_text() const override;
  bool filterable() const override { return true; }
  std::string filter_text() const override { return table_.filter(); }
  void apply_filter(std::string_view text) override { table_.set_filter(text); }
  std::string switch_target() const override { return "tensor"; }
  unsigned handle_mouse(const tui::Key& event) override;

  /// The table (tests read its order and selection).
  const tui::Table& table() const { return table_; }

 protected:
  void on_result(const session::LayerwiseSession& session) override;
  void on_selection(int64_t node) override;
  void layout() override;
  void draw_content(tui::Canvas& canvas) const override;
  unsigned handle_content(tui::Action action) override;

 private:
  void build_rows(const tui::Glyphs& glyphs) const;

  // Rebuilt at the first draw with the canvas's glyphs, so the marks are the Graph screen's.
  mutable tui::Table table_;
  mutable const tui::Glyphs* marks_ = nullptr;
  std::vector<LayerRow> rows_;
};

}  // namespace vn::views
