// SPDX-License-Identifier: Apache-2.0
#include "views/screens/graph_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tui/i18n.h"
#include "tui/text.h"
#include "views/screens/screens.h"

namespace vn::views {
namespace {

std::string_view lane_glyph(char cell, const tui::Glyphs& g) {
  switch (static_cast<LaneCell>(cell)) {
    case LaneCell::kPass:
      return g.vertical;
    case LaneCell::kNode:
      return g.bullet;
    case LaneCell::kHorizontal:
      return g.horizontal;
    case LaneCell::kCross:
      return g.cross;
    case LaneCell::kMergeRight:
      return g.ascii ? "/" : "╯";
    case LaneCell::kMergeLeft:
      return g.ascii ? "\\" : "╰";
    case LaneCell::kTapRight:
      return g.tee_right;
    case LaneCell::kTapLeft:
      return g.tee_left;
    case LaneCell::kEmpty:
      break;
  }
  return " ";
}

}  // namespace

std::string GraphView::title() const { return screen_title(id()); }

std::string GraphView::description() const { return screen_description(id()); }

std::vector<tui::Action> GraphView::help_actions() const {
  using tui::Action;
  return {Action::kUp,     Action::kDown,  Action::kPageUp,    Action::kPageDown,  Action::kHome,
          Action::kEnd,    Action::kWorst, Action::kEnter,     Action::kNextMatch, Action::kPrevMatch};
}

void GraphView::on_result(const session::LayerwiseSession& session) {
  rows_ = graph_rows(session.model.graph, &session);
  lane_width_ = 0;
  for (const GraphRow& r : rows_) lane_width_ = std::max(lane_width_, r.lanes.size());
  selected_ = 0;
  top_ = 0;
  by_error_.clear();
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].level != ErrorLevel::kNone) by_error_.push_back(i);
  }
  // The culprit ranking first (an error is largest where it has grown, far below the layer that
  // introduced it: the user looks for the latter); then NaN/Inf producers, then by excess (NaN
  // excess above every number); graph order on ties.
  const auto key = [&](size_t i) {
    const double e = rows_[i].excess;
    return rows_[i].level == ErrorLevel::kNonFinite || std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  };
  std::stable_sort(by_error_.begin(), by_error_.end(), [&](size_t a, size_t b) {
    const int ra = rows_[a].rank, rb = rows_[b].rank;
    if ((ra > 0) != (rb > 0)) return ra > 0;
    if (ra > 0 && ra != rb) return ra < rb;
    const bool na = rows_[a].level == ErrorLevel::kNonFinite, nb = rows_[b].level == ErrorLevel::kNonFinite;
    if (na != nb) return na;
    return key(a) > key(b);
  });
  next_worst_ = 0;
  on_selection(feed().selected_node());
}

void GraphView::jump_worst() {
  if (by_error_.empty()) return;
  // After a move elsewhere, w starts again from the worst.
  if (next_worst_ > 0 && by_error_[next_worst_ - 1] != selected_) next_worst_ = 0;
  select(by_error_[next_worst_ % by_error_.size()]);
  next_worst_ = next_worst_ % by_error_.size() + 1;
  publish_selection(rows_[selected_].node);
}

unsigned GraphView::handle_mouse(const tui::Key& event) {
  if (event.code != tui::Key::kMouseClick || rows_.empty()) return tui::kIgnored;
  const int r = event.y - area_.y - 1;
  if (r < 0 || r >= body_height()) return tui::kHandled;
  const size_t row = top_ + static_cast<size_t>(r);
  if (row >= rows_.size()) return tui::kHandled;
  // A click on the selected row opens it, as Enter does.
  if (row == selected_) return handle_content(tui::Action::kEnter);
  select(row);
  publish_selection(rows_[selected_].node);
  return tui::kHandled | tui::kRedraw;
}

void GraphView::on_selection(int64_t node) {
  if (node >= 0 && static_cast<size_t>(node) < rows_.size()) select(static_cast<size_t>(node));
}

