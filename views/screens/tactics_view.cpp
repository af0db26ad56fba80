// SPDX-License-Identifier: Apache-2.0
#include "views/screens/tactics_view.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "tui/text.h"

namespace vn::views {
namespace {

std::vector<std::pair<std::string, int64_t>> choices_of(const std::vector<debug::ReplayChoices>& builds,
                                                        const std::string& layer) {
  std::map<std::string, int64_t> counts;
  for (const debug::ReplayChoices& build : builds) {
    if (const auto it = build.find(layer); it != build.end()) ++counts[it->second.label];
  }
  std::vector<std::pair<std::string, int64_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// "gemm (fp16) x3, conv (fp32) x1"; "-" when no build of that kind ran the layer.
std::string choices_text(const std::vector<std::pair<std::string, int64_t>>& choices) {
  std::string text;
  for (const auto& [label, n] : choices) text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", label, n);
  return text.empty() ? "-" : text;
}

}  // namespace

TacticsModel tactics_model(const std::vector<debug::ReplayChoices>& good, const std::vector<debug::ReplayChoices>& bad) {
  TacticsModel m;
  m.good_builds = static_cast<int64_t>(good.size());
  m.bad_builds = static_cast<int64_t>(bad.size());
  const debug::TacticDiff diff = debug::diff_tactics(good, bad);
  std::set<std::string> placed;
  auto add = [&](const std::string& layer, double score, double p) {
    if (!placed.insert(layer).second) return;
    m.rows.push_back({layer, choices_of(good, layer), choices_of(bad, layer), score, p});
  };
  for (const debug::LayerSuspects& layer : diff.layers) {
    const debug::TacticSuspect& best = layer.suspects.front();
    add(layer.layer, best.score, best.p_value);
  }
  std::set<std::string> rest;
  for (const auto* builds : {&good, &bad}) {
    for (const debug::ReplayChoices& build : *builds) {
      for (const auto& [layer, choice] : build) rest.insert(layer);
    }
  }
  for (const std::string& layer : rest) add(layer, 0, 1);
  return m;
}

TacticsView::TacticsView()
    : table_({{"Layer", 0, tui::Align::kLeft, 8},
              {"Good builds", 0, tui::Align::kLeft, 10},
              {"Bad builds", 0, tui::Align::kLeft, 10},
              {"Score", 6, tui::Align::kRight},
              {"p", 8, tui::Align::kRight}}) {}

void TacticsView::set_model(TacticsModel model) {
  model_ = std::move(model);
  std::vector<tui::TableRow> rows;
  for (const TacticsRow& r : model_.rows) {
    const tui::ColorRole role = r.score >= 1.0 ? tui::ColorRole::kError
                                : r.score > 0  ? tui::ColorRole::kWarning
                                               : tui::ColorRole::kDefault;
    rows.push_back({{r.layer, choices_text(r.good), choices_text(r.bad), fmt::format("{:.2f}", r.score),
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
            ? "No tactic replays: the intermittency probe's builds write them"
            : fmt::format("{} good build(s), {} bad build(s); score = share of bad builds - share of good builds",
                          model_.good_builds, model_.bad_builds);
    canvas.put_text(area_, area_.x, area_.y, tui::truncate_to_width(head, area_.w, canvas.glyphs().ellipsis),
                    tui::ColorRole::kHeader);
  }
  table_.draw(canvas);
}

}  // namespace vn::views
