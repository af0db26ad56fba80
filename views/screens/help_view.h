// SPDX-License-Identifier: Apache-2.0
// The Help screen.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tui/actions.h"
#include "tui/view.h"
#include "tui/widgets/text_pane.h"

namespace vn::views {

/// The Help screen: the screens, the `:` commands and the keys of every screen, as the App
/// generates them (App::help_document) from the action table and the current bindings; it is
/// generated again when that changes (a `:bind`).
class HelpView final : public tui::View {
 public:
  /// Returns the help's lines (App::help_document of the program's App).
  using ContentFn = std::function<std::vector<tui::HelpLine>()>;

  explicit HelpView(ContentFn content) : content_(std::move(content)) { pane_.set_wrap(false); }

  std::string_view id() const override { return "help"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  void resize(tui::Rect area) override;
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override { return pane_.handle(action); }
  bool tick(std::chrono::steady_clock::time_point now) override;
  bool filterable() const override { return true; }
  std::string filter_text() const override { return pane_.search(); }
  void apply_filter(std::string_view text) override { pane_.set_search(text); }

 private:
  bool refresh();

  ContentFn content_;
  std::vector<tui::HelpLine> shown_;
  tui::TextPane pane_;
};

}  // namespace vn::views
