// SPDX-License-Identifier: Apache-2.0
#include "views/screens/tactics_view.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "tui/i18n.h"
#include "tui/text.h"
#include "views/screens/screens.h"

namespace vn::views {
namespace {

double share(int64_t n, int64_t total) { return total > 0 ? static_cast<double>(n) / static_cast<double>(total) : 0; }

}  // namespace

TacticsModel tactics_model(const std::vector<debug::ReplayChoices>& good, const std::vector<debug::ReplayChoices>& bad) {
  TacticsModel m;
  m.good_builds = static_cast<int64_t>(good.size());
  m.bad_builds = static_cast<int64_t>(bad.size());
  // layer -> choice label -> (good, bad) builds that made it.
  std::map<std::string, std::map<std::string, std::pair<int64_t, int64_t>>> counts;
  for (const debug::ReplayChoices& build : good) {
    for (const auto& [layer, choice] : build) ++counts[layer][choice.label].first;
  }
  for (const debug::ReplayChoices& build : bad) {
    for (const auto& [layer, choice] : build) ++counts[layer][choice.label].second;
  }
  const debug::TacticDiff diff = debug::diff_tactics(good, bad);
  std::vector<std::string> order;
  for (const debug::LayerSuspects& layer : diff.layers) order.push_back(layer.layer);
  for (const auto& [layer, choices] : counts) {
    if (std::find(order.begin(), order.end(), layer) == order.end()) order.push_back(layer);
  }
  for (const std::string& layer : order) {
    std::vector<TacticsRow> rows;
    for (const auto& [label, n] : counts[layer]) {
      TacticsRow r{layer, label, n.first, n.second, share(n.second, m.bad_builds) - share(n.first, m.good_builds)};
      for (const debug::LayerSuspects& l : diff.layers) {
        for (const debug::TacticSuspect& suspect : l.suspects) {
          if (l.layer == layer && suspect.choice.label == label) r.p_value = suspect.p_value;
        }
      }
      rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const TacticsRow& a, const TacticsRow& b) { return a.score > b.score; });
    m.rows.insert(m.rows.end(), rows.begin(), rows.end());
  }
  return m;
}

TacticsView::TacticsView()
    : table_({{std::string(tui::tr("Layer")), 0, tui::Align::kLeft, 8},
              {std::string(tui::tr("Tactic")), 0, tui::Align::kLeft, 12},
              {std::string(tui::tr("Good")), 7, tui::Align::kRight},
              {std::string(tui::tr("Bad")), 7, tui::Align::kRight},
              {std::string(tui::tr("Score")), 7, tui::Align::kRight},
              {"p", 8, tui::Align::kRight}}) {
  // The first `s` puts the separating choice on top.
  table_.set_sort_cycle({{4, true}, {5, false}});
}

std::string TacticsView::title() const { return screen_title(id()); }

std::string TacticsView::description() const { return screen_description(id()); }

std::vector<tui::Action> TacticsView::help_actions() const {
  using tui::Action;
  return {Action::kUp,   Action::kDown, Action::kPageUp,      Action::kPageDown,  Action::kHome,
          Action::kEnd,  Action::kSort, Action::kReverseSort, Action::kNextMatch, Action::kPrevMatch};
}

std::string TacticsView::status_text() const { return tui::trf("layer {}", table_.position_text()); }

void TacticsView::set_model(TacticsModel model) {
  model_ = std::move(model);
  std::vector<tui::TableRow> rows;
  for (const TacticsRow& r : model_.rows) {
    const tui::ColorRole role = r.score >= 1.0 ? tui::ColorRole::kError
                                : r.score > 0  ? tui::ColorRole::kWarning
                                               : tui::ColorRole::kDefault;
    rows.push_back({{r.layer, r.tactic, fmt::format("{}/{}", r.good, model_.good_builds),
                     fmt::format("{}/{}", r.bad, model_.bad_builds), fmt::format("{:.2f}", r.score),
                     r.score > 0 ? fmt::format("{:.3g}", r.p_value) : "-"},
                    role});
  }
  table_.set_rows(std::move(rows));
}

void TacticsView::resize(tui::Rect area) {
  area_ = area;
  table_.resize(area.h > 2 ? tui::Rect{area.x, area.y + 1, area.w, area.h - 1} : area);
}

void TacticsView::draw(tui::Canvas& canvas) const {
  if (area_.empty()) return;
  canvas.fill(area_);
  if (area_.h > 2) {
    const std::string head =
        model_.rows.empty()
            ? std::string(tui::tr("No tactic replays: the intermittency probe's builds write them"))
            : tui::trf("{} good build(s), {} bad build(s); score: share of bad builds - share of good ones",
                       model_.good_builds, model_.bad_builds);
    canvas.put_text(area_, area_.x, area_.y, tui::truncate_to_width(head, area_.w, canvas.glyphs().ellipsis),
                    tui::ColorRole::kHeader);
  }
  table_.draw(canvas);
}

}  // namespace vn::views
