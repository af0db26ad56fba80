// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tui/widgets/table.h"
#include "views/screens/models.h"
#include "views/screens/session_screen.h"

namespace vn::views {

/// The Layers screen: one row per engine layer with its accumulated and local error (as the
/// factor over tolerance), the smallest passing atol and rtol, NaN/Inf it produced and its
/// culprit rank. `s`/`S` sort, `/` filters, n/N jump between matches. Enter opens the Tensor
/// detail of the layer's first output: statistics, error histogram, a heatmap of one 2-D slice
/// of |engine - reference| (h/l choose the slice) and the worst elements; Esc or q goes back.
class LayersView final : public SessionScreen {
 public:
  explicit LayersView(std::shared_ptr<SessionFeed> feed);

  std::string_view id() const override { return "layers"; }
  std::string title() const override { return "Layers"; }
  std::string status_text() const override;
  bool filterable() const override { return !detail_; }
  std::string filter_text() const override { return table_.filter(); }
  void apply_filter(std::string_view text) override { table_.set_filter(text); }

  /// The table (tests read its order and selection).
  const tui::Table& table() const { return table_; }
  /// The open tensor detail, or nullptr.
  const TensorDetail* detail() const { return detail_ ? &*detail_ : nullptr; }

 protected:
  void on_result(const session::LayerwiseSession& session) override;
  void on_selection(int64_t node) override;
  void layout() override;
  void draw_content(tui::Canvas& canvas) const override;
  unsigned handle_content(tui::Action action) override;

 private:
  void open_detail();
  void draw_detail(tui::Canvas& canvas) const;

  tui::Table table_;
  std::vector<LayerRow> rows_;
  std::optional<TensorDetail> detail_;
  size_t detail_row_ = 0;
  int64_t slice_ = 0;
};

/// Draws `detail` into `area` (the Tensor detail screen); used by LayersView and its tests.
void draw_tensor_detail(tui::Canvas& canvas, tui::Rect area, const TensorDetail& detail);

}  // namespace vn::views
