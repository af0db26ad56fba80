// SPDX-License-Identifier: Apache-2.0
// Every screen of Vernier's full-screen commands, in one list: its id (what `:view` takes), its
// title in the tab bar and its line in the help. Each command shows the screens it has.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vn::views {

struct ScreenInfo {
  std::string_view id;
  std::string_view title;        ///< English; shown through tui::tr()
  std::string_view description;  ///< English; shown through tui::tr()
};

/// flowchart, graph, layers, tensor, reduce, tactics, log, help, in that order.
std::span<const ScreenInfo> screen_catalog();
/// The ids of screen_catalog(), for App::set_screen_catalog.
std::vector<std::string> screen_ids();
/// The title of screen `id` in the UI's language ("" for an unknown id).
std::string screen_title(std::string_view id);
/// The help line of screen `id` in the UI's language.
std::string screen_description(std::string_view id);

}  // namespace vn::views
