// SPDX-License-Identifier: Apache-2.0
#include "views/screens/layers_view.h"

#include <fmt/format.h>

#include "tui/i18n.h"
#include "views/screens/screens.h"

namespace vn::views {
namespace {

// Columns of the table; titles are English, shown through tr().
enum Column { kName, kMark, kRank, kOp, kAccum, kLocal, kMinAtol, kMinRtol, kMaxAbs, kNonFinite, kPrec };

std::vector<tui::TableColumn> layer_columns() {
  // The name keeps room for a framework path like "/layer3/layer3.0/conv1/Conv": on a narrow
  // terminal the columns on the right scroll (Left/Right) rather than every name ending in "…".
  return {{std::string(tui::tr("Layer")), 0, tui::Align::kLeft, 28},
          {"", 1},
          {std::string(tui::tr("Rank")), 4, tui::Align::kRight},
          {std::string(tui::tr("Op")), 12},
          {std::string(tui::tr("Accum")), 7, tui::Align::kRight},
          {std::string(tui::tr("Local")), 7, tui::Align::kRight},
          {std::string(tui::tr("Min atol")), 9, tui::Align::kRight},
          {std::string(tui::tr("Min rtol")), 9, tui::Align::kRight},
          {std::string(tui::tr("Max abs")), 9, tui::Align::kRight},
          {std::string(tui::tr("NaN/Inf")), 7, tui::Align::kRight},
          {std::string(tui::tr("Prec")), 5}};
}

}  // namespace

LayersView::LayersView(std::shared_ptr<SessionFeed> feed) : SessionScreen(std::move(feed)), table_(layer_columns()) {
  // The first `s` puts the worst layer on top.
  table_.set_sort_cycle({{kAccum, true}, {kLocal, true}, {kRank, false}});
}

std::string LayersView::title() const { return screen_title(id()); }

std::string LayersView::description() const { return screen_description(id()); }

std::vector<tui::Action> LayersView::help_actions() const {
  using tui::Action;
  return {Action::kUp,   Action::kDown,  Action::kPageUp,      Action::kPageDown,  Action::kHome,      Action::kEnd,
          Action::kEnter, Action::kSort, Action::kReverseSort, Action::kNextMatch, Action::kPrevMatch, Action::kLeft,
          Action::kRight};
}

void LayersView::on_result(const session::LayerwiseSession& session) {
  rows_ = layer_rows(session);
  marks_ = nullptr;
  build_rows(tui::unicode_glyphs());
  on_selection(feed().selected_node());
}

void LayersView::build_rows(const tui::Glyphs& glyphs) const {
  std::vector<tui::TableRow> table_rows;
  table_rows.reserve(rows_.size());
  for (const LayerRow& r : rows_) {
    tui::TableRow row;
    row.cells = {r.name,
                 std::string(error_symbol(r.level, glyphs)),
                 r.rank > 0 ? std::to_string(r.rank) : "-",
                 r.op,
                 format_ratio(r.accumulated),
                 format_ratio(r.local),
                 format_value(r.min_atol),
                 format_value(r.min_rtol),
                 format_value(r.abs_max),
                 r.nan + r.inf > 0 ? fmt::format("{}/{}", r.nan, r.inf) : "0",
                 r.precision};
    row.cell_roles = {tui::ColorRole::kDefault,
                      error_role(r.level),
                      r.rank > 0 ? tui::ColorRole::kAccent : tui::ColorRole::kDim,
                      tui::ColorRole::kDefault,
                      error_role(error_level(r.accumulated, false)),
                      error_role(error_level(r.local, false)),
                      tui::ColorRole::kDefault,
                      tui::ColorRole::kDefault,
                      tui::ColorRole::kDefault,
                      r.nan + r.inf > 0 ? tui::ColorRole::kError : tui::ColorRole::kDim,
                      tui::ColorRole::kDim};
    table_rows.push_back(std::move(row));
  }
  table_.set_rows(std::move(table_rows));
  marks_ = &glyphs;
}

void LayersView::on_selection(int64_t node) {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].node == node) {
      table_.select_row(i);
      break;
    }
  }
}

void LayersView::layout() { table_.resize(area_); }

std::string LayersView::status_text() const {
  return rows_.empty() ? std::string() : tui::trf("layer {}", table_.position_text());
}

unsigned LayersView::handle_content(tui::Action action) {
  if (action == tui::Action::kEnter) {
    const auto row = table_.selected_row();
    if (!row) return tui::kHandled;
    publish_selection(rows_[*row].node);
    feed().opened_from = "layers";
    return tui::kHandled | tui::kRedraw | tui::kSwitchView;
  }
  const auto before = table_.selected_row();
  unsigned result = table_.handle(action);
  // A new order starts at its top: s then Enter opens the worst layer.
  if (action == tui::Action::kSort || action == tui::Action::kReverseSort) result |= table_.handle(tui::Action::kHome);
  const auto after = table_.selected_row();
  if (after && after != before) publish_selection(rows_[*after].node);
  return result;
}

unsigned LayersView::handle_mouse(const tui::Key& event) {
  if (event.code != tui::Key::kMouseClick || !has_result()) return tui::kIgnored;
  const auto before = table_.selected_row();
  const auto clicked = table_.row_at(event.y);
  // A click on the selected row opens it, as Enter does.
  if (clicked && clicked == before) return handle_content(tui::Action::kEnter);
  const unsigned result = table_.click(event.x, event.y);
  const auto after = table_.selected_row();
  if (after && after != before) publish_selection(rows_[*after].node);
  return result == tui::kIgnored ? tui::kHandled : result;
}

void LayersView::draw_content(tui::Canvas& canvas) const {
  if (marks_ != &canvas.glyphs()) build_rows(canvas.glyphs());
  table_.draw(canvas);
}

}  // namespace vn::views
