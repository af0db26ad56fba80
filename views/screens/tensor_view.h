// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "views/screens/models.h"
#include "views/screens/session_screen.h"

namespace vn::views {

/// The Tensor screen: the detail of the selected node's compared output (the first output of its
/// engine layer when the node's own was fused away): the statistics, the absolute-error histogram
/// (failing tensors), the largest error of every slice, a heatmap of a kept slice of
/// |engine - ref| and the worst elements with both values. It shows what the comparison kept of
/// the tensors (core/compare/tensor_digest.h), never the tensors themselves.
///
/// Handles: left/right (h/l) the previous/next kept heatmap; back (Esc, q) returns to the screen
/// that opened it.
class TensorView final : public SessionScreen {
 public:
  explicit TensorView(std::shared_ptr<SessionFeed> feed) : SessionScreen(std::move(feed)) {}

  std::string_view id() const override { return "tensor"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  std::string status_text() const override;
  std::string switch_target() const override { return feed().opened_from; }

  /// The detail shown, or nullptr when the selection has no compared tensor.
  const TensorDetail* detail() const { return detail_ ? &*detail_ : nullptr; }

 protected:
  void on_result(const session::LayerwiseSession& session) override;
  void on_selection(int64_t node) override;
  void draw_content(tui::Canvas& canvas) const override;
  unsigned handle_content(tui::Action action) override;

 private:
  void load();

  std::optional<size_t> tensor_;  // index into comparison.tensors
  size_t heatmap_ = 0;
  std::optional<TensorDetail> detail_;
};

/// Draws `detail` into `area` (the Tensor screen's content).
void draw_tensor_detail(tui::Canvas& canvas, tui::Rect area, const TensorDetail& detail);

}  // namespace vn::views