void GraphView::select(size_t row) {
  if (rows_.empty()) return;
  selected_ = std::min(row, rows_.size() - 1);
  const size_t h = static_cast<size_t>(std::max(1, body_height()));
  if (selected_ < top_) top_ = selected_;
  if (selected_ >= top_ + h) top_ = selected_ + 1 - h;
}

std::string GraphView::status_text() const {
  if (rows_.empty()) return {};
  return tui::trf("node {}/{}", selected_ + 1, rows_.size());
}

bool GraphView::matches(size_t row) const {
  if (filter_.empty()) return false;
  const bool ic = tui::smart_case_ignores_case(filter_);
  return tui::find_text(rows_[row].name, filter_, ic) != std::string::npos ||
         tui::find_text(rows_[row].op, filter_, ic) != std::string::npos;
}

void GraphView::apply_filter(std::string_view text) {
  filter_ = std::string(text);
  if (!filter_.empty() && !matches(selected_)) jump(true);
}

bool GraphView::jump(bool forward) {
  const size_t n = rows_.size();
  for (size_t step = 1; step <= n; ++step) {
    const size_t r = forward ? (selected_ + step) % n : (selected_ + n - step % n) % n;
    if (matches(r)) {
      select(r);
      publish_selection(rows_[r].node);
      return true;
    }
  }
  return false;
}

unsigned GraphView::handle_content(tui::Action action) {
  if (rows_.empty()) return tui::kIgnored;
  const size_t page = static_cast<size_t>(std::max(1, body_height() - 1));
  const size_t before = selected_;
  switch (action) {
    case tui::Action::kUp:
      select(selected_ > 0 ? selected_ - 1 : 0);
      break;
    case tui::Action::kDown:
      select(selected_ + 1);
      break;
    case tui::Action::kPageUp:
      select(selected_ > page ? selected_ - page : 0);
      break;
    case tui::Action::kPageDown:
      select(selected_ + page);
      break;
    case tui::Action::kHome:
      select(0);
      break;
    case tui::Action::kEnd:
      select(rows_.size() - 1);
      break;
    case tui::Action::kNextMatch:
    case tui::Action::kPrevMatch:
      jump(action == tui::Action::kNextMatch);
      return tui::kHandled | tui::kRedraw;
    case tui::Action::kWorst:
      jump_worst();
      return tui::kHandled | tui::kRedraw;
    case tui::Action::kEnter:
      publish_selection(rows_[selected_].node);
      feed().opened_from = "graph";
      return tui::kHandled | tui::kRedraw | tui::kSwitchView;
    default:
      return tui::kIgnored;
  }
  if (selected_ != before) publish_selection(rows_[selected_].node);
  return tui::kHandled | tui::kRedraw;
}

