// SPDX-License-Identifier: Apache-2.0
#include "views/screens/layers_view.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tui/text.h"
#include "tui/widgets/bars.h"
#include "tui/widgets/heatmap.h"

namespace vn::views {
namespace {

constexpr size_t kWorstElements = 12;

std::vector<tui::TableColumn> layer_columns() {
  return {{"Layer", 0, tui::Align::kLeft, 12}, {"", 1},
          {"Rank", 4, tui::Align::kRight},     {"Op", 12},
          {"Accum", 9, tui::Align::kRight},    {"Local", 9, tui::Align::kRight},
          {"Min atol", 9, tui::Align::kRight}, {"Min rtol", 9, tui::Align::kRight},
          {"Max abs", 9, tui::Align::kRight},  {"NaN/Inf", 7, tui::Align::kRight},
          {"Prec", 5}};
}

}  // namespace

LayersView::LayersView(std::shared_ptr<SessionFeed> feed) : SessionScreen(std::move(feed)), table_(layer_columns()) {}

void LayersView::on_result(const session::LayerwiseSession& session) {
  rows_ = layer_rows(session);
  detail_.reset();
  // The marker is ASCII so that the table reads the same on every terminal; its role adds colour.
  std::vector<tui::TableRow> table_rows;
  table_rows.reserve(rows_.size());
  for (const LayerRow& r : rows_) {
    tui::TableRow row;
    const tui::ColorRole role = error_role(r.level);
    const std::string mark = r.level == ErrorLevel::kOk      ? "."
                             : r.level == ErrorLevel::kWarn  ? "!"
                             : r.level == ErrorLevel::kError ? "X"
                             : r.level == ErrorLevel::kNonFinite ? "N"
                                                                 : " ";
    row.cells = {r.name,
                 mark,
                 r.rank > 0 ? std::to_string(r.rank) : "-",
                 r.op,
                 format_value(r.accumulated),
                 format_value(r.local),
                 format_value(r.min_atol),
                 format_value(r.min_rtol),
                 format_value(r.abs_max),
                 r.nan + r.inf > 0 ? fmt::format("{}/{}", r.nan, r.inf) : "0",
                 r.precision};
    row.cell_roles = {tui::ColorRole::kDefault, role,
                      r.rank > 0 ? tui::ColorRole::kAccent : tui::ColorRole::kDim,
                      tui::ColorRole::kDefault,
                      error_role(error_level(r.accumulated, false)),
                      error_role(error_level(r.local, false)),
                      tui::ColorRole::kDefault, tui::ColorRole::kDefault, tui::ColorRole::kDefault,
                      r.nan + r.inf > 0 ? tui::ColorRole::kError : tui::ColorRole::kDim,
                      tui::ColorRole::kDim};
    table_rows.push_back(std::move(row));
  }
  table_.set_rows(std::move(table_rows));
  on_selection(feed().selected_node());
}

void LayersView::on_selection(int64_t node) {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].node == node) {
      table_.select_row(i);
      break;
    }
  }
  if (feed().open_detail) {
    feed().open_detail = false;
    open_detail();
  }
}

void LayersView::layout() { table_.resize(area_); }

std::string LayersView::status_text() const {
  if (detail_) return detail_->slice_label;
  return rows_.empty() ? std::string() : "layer " + table_.position_text();
}

void LayersView::open_detail() {
  const auto row = table_.selected_row();
  if (!row || !has_result()) return;
  const LayerRow& r = rows_[*row];
  const auto& c = shown().comparison;
  if (r.tensor < 0 || static_cast<size_t>(r.tensor) >= c.tensors.size()) return;
  const TensorComparison& tc = c.tensors[static_cast<size_t>(r.tensor)];
  detail_row_ = *row;
  detail_ = tensor_detail(tc, shown().test.find(tc.name), shown().ref.find(tc.name), slice_, kWorstElements);
}

unsigned LayersView::handle_content(tui::Action action) {
  if (detail_) {
    switch (action) {
      case tui::Action::kBack:
        detail_.reset();
        return tui::kHandled | tui::kRedraw;
      case tui::Action::kLeft:
      case tui::Action::kRight: {
        const int64_t next = slice_ + (action == tui::Action::kRight ? 1 : -1);
        if (next < 0 || next >= detail_->slice_count) return tui::kHandled;
        slice_ = next;
        open_detail();
        return tui::kHandled | tui::kRedraw;
      }
      default:
        return tui::kIgnored;
    }
  }
  if (action == tui::Action::kEnter) {
    slice_ = 0;
    open_detail();
    return tui::kHandled | tui::kRedraw;
  }
  const auto before = table_.selected_row();
  const unsigned result = table_.handle(action);
  const auto after = table_.selected_row();
  if (after && after != before) publish_selection(rows_[*after].node);
  return result;
}

void LayersView::draw_content(tui::Canvas& canvas) const {
  if (detail_) {
    draw_tensor_detail(canvas, area_, *detail_);
  } else {
    table_.draw(canvas);
  }
}

