// SPDX-License-Identifier: Apache-2.0
#include "views/screens/reduce_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "tui/i18n.h"
#include "tui/text.h"
#include "views/screens/screens.h"

namespace vn::views {

std::string ReduceView::title() const { return screen_title(id()); }

std::string ReduceView::description() const { return screen_description(id()); }

std::vector<tui::Action> ReduceView::help_actions() const {
  using tui::Action;
  if (!prompt_open()) return {};
  return {Action::kBad, Action::kGood, Action::kSkip, Action::kUndo, Action::kAccept, Action::kLeft, Action::kRight};
}

void ReduceView::set_model(ReduceModel model) {
  const bool new_question = model.asking && (!model_.asking || answered_ || model.checks_done != model_.checks_done ||
                                             model.candidate != model_.candidate);
  model_ = std::move(model);
  if (new_question) {
    answered_ = false;
    prompt_ = tui::Prompt(tui::trf("Check {}: does it fail?", model_.checks_done + 1),
                          {{tui::Action::kBad, std::string(tui::tr("bad (fails)")), "b"},
                           {tui::Action::kGood, std::string(tui::tr("good (passes)")), "g"},
                           {tui::Action::kSkip, std::string(tui::tr("skip")), "s"},
                           {tui::Action::kUndo, std::string(tui::tr("undo")), "u"}});
  }
}

bool ReduceView::tick(std::chrono::steady_clock::time_point now) {
  (void)now;
  if (!poll_) return false;
  std::optional<ReduceModel> next = poll_();
  if (!next) return false;
  set_model(std::move(*next));
  return true;
}

std::string ReduceView::status_text() const {
  return tui::trf("{} check(s), {} node(s) kept", model_.checks_done, model_.nodes_kept);
}

unsigned ReduceView::handle(tui::Action action) {
  if (!prompt_open()) return tui::kIgnored;
  // Leaving is the App's (q asks before quitting): no key that leaves answers the question, and
  // the screens, help and command line stay reachable.
  const bool app_action = tui::screen_index(action).has_value() || action == tui::Action::kHelp ||
                          action == tui::Action::kCommandLine || action == tui::Action::kQuit ||
                          action == tui::Action::kRefresh || action == tui::Action::kNextPane ||
                          action == tui::Action::kPrevPane || action == tui::Action::kBack;
  if (app_action) return tui::kIgnored;
  const unsigned result = prompt_.handle(action);
  if (const auto& answer = prompt_.result()) {
    answered_ = true;
    if (on_answer_) on_answer_(*answer);
    return tui::kHandled | tui::kRedraw;
  }
  // The question is modal: other keys do nothing until it is answered.
  return result != tui::kIgnored ? result : tui::kHandled;
}

void ReduceView::draw(tui::Canvas& canvas) const {
  if (area_.empty()) return;
  canvas.fill(area_);
  const tui::Glyphs& g = canvas.glyphs();
  const ReduceModel& m = model_;
  // The bound on the checks is the reducer's after the last check: none before the first, none
  // once it said none were left (never "at most 0").
  std::string checks;
  if (m.checking) {
    checks = m.checks_left > 0 && !m.history.empty()
                 ? tui::trf("check {} of at most {}", m.checks_done + 1, m.checks_done + m.checks_left)
                 : tui::trf("check {}", m.checks_done + 1);
  } else {
    checks = m.checks_left > 0 && !m.history.empty() && !m.status.starts_with("done")
                 ? tui::trf("checks {} done, at most {} left", m.checks_done, m.checks_left)
                 : tui::trf("checks {} done", m.checks_done);
  }
  const std::string head =
      tui::trf("{}  phase {}  {}  kept {} of {} node(s)", tui::tr_data(m.status.empty() ? "reducing" : m.status),
               m.phase.empty() ? "-" : tui::tr_data(m.phase), checks, m.nodes_kept, m.total_nodes);
  canvas.put_text(area_, area_.x, area_.y, tui::truncate_to_width(head, area_.w, g.ellipsis), tui::ColorRole::kHeader);
  if (area_.h < 2) return;

  // The node range: one cell per slice of nodes, filled where the candidate has a node.
  const int bar_w = std::max(1, area_.w - 2);
  canvas.put_text(area_, area_.x, area_.y + 1, "[", tui::ColorRole::kDim);
  canvas.put_text(area_, area_.x + bar_w + 1, area_.y + 1, "]", tui::ColorRole::kDim);
  // Cell c covers nodes [c*N/W, (c+1)*N/W), at least one, so the bar has no gaps when it is
  // wider than the model.
  std::vector<bool> in_candidate(static_cast<size_t>(std::max<int64_t>(0, m.total_nodes)), false);
  for (int64_t node : m.candidate) {
    if (node >= 0 && node < m.total_nodes) in_candidate[static_cast<size_t>(node)] = true;
  }
  std::vector<bool> filled(static_cast<size_t>(bar_w), false);
  for (int c = 0; c < bar_w && m.total_nodes > 0; ++c) {
    const int64_t lo = c * m.total_nodes / bar_w;
    const int64_t hi = std::max(lo + 1, (c + 1) * m.total_nodes / bar_w);
    for (int64_t node = lo; node < hi && node < m.total_nodes; ++node) {
      if (in_candidate[static_cast<size_t>(node)]) filled[static_cast<size_t>(c)] = true;
    }
  }
  for (int c = 0; c < bar_w; ++c) {
    const bool on = filled[static_cast<size_t>(c)];
    canvas.put_text(area_, area_.x + 1 + c, area_.y + 1, on ? g.bar_full : (g.ascii ? "-" : g.shade[1]),
                    on ? tui::ColorRole::kError : tui::ColorRole::kDim);
  }
  // Where the external check reads the candidate, under the bar.
  if (!m.candidate_file.empty() && area_.h >= 4) {
    canvas.put_text(area_, area_.x, area_.y + 2,
                    tui::truncate_to_width(tui::trf("The check reads the candidate from {}", m.candidate_file), area_.w,
                                           g.ellipsis),
                    tui::ColorRole::kDim);
  }
  if (area_.h < 4) return;

  const int top = area_.y + 3;
  const int h = area_.y + area_.h - top;
  const bool side = area_.w >= 70;
  const tui::Rect hist{area_.x, top, side ? area_.w * 3 / 5 - 1 : area_.w, side ? h : (h + 1) / 2};
  const tui::Rect cand = side ? tui::Rect{area_.x + area_.w * 3 / 5, top, area_.w - area_.w * 3 / 5, h}
                              : tui::Rect{area_.x, top + hist.h, area_.w, h - hist.h};
  if (!hist.empty()) {
    canvas.put_text(hist, hist.x, hist.y,
                    tui::fit_to_width(tui::fit_to_width(tui::tr("Iter"), 4, tui::Align::kRight) + "  " +
                                          tui::fit_to_width(tui::tr("Phase"), 8) + " " +
                                          tui::fit_to_width(tui::tr("Nodes"), 5, tui::Align::kRight) + "  " +
                                          tui::fit_to_width(tui::tr("Verdict"), 7) + "  " + std::string(tui::tr("Reason")),
                                      hist.w),
                    tui::ColorRole::kHeader);
    // Newest first, so the last verdict is always visible.
    int y = hist.y + 1;
    for (auto it = m.history.rbegin(); it != m.history.rend() && y < hist.y + hist.h; ++it, ++y) {
      const tui::ColorRole role = it->verdict == "bad"    ? tui::ColorRole::kError
                                  : it->verdict == "good" ? tui::ColorRole::kOk
                                                          : tui::ColorRole::kWarning;
      const std::string left = fmt::format("{:>4}  ", it->iteration) + tui::fit_to_width(tui::tr_data(it->phase), 8) +
                               fmt::format(" {:>5}  ", it->nodes);
      int x = hist.x + canvas.put_text(hist, hist.x, y, left);
      x += canvas.put_text(hist, x, y, tui::fit_to_width(tui::tr_data(it->verdict), 7) + "  ", role);
      canvas.put_text(hist, x, y, it->reason, tui::ColorRole::kDim);
    }
  }
  if (!cand.empty()) {
    canvas.put_text(cand, cand.x, cand.y,
                    tui::fit_to_width(m.checking ? tui::trf("Checking: {} node(s)", m.candidate.size())
                                                 : tui::trf("Candidate: {} node(s)", m.candidate.size()),
                                      cand.w),
                    tui::ColorRole::kHeader);
    for (size_t i = 0; i < m.candidate_labels.size() && static_cast<int>(i) + 1 < cand.h; ++i) {
      const bool more = static_cast<int>(i) + 2 == cand.h && i + 1 < m.candidate_labels.size();
      const std::string text =
          more ? tui::trf("{} {} more", g.ellipsis, m.candidate_labels.size() - i) : m.candidate_labels[i];
      canvas.put_text(cand, cand.x, cand.y + 1 + static_cast<int>(i), text);
    }
  }
  if (prompt_open()) prompt_.draw(canvas, area_.rows(area_.h >= 8 ? area_.h - 5 : 0, std::min(area_.h, 5)));
}

}  // namespace vn::views
