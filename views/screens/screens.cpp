// SPDX-License-Identifier: Apache-2.0
#include "views/screens/screens.h"

#include "tui/i18n.h"

namespace vn::views {
namespace {

constexpr ScreenInfo kScreens[] = {
    {"flowchart", "Flowchart", "the triage: chart, question, evidence, path so far"},
    {"graph", "Graph", "the model as lanes, one node per row, with its error"},
    {"layers", "Layers", "per-layer errors, sortable and filterable"},
    {"tensor", "Tensor", "one tensor: statistics, heatmap, worst elements"},
    {"reduce", "Reduce", "the reduction: node range, checks, good/bad question"},
    {"tactics", "Tactics", "good against bad engine builds, layer by layer"},
    {"log", "Log", "what the session did"},
    {"help", "Help", "the screens, the commands and the keys"},
};

const ScreenInfo* find(std::string_view id) {
  for (const ScreenInfo& s : kScreens) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

}  // namespace

std::span<const ScreenInfo> screen_catalog() { return kScreens; }

std::vector<std::string> screen_ids() {
  std::vector<std::string> ids;
  for (const ScreenInfo& s : kScreens) ids.emplace_back(s.id);
  return ids;
}

std::string screen_title(std::string_view id) {
  const ScreenInfo* s = find(id);
  return s != nullptr ? std::string(tui::tr(s->title)) : std::string();
}

std::string screen_description(std::string_view id) {
  const ScreenInfo* s = find(id);
  return s != nullptr ? std::string(tui::tr(s->description)) : std::string();
}

}  // namespace vn::views