void draw_tensor_detail(tui::Canvas& canvas, tui::Rect area, const TensorDetail& d) {
  if (area.empty()) return;
  canvas.fill(area);
  const tui::Glyphs& g = canvas.glyphs();
  const std::string title = "Tensor " + d.name + (d.shape.empty() ? "" : " " + d.shape);
  int x = area.x + canvas.put_text(area, area.x, area.y, title, tui::ColorRole::kHeader);
  canvas.put_text(area, x + 1, area.y, d.passed ? "PASSED" : "FAILED",
                  d.passed ? tui::ColorRole::kOk : tui::ColorRole::kError);
  if (area.h < 3) return;
  const tui::Rect body{area.x, area.y + 1, area.w, area.h - 1};

  // Statistics: a left column on wide screens, a grid of label/value cells on top otherwise.
  constexpr int kStatWidth = 26;
  tui::Rect rest = body;
  if (body.w >= 90) {
    for (size_t i = 0; i < d.stats.size() && static_cast<int>(i) < body.h; ++i) {
      const int y = body.y + static_cast<int>(i);
      canvas.put_text(body, body.x, y, tui::fit_to_width(d.stats[i].first, 11), tui::ColorRole::kDim);
      canvas.put_text(body, body.x + 11, y, tui::truncate_to_width(d.stats[i].second, kStatWidth - 12, g.ellipsis));
    }
    rest = {body.x + kStatWidth + 1, body.y, body.w - kStatWidth - 1, body.h};
  } else {
    const int per_row = std::max(1, body.w / kStatWidth);
    const int stat_rows = std::min<int>(body.h / 3, static_cast<int>((d.stats.size() + per_row - 1) / per_row));
    for (int i = 0; i < stat_rows * per_row && i < static_cast<int>(d.stats.size()); ++i) {
      const int cx = body.x + (i % per_row) * kStatWidth;
      const int y = body.y + i / per_row;
      const auto& [label, value] = d.stats[static_cast<size_t>(i)];
      canvas.put_text(body, cx, y, tui::fit_to_width(label, 11), tui::ColorRole::kDim);
      canvas.put_text(body, cx + 11, y, tui::truncate_to_width(value, kStatWidth - 12, g.ellipsis));
    }
    rest = {body.x, body.y + stat_rows, body.w, body.h - stat_rows};
  }
  if (rest.empty()) return;

  // Histogram of the absolute error by decade.
  const int hist_rows = std::min<int>(static_cast<int>(d.histogram.size()) + 1, std::max(2, rest.h / 3));
  canvas.put_text(rest, rest.x, rest.y, "Absolute error histogram", tui::ColorRole::kHeader);
  tui::BarChart chart;
  std::vector<tui::Bar> bars;
  for (const auto& [label, count] : d.histogram) {
    bars.push_back({label, static_cast<double>(count), std::to_string(count),
                    label == "0" || label.starts_with("<") ? tui::ColorRole::kOk : tui::ColorRole::kAccent});
  }
  chart.set_bars(std::move(bars));
  chart.set_log_scale(true);
  chart.draw(canvas, rest.rows(1, hist_rows - 1));
  const tui::Rect lower = rest.rows(hist_rows, rest.h - hist_rows);
  if (lower.empty()) return;

  // Heatmap of the slice and the worst elements: side by side when there is room.
  const bool side = lower.w >= 70;
  const tui::Rect heat_area = side ? tui::Rect{lower.x, lower.y, lower.w / 2 - 1, lower.h} : lower.rows(0, lower.h / 2);
  const tui::Rect worst_area = side ? tui::Rect{lower.x + lower.w / 2, lower.y, lower.w - lower.w / 2, lower.h}
                                    : lower.rows(lower.h / 2, lower.h - lower.h / 2);
  if (!heat_area.empty()) {
    canvas.put_text(heat_area, heat_area.x, heat_area.y,
                    d.slice_label.empty() ? "|engine - ref|: no tensors kept" : "|engine - ref| " + d.slice_label,
                    tui::ColorRole::kHeader);
    if (!d.slice.empty()) {
      tui::Heatmap heat;
      heat.set_values(d.slice_rows, d.slice_cols, d.slice);
      heat.draw(canvas, heat_area.rows(1, heat_area.h - 1));
    }
  }
  if (!worst_area.empty()) {
    canvas.put_text(worst_area, worst_area.x, worst_area.y, "Worst elements", tui::ColorRole::kHeader);
    const int iw = std::max(6, worst_area.w - 27);
    if (worst_area.h > 1) {
      canvas.put_text(worst_area, worst_area.x, worst_area.y + 1,
                      tui::fit_to_width("index", iw) + tui::fit_to_width("ref", 9, tui::Align::kRight) +
                          tui::fit_to_width("engine", 9, tui::Align::kRight) +
                          tui::fit_to_width("|err|", 9, tui::Align::kRight),
                      tui::ColorRole::kDim);
    }
    for (size_t i = 0; i < d.worst.size() && static_cast<int>(i) + 2 < worst_area.h; ++i) {
      const WorstElement& e = d.worst[i];
      const std::string line = tui::fit_to_width(e.index, iw, tui::Align::kLeft, g.ellipsis) +
                               tui::fit_to_width(fmt::format("{:.4g}", e.ref), 9, tui::Align::kRight) +
                               tui::fit_to_width(fmt::format("{:.4g}", e.test), 9, tui::Align::kRight) +
                               tui::fit_to_width(format_value(e.abs_error), 9, tui::Align::kRight);
      canvas.put_text(worst_area, worst_area.x, worst_area.y + 2 + static_cast<int>(i), line,
                      i == 0 ? tui::ColorRole::kError : tui::ColorRole::kDefault);
    }
  }
}

}  // namespace vn::views