void GraphView::draw_content(tui::Canvas& canvas) const {
  if (area_.empty()) return;
  const tui::Glyphs& g = canvas.glyphs();
  const int w = area_.w;
  // Columns, dropped from the right as the screen narrows: lanes, marker, op, name, shape,
  // precision/tactic, error. The lanes and the marker share a column under the screen's title,
  // which is never cut: narrow lanes leave room for it.
  const std::string graph_title(tui::tr("Graph"));
  const int lanes_w = std::max(std::min<int>(static_cast<int>(lane_width_), std::max(2, w / 4)),
                               tui::display_width(graph_title) - 1);
  const int op_w = 14;
  const int err_w = w >= 50 ? 9 : 0;
  const int prec_w = w >= 110 ? 22 : 0;
  const int shape_w = w >= 80 ? 18 : 0;
  const int name_w = std::max(4, w - lanes_w - 2 - op_w - 1 - err_w - prec_w - shape_w - (shape_w ? 1 : 0) -
                                     (prec_w ? 1 : 0) - (err_w ? 1 : 0));
  int x = area_.x;
  const int y0 = area_.y;
  auto header = [&](int at, int width, std::string_view text, tui::Align align = tui::Align::kLeft) {
    if (width > 0) canvas.put_text(area_, at, y0, tui::fit_to_width(text, width, align), tui::ColorRole::kHeader);
  };
  canvas.fill(area_.rows(0, 1), " ", tui::ColorRole::kHeader);
  header(x, lanes_w + 2, graph_title);
  x += lanes_w + 2;
  header(x, op_w, tui::tr("Op"));
  x += op_w + 1;
  header(x, name_w, tui::tr("Node"));
  x += name_w + 1;
  if (shape_w) {
    header(x, shape_w, tui::tr("Shape"));
    x += shape_w + 1;
  }
  if (prec_w) {
    header(x, prec_w, tui::tr("Precision / tactic"));
    x += prec_w + 1;
  }
  if (err_w) header(x, err_w, tui::tr("Err/tol"), tui::Align::kRight);

  const int body = body_height();
  if (!feed().note().empty() && area_.h >= 2) {
    canvas.put_text(area_, area_.x, area_.y + area_.h - 1, tui::truncate_to_width(feed().note(), area_.w, g.ellipsis),
                    tui::ColorRole::kWarning);
  }
  for (int r = 0; r < body; ++r) {
    const size_t i = top_ + static_cast<size_t>(r);
    if (i >= rows_.size()) break;
    const GraphRow& row = rows_[i];
    const int y = y0 + 1 + r;
    const bool sel = i == selected_;
    const tui::ColorRole base = sel ? tui::ColorRole::kSelection : tui::ColorRole::kDefault;
    if (sel) canvas.fill(area_.rows(1 + r, 1), " ", base);
    int cx = area_.x;
    const int cells = std::min<int>(static_cast<int>(row.lanes.size()), lanes_w);
    for (int c = 0; c < cells; ++c) {
      const char cell = row.lanes[static_cast<size_t>(c)];
      const tui::ColorRole role =
          static_cast<LaneCell>(cell) == LaneCell::kNode ? (sel ? base : error_role(row.level)) : (sel ? base : tui::ColorRole::kDim);
      canvas.put_text(area_, cx + c, y, lane_glyph(cell, g), role);
    }
    if (static_cast<int>(row.lanes.size()) > lanes_w && lanes_w > 0) {
      canvas.put_text(area_, cx + lanes_w - 1, y, g.ellipsis, sel ? base : tui::ColorRole::kDim);
    }
    cx += lanes_w;
    canvas.put_text(area_, cx, y, error_symbol(row.level, g), sel ? base : error_role(row.level));
    cx += 2;
    canvas.put_text(area_, cx, y, tui::fit_to_width(row.op, op_w, tui::Align::kLeft, g.ellipsis),
                    sel ? base : tui::ColorRole::kAccent);
    cx += op_w + 1;
    const tui::ColorRole name_role = sel ? base : matches(i) ? tui::ColorRole::kAccent : base;
    canvas.put_text(area_, cx, y, tui::fit_to_width(row.name, name_w, tui::Align::kLeft, g.ellipsis), name_role);
    cx += name_w + 1;
    if (shape_w) {
      canvas.put_text(area_, cx, y, tui::fit_to_width(row.shape, shape_w, tui::Align::kLeft, g.ellipsis),
                      sel ? base : tui::ColorRole::kDim);
      cx += shape_w + 1;
    }
    if (prec_w) {
      canvas.put_text(area_, cx, y, tui::fit_to_width(row.precision, prec_w, tui::Align::kLeft, g.ellipsis), base);
      cx += prec_w + 1;
    }
    if (err_w) {
      canvas.put_text(area_, cx, y, tui::fit_to_width(row.excess < 0 ? "" : format_ratio(row.excess), err_w,
                                                      tui::Align::kRight),
                      sel ? base : error_role(row.level));
    }
  }
}

}  // namespace vn::views
