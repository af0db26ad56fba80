// SPDX-License-Identifier: Apache-2.0
#include "views/screens/tensor_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "tui/i18n.h"
#include "tui/text.h"
#include "tui/widgets/bars.h"
#include "tui/widgets/heatmap.h"
#include "views/screens/screens.h"

namespace vn::views {
namespace {

// Columns of one label/value cell of the statistics.
constexpr int kStatWidth = 26;
constexpr int kStatLabelWidth = 11;

}  // namespace

std::string TensorView::title() const { return screen_title(id()); }

std::string TensorView::description() const { return screen_description(id()); }

std::vector<tui::Action> TensorView::help_actions() const {
  return {tui::Action::kLeft, tui::Action::kRight, tui::Action::kBack};
}

std::string TensorView::status_text() const {
  if (!detail_ || detail_->heatmap_count == 0) return {};
  return tui::trf("map {} of {} kept, {} slice(s)", detail_->heatmap + 1, detail_->heatmap_count, detail_->slice_count);
}

void TensorView::on_result(const session::LayerwiseSession& session) {
  (void)session;
  heatmap_ = 0;
  on_selection(feed().selected_node());
}

void TensorView::on_selection(int64_t node) {
  tensor_.reset();
  heatmap_ = 0;
  const LayerwiseComparison& c = shown().comparison;
  const Graph& g = shown().model.graph;
  // The node's own output when it was compared...
  if (node >= 0 && static_cast<size_t>(node) < g.nodes.size()) {
    for (const std::string& out : g.nodes[static_cast<size_t>(node)].outputs) {
      for (size_t t = 0; t < c.tensors.size() && !tensor_; ++t) {
        if (c.tensors[t].name == out) tensor_ = t;
      }
    }
  }
  // ...else the first compared output of the layer it belongs to (anchor, or fused member).
  for (const LayerComparison& l : c.layers) {
    if (tensor_ || node < 0) break;
    bool member = l.layer.node == node;
    if (!member && static_cast<size_t>(node) < g.nodes.size()) {
      const std::string& name = g.nodes[static_cast<size_t>(node)].name;
      member = l.layer.name == name || l.layer.name.starts_with(name + " + ") ||
               l.layer.name.find(" + " + name + " + ") != std::string::npos || l.layer.name.ends_with(" + " + name);
    }
    if (!member) continue;
    for (int t : l.accumulated) {
      if (t >= 0 && !tensor_) tensor_ = static_cast<size_t>(t);
    }
  }
  load();
}

void TensorView::load() {
  detail_.reset();
  if (!has_result() || !tensor_) return;
  detail_ = tensor_detail(shown().comparison.tensors[*tensor_], heatmap_);
}

unsigned TensorView::handle_content(tui::Action action) {
  switch (action) {
    case tui::Action::kBack:
      return tui::kHandled | tui::kSwitchView;
    case tui::Action::kLeft:
    case tui::Action::kRight: {
      if (!detail_ || detail_->heatmap_count < 2) return tui::kHandled;
      const size_t n = detail_->heatmap_count;
      heatmap_ = action == tui::Action::kRight ? (heatmap_ + 1) % n : (heatmap_ + n - 1) % n;
      load();
      return tui::kHandled | tui::kRedraw;
    }
    default:
      return tui::kIgnored;
  }
}

void TensorView::draw_content(tui::Canvas& canvas) const {
  if (detail_) {
    draw_tensor_detail(canvas, area_, *detail_);
  } else if (!area_.empty()) {
    // A result without tensor comparisons (a triage's keeps the layers' errors only) has none to show.
    const std::string_view why =
        shown().comparison.tensors.empty()
            ? tui::tr("This result keeps the layers' errors only, no tensor statistics (a triage's does)")
            : tui::tr("No compared tensor here: select a node on the Graph or Layers screen, Enter opens its tensor");
    int y = area_.y;
    for (const std::string& line : tui::wrap_text(why, area_.w)) {
      if (y >= area_.y + area_.h) break;
      canvas.put_text(area_, area_.x, y++, line, tui::ColorRole::kDim);
    }
  }
}

void draw_tensor_detail(tui::Canvas& canvas, tui::Rect area, const TensorDetail& d) {
  if (area.empty()) return;
  canvas.fill(area);
  const tui::Glyphs& g = canvas.glyphs();
  const std::string title = tui::trf("Tensor {}", d.name) + (d.shape.empty() ? "" : " " + d.shape);
  int x = area.x + canvas.put_text(area, area.x, area.y, title, tui::ColorRole::kHeader);
  const std::string verdict = std::string(error_symbol(d.level, g)) + " " + std::string(tui::tr(d.passed ? "PASSED" : "FAILED"));
  canvas.put_text(area, x + 1, area.y, verdict, d.passed ? tui::ColorRole::kOk : tui::ColorRole::kError);
  if (area.h < 3) return;
  const tui::Rect body{area.x, area.y + 1, area.w, area.h - 1};

  // Statistics: a left column on wide screens, a grid of label/value cells on top otherwise.
  const auto stat = [&](const tui::Rect& clip, int cx, int y, size_t i) {
    const auto& [label, value] = d.stats[i];
    canvas.put_text(clip, cx, y, tui::fit_to_width(tui::tr(label), kStatLabelWidth - 1, tui::Align::kLeft, g.ellipsis),
                    tui::ColorRole::kDim);
    const std::string shown = label == "result" ? std::string(tui::tr(value)) : value;
    canvas.put_text(clip, cx + kStatLabelWidth, y, tui::truncate_to_width(shown, kStatWidth - kStatLabelWidth - 1, g.ellipsis));
  };
  tui::Rect rest = body;
  if (body.w >= 90) {
    for (size_t i = 0; i < d.stats.size() && static_cast<int>(i) < body.h; ++i) stat(body, body.x, body.y + static_cast<int>(i), i);
    rest = {body.x + kStatWidth + 1, body.y, body.w - kStatWidth - 1, body.h};
  } else {
    const int per_row = std::max(1, body.w / kStatWidth);
    const int stat_rows = std::min<int>(body.h / 3, static_cast<int>((d.stats.size() + per_row - 1) / per_row));
    for (int i = 0; i < stat_rows * per_row && i < static_cast<int>(d.stats.size()); ++i) {
      stat(body, body.x + (i % per_row) * kStatWidth, body.y + i / per_row, static_cast<size_t>(i));
    }
    rest = {body.x, body.y + stat_rows, body.w, body.h - stat_rows};
  }
  if (rest.empty()) return;

  // Histogram of the absolute error by decade: failing tensors only (a passing one has none).
  if (!d.histogram.empty()) {
    const int hist_rows = std::min<int>(static_cast<int>(d.histogram.size()) + 1, std::max(2, rest.h / 3));
    canvas.put_text(rest, rest.x, rest.y, tui::tr("Absolute error histogram"), tui::ColorRole::kHeader);
    tui::BarChart chart;
    std::vector<tui::Bar> bars;
    for (const auto& [label, count] : d.histogram) {
      bars.push_back({label, static_cast<double>(count), std::to_string(count),
                      label == "0" || label.starts_with("<") ? tui::ColorRole::kOk : tui::ColorRole::kAccent});
    }
    chart.set_bars(std::move(bars));
    chart.set_log_scale(true);
    chart.draw(canvas, rest.rows(1, hist_rows - 1));
    rest = rest.rows(hist_rows, rest.h - hist_rows);
  }
  if (rest.empty()) return;
  if (!d.has_digest) {
    for (const std::string& line :
         tui::wrap_text(tui::tr("The result keeps statistics only: no heatmap or worst elements (a live comparison "
                                "or a --report-json of vernier run keeps them)"),
                        rest.w)) {
      if (rest.empty()) break;
      canvas.put_text(rest, rest.x, rest.y, line, tui::ColorRole::kDim);
      rest = rest.rows(1, rest.h - 1);
    }
    return;
  }

  // Heatmap of the kept slice and the worst elements: side by side when there is room.
  const bool side = rest.w >= 70;
  tui::Rect heat = side ? tui::Rect{rest.x, rest.y, rest.w / 2 - 1, rest.h} : rest.rows(0, rest.h / 2);
  const tui::Rect worst = side ? tui::Rect{rest.x + rest.w / 2, rest.y, rest.w - rest.w / 2, rest.h}
                               : rest.rows(rest.h / 2, rest.h - rest.h / 2);
  if (!heat.empty()) {
    // Which kept map this is goes in the status line; h/l step through them.
    const std::string label = d.slice.empty() ? std::string(tui::tr("|engine - ref|: nothing kept"))
                                              : tui::trf("|engine - ref| {}", d.slice_index) +
                                                    (d.heatmap_count > 1 ? fmt::format(" ({}/{})", d.heatmap + 1, d.heatmap_count) : "");
    canvas.put_text(heat, heat.x, heat.y, tui::truncate_to_width(label, heat.w, g.ellipsis), tui::ColorRole::kHeader);
    heat = heat.rows(1, heat.h - 1);
    if (d.slice_max.size() > 1 && heat.h > 3) {
      const std::string per_slice(tui::tr("per slice "));
      const int lw = canvas.put_text(heat, heat.x, heat.y, per_slice, tui::ColorRole::kDim);
      tui::Sparkline spark;
      spark.set_values(d.slice_max);
      spark.draw(canvas, {heat.x + lw, heat.y, heat.w - lw, 1}, tui::ColorRole::kWarning);
      heat = heat.rows(1, heat.h - 1);
    }
    if (!d.slice.empty()) {
      tui::Heatmap map;
      map.set_values(d.slice_rows, d.slice_cols, d.slice);
      map.draw(canvas, heat);
    }
  }
  if (!worst.empty()) {
    canvas.put_text(worst, worst.x, worst.y, tui::tr("Worst elements"), tui::ColorRole::kHeader);
    const int iw = std::max(6, worst.w - 27);
    if (worst.h > 1) {
      canvas.put_text(worst, worst.x, worst.y + 1,
                      tui::fit_to_width(tui::tr("index"), iw) + tui::fit_to_width(tui::tr("ref"), 9, tui::Align::kRight) +
                          tui::fit_to_width(tui::tr("engine"), 9, tui::Align::kRight) +
                          tui::fit_to_width("|err|", 9, tui::Align::kRight),
                      tui::ColorRole::kDim);
    }
    for (size_t i = 0; i < d.worst.size() && static_cast<int>(i) + 2 < worst.h; ++i) {
      const WorstElement& e = d.worst[i];
      const std::string line = tui::fit_to_width(e.index, iw, tui::Align::kLeft, g.ellipsis) +
                               tui::fit_to_width(fmt::format("{:.4g}", e.ref), 9, tui::Align::kRight) +
                               tui::fit_to_width(fmt::format("{:.4g}", e.test), 9, tui::Align::kRight) +
                               tui::fit_to_width(format_value(e.abs_error), 9, tui::Align::kRight);
      canvas.put_text(worst, worst.x, worst.y + 2 + static_cast<int>(i), line,
                      i == 0 && !d.passed ? tui::ColorRole::kError : tui::ColorRole::kDefault);
    }
  }
}

}  // namespace vn::views
