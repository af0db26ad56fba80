// SPDX-License-Identifier: Apache-2.0
#include "views/screens/flowchart_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "tui/text.h"

namespace vn::views {
namespace {

// Columns from which the chart gets its own column left of the current node.
constexpr int kChartColumnMinWidth = 70;
// Columns of each cost (seconds, builds, checks) in the path.
constexpr int kCostColumn = 7;
// Rows of the prompt box: border, question, blank, choices, border.
constexpr int kPromptRows = 5;

// The screen's own words in the chart's language; the chart itself brings the rest.
struct Labels {
  const char* screen;
  const char* chart;
  const char* evidence;
  const char* proposed;
  const char* path;
  const char* col_time;  // the path's cost columns, right-aligned in kCostColumn columns each
  const char* col_builds;
  const char* col_checks;
  const char* probing;
  const char* your_answer;
  const char* yes;
  const char* no;
  const char* proposal_mark;
  const char* overridden;
  const char* outcome;
  const char* culprit;
  const char* bundle;
  const char* ended;
  const char* failed;
  const char* cancelled;
  const char* cancel_question;
  const char* quit_question;
  const char* x_cancels;
  const char* q_quits;
  const char* seconds;
};

constexpr Labels kEnglish{"Flowchart", "Chart", "Evidence", "Proposed answer", "Path so far", "time s", "builds", "checks",
                          "Running the probe", "Your answer? Enter accepts the highlighted one", "yes", "no",
                          " (proposed)", " (yours)", "Outcome", "Culprit", "Bug-report bundle", "Triage ended", "Triage failed",
                          "Triage cancelled", "Cancel the triage?", "Cancel the triage and quit?",
                          "x cancels the triage", "q quits", "s"};
constexpr Labels kChinese{"流程图", "流程图", "证据", "建议的回答", "已走过的路径", "用时秒", "构建", "检查",
                          "正在运行探测", "您的回答？回车接受高亮的选项", "是", "否", "（建议）",
                          "（您的）", "结果", "问题所在", "错误报告包", "分诊结束", "分诊失败", "分诊已取消", "取消分诊？",
                          "取消分诊并退出？", "x 取消分诊", "q 退出", "秒"};

const Labels& labels_for(const FlowchartModel& model) {
  return model.chart != nullptr && model.chart->lang == "zh" ? kChinese : kEnglish;
}

std::string scalar_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::string answer_text(const Labels& l, const flow::TriageStep& step) {
  if (!step.answer) return {};
  return std::string(*step.answer ? l.yes : l.no) + (step.overridden ? l.overridden : "");
}

// Writes wrapped `text` from row `y` on, stopping before `bottom`; returns the next free row.
int put_wrapped(tui::Canvas& canvas, tui::Rect area, int y, int bottom, std::string_view text, tui::ColorRole role) {
  for (const std::string& line : tui::wrap_text(text, area.w)) {
    if (y >= bottom) break;
    canvas.put_text(area, area.x, y++, line, role);
  }
  return y;
}

}  // namespace

std::vector<std::string> evidence_lines(const nlohmann::ordered_json& evidence, size_t max_lines) {
  std::vector<std::string> lines;
  auto add = [&](std::string line) {
    if (lines.size() < max_lines) lines.push_back(std::move(line));
  };
  if (!evidence.is_object()) return lines;
  for (const auto& [key, value] : evidence.items()) {
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) {
        if (!v.is_structured()) add(fmt::format("{}.{}: {}", key, sub, scalar_text(v)));
      }
    } else if (value.is_array()) {
      std::vector<std::string> parts;
      bool scalars = true;
      for (const auto& item : value) {
        if (item.is_structured()) {
          scalars = false;
          // A build's check reads as its verdict.
          if (item.contains("check") && item["check"].contains("verdict")) parts.push_back(scalar_text(item["check"]["verdict"]));
        } else {
          parts.push_back(scalar_text(item));
        }
      }
      if (scalars || parts.size() == value.size()) {
        std::string joined;
        for (const std::string& p : parts) joined += (joined.empty() ? "" : ", ") + p;
        add(fmt::format("{}: {}", key, joined.empty() ? "-" : joined));
      } else {
        add(fmt::format("{}: {} item(s)", key, value.size()));
      }
    } else {
      add(fmt::format("{}: {}", key, scalar_text(value)));
    }
  }
  return lines;
}

std::string FlowchartView::title() const { return labels_for(model_).screen; }

void FlowchartView::set_model(FlowchartModel model) {
  const bool new_question = model.phase == TriagePhase::kAsking &&
                            (model_.phase != TriagePhase::kAsking || model.path.size() != model_.path.size() ||
                             model.current != model_.current);
  model_ = std::move(model);
  if (finished()) confirm_.reset();
  if (!new_question) return;
  answered_ = false;
  const Labels& l = labels_for(model_);
  const bool yes_proposed = model_.proposed && model_.proposed->answer.value_or(true);
  prompt_ = tui::Prompt(l.your_answer,
                        {{tui::Action::kYes, std::string(l.yes) + (yes_proposed ? l.proposal_mark : ""), "y"},
                         {tui::Action::kNo, std::string(l.no) + (yes_proposed ? "" : l.proposal_mark), "n"}},
                        yes_proposed ? 0 : 1);
}

bool FlowchartView::tick(std::chrono::steady_clock::time_point now) {
  bool changed = false;
  if (poll_) {
    if (std::optional<FlowchartModel> next = poll_()) {
      set_model(std::move(*next));
      changed = true;
    }
  }
  // The probe's running time is shown in whole seconds: redraw when it turns.
  const auto seconds = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t - model_.started).count();
  };
  if (model_.phase == TriagePhase::kProbing && seconds(now) != seconds(now_)) changed = true;
  now_ = now;
  return changed;
}

tui::KeyContext FlowchartView::key_context() const {
  return confirm_ || prompt_open() ? tui::KeyContext::kPrompt : tui::KeyContext::kNormal;
}

std::string FlowchartView::status_text() const {
  int64_t builds = 0, checks = 0;
  double seconds = 0;
  for (const flow::TriageStep& s : model_.path) {
    builds += s.builds;
    checks += s.checks;
    seconds += s.seconds;
  }
  return fmt::format("step {}  {:.1f} s  {} build(s)  {} check(s)", model_.path.size() + (finished() ? 0 : 1),
                     seconds, builds, checks);
}

void FlowchartView::open_confirm(bool then_quit) {
  const Labels& l = labels_for(model_);
  quit_after_cancel_ = then_quit;
  confirm_ = std::make_unique<tui::Prompt>(
      then_quit ? l.quit_question : l.cancel_question,
      std::vector<tui::PromptChoice>{{tui::Action::kYes, l.yes, "y"}, {tui::Action::kNo, l.no, "n"}}, 1);
}

unsigned FlowchartView::handle(tui::Action action) {
  // Screens, help, the command line and Q stay the App's even while a question is open.
  const bool app_action = tui::screen_index(action).has_value() || action == tui::Action::kHelp ||
                          action == tui::Action::kCommandLine || action == tui::Action::kQuit ||
                          action == tui::Action::kRefresh || action == tui::Action::kNextPane ||
                          action == tui::Action::kPrevPane;
  if (app_action) return tui::kIgnored;
  if (confirm_) {
    const unsigned result = confirm_->handle(action);
    if (const auto& answer = confirm_->result()) {
      const bool cancel = *answer == tui::Action::kYes;
      confirm_.reset();
      if (cancel && on_cancel_) on_cancel_();
      return tui::kHandled | tui::kRedraw | (cancel && quit_after_cancel_ ? tui::kQuit : 0u);
    }
    // Modal: nothing moves behind it.
    return result != tui::kIgnored ? result : tui::kHandled;
  }
  if (finished()) return tui::kIgnored;
  if (action == tui::Action::kCancelJob || action == tui::Action::kBack) {
    open_confirm(action == tui::Action::kBack);
    return tui::kHandled | tui::kRedraw;
  }
  if (!prompt_open()) return tui::kIgnored;
  const unsigned result = prompt_.handle(action);
  if (const auto& answer = prompt_.result()) {
    answered_ = true;
    if (on_answer_) on_answer_(*answer == tui::Action::kYes);
    return tui::kHandled | tui::kRedraw;
  }
  return result != tui::kIgnored ? result : tui::kHandled;
}

void FlowchartView::draw_chart(tui::Canvas& canvas, tui::Rect area) const {
  const tui::Glyphs& g = canvas.glyphs();
  const Labels& l = labels_for(model_);
  canvas.put_text(area, area.x, area.y, tui::truncate_to_width(l.chart, area.w, g.ellipsis), tui::ColorRole::kHeader);
  if (model_.chart == nullptr) return;
  int y = area.y + 1;
  for (const flow::FlowNode& node : model_.chart->nodes) {
    if (y >= area.y + area.h) break;
    // The last visit decides the mark: a node asked again after double-checking shows its new answer.
    const flow::TriageStep* visit = nullptr;
    for (const flow::TriageStep& s : model_.path) {
      if (s.node == node.id) visit = &s;
    }
    const bool current = node.id == model_.current && !(model_.phase == TriagePhase::kDone && visit != nullptr);
    std::string_view mark = " ";
    tui::ColorRole role = tui::ColorRole::kDim;
    if (current) {
      mark = g.pointer;
      role = finished() && model_.phase != TriagePhase::kDone ? tui::ColorRole::kError : tui::ColorRole::kAccent;
    } else if (visit != nullptr) {
      mark = g.check;
      role = node.kind == flow::NodeKind::kEnd ? tui::ColorRole::kAccent : tui::ColorRole::kOk;
    }
    const std::string answer = visit != nullptr ? answer_text(l, *visit) : std::string();
    const int answer_w = answer.empty() ? 0 : tui::display_width(answer) + 1;
    const std::string left = std::string(mark) + " " + node.title;
    canvas.put_text(area, area.x, y, tui::truncate_to_width(left, area.w - answer_w, g.ellipsis), role);
    if (!answer.empty() && area.w > answer_w + 4) {
      canvas.put_text(area, area.x + area.w - answer_w + 1, y, answer,
                      visit->overridden ? tui::ColorRole::kWarning : tui::ColorRole::kDefault);
    }
    ++y;
  }
}

void FlowchartView::draw_current(tui::Canvas& canvas, tui::Rect area) const {
  if (area.empty()) return;
  const tui::Glyphs& g = canvas.glyphs();
  const Labels& l = labels_for(model_);
  const flow::FlowNode* node = model_.chart != nullptr ? model_.chart->find(model_.current) : nullptr;
  const int bottom = area.y + area.h;
  int y = area.y;
  auto header = [&](std::string_view text, tui::ColorRole role) {
    if (y < bottom) canvas.put_text(area, area.x, y++, tui::truncate_to_width(text, area.w, g.ellipsis), role);
  };
  switch (model_.phase) {
    case TriagePhase::kProbing: {
      const auto seconds = std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::seconds>(now_ - model_.started).count());
      header(fmt::format("{} ({} {}): {}", l.probing, seconds, l.seconds, node ? node->title : model_.current),
             tui::ColorRole::kHeader);
      if (node != nullptr) {
        if (node->kind == flow::NodeKind::kQuestion) {
          y = put_wrapped(canvas, area, y, bottom - 1, node->question, tui::ColorRole::kDefault);
        }
        y = put_wrapped(canvas, area, y, bottom - 1, node->text, tui::ColorRole::kDim);
      }
      if (y < bottom) canvas.put_text(area, area.x, bottom - 1, l.x_cancels, tui::ColorRole::kDim);
      break;
    }
    case TriagePhase::kAsking: {
      const int prompt_rows = area.h >= kPromptRows + 3 ? kPromptRows : std::min(area.h, 2);
      const int text_bottom = bottom - prompt_rows;
      header(node ? node->title : model_.current, tui::ColorRole::kHeader);
      if (node != nullptr) y = put_wrapped(canvas, area, y, text_bottom, node->question, tui::ColorRole::kDefault);
      if (model_.proposed && node != nullptr && y < text_bottom) {
        const flow::TriageStep& p = *model_.proposed;
        const bool yes = p.answer.value_or(true);
        const std::string proposal = fmt::format("{}: {}", l.proposed, yes ? node->yes.label : node->no.label);
        // The proposal matters more than the details: keep rows for it below the evidence.
        const int proposal_rows = static_cast<int>(tui::wrap_text(proposal, area.w).size());
        const int evidence_bottom = std::max(y, text_bottom - proposal_rows);
        if (y < evidence_bottom) {
          canvas.put_text(area, area.x, y++,
                          tui::truncate_to_width(fmt::format("{} ({:.2f} {})", l.evidence, p.seconds, l.seconds),
                                                 area.w, g.ellipsis),
                          tui::ColorRole::kHeader);
        }
        y = put_wrapped(canvas, area, y, evidence_bottom, p.summary, tui::ColorRole::kDefault);
        for (const std::string& line : evidence_lines(p.evidence, 12)) {
          if (y >= evidence_bottom) break;
          canvas.put_text(area, area.x, y++, "  " + tui::truncate_to_width(line, area.w - 2, g.ellipsis),
                          tui::ColorRole::kDim);
        }
        y = put_wrapped(canvas, area, y, text_bottom, proposal, tui::ColorRole::kAccent);
        // What the step is about, where there is room for all of it.
        const auto about = tui::wrap_text(node->text, area.w);
        if (text_bottom - y > static_cast<int>(about.size())) {
          put_wrapped(canvas, area, y + 1, text_bottom, node->text, tui::ColorRole::kDim);
        }
      }
      if (prompt_open()) prompt_.draw(canvas, area.rows(area.h - prompt_rows, prompt_rows));
      break;
    }
    case TriagePhase::kDone: {
      // Probes can end the walk off the chart's ends ("no_failure"): then the last node is no title.
      const bool at_end = node != nullptr && node->kind == flow::NodeKind::kEnd;
      header(at_end ? node->title : l.ended,
             model_.outcome == "localized" ? tui::ColorRole::kError : tui::ColorRole::kOk);
      header(fmt::format("{}: {}", l.outcome, model_.outcome), tui::ColorRole::kHeader);
      if (!model_.culprit.empty()) header(fmt::format("{}: {}", l.culprit, model_.culprit), tui::ColorRole::kDefault);
      if (!model_.bundle.empty()) {
        y = put_wrapped(canvas, area, y, bottom, fmt::format("{}: {}", l.bundle, model_.bundle), tui::ColorRole::kOk);
      }
      if (at_end) {
        y = put_wrapped(canvas, area, y, std::max(y, bottom - 1), node->text, tui::ColorRole::kDim);
      }
      if (y < bottom) canvas.put_text(area, area.x, bottom - 1, l.q_quits, tui::ColorRole::kDim);
      break;
    }
    case TriagePhase::kFailed:
    case TriagePhase::kCancelled:
      header(model_.phase == TriagePhase::kFailed ? l.failed : l.cancelled, tui::ColorRole::kError);
      y = put_wrapped(canvas, area, y, bottom - 1, model_.error, tui::ColorRole::kDefault);
      if (y < bottom) canvas.put_text(area, area.x, bottom - 1, l.q_quits, tui::ColorRole::kDim);
      break;
  }
}

void FlowchartView::draw_path(tui::Canvas& canvas, tui::Rect area) const {
  if (area.empty()) return;
  const tui::Glyphs& g = canvas.glyphs();
  const Labels& l = labels_for(model_);
  // Costs in three right-aligned columns; the step's title and answer take what is left.
  const int cost_w = area.w >= 40 ? 3 * kCostColumn : 0;
  const int name_w = area.w - cost_w;
  canvas.put_text(area, area.x, area.y, tui::fit_to_width(l.path, name_w, tui::Align::kLeft, g.ellipsis),
                  tui::ColorRole::kHeader);
  if (cost_w > 0) {
    const std::string columns = tui::fit_to_width(l.col_time, kCostColumn, tui::Align::kRight) +
                                tui::fit_to_width(l.col_builds, kCostColumn, tui::Align::kRight) +
                                tui::fit_to_width(l.col_checks, kCostColumn, tui::Align::kRight);
    canvas.put_text(area, area.x + name_w, area.y, columns, tui::ColorRole::kHeader);
  }
  const int rows = area.h - 1;
  if (rows <= 0) return;
  // The newest steps when they do not all fit.
  const size_t first = model_.path.size() > static_cast<size_t>(rows) ? model_.path.size() - static_cast<size_t>(rows) : 0;
  int y = area.y + 1;
  for (size_t i = first; i < model_.path.size(); ++i, ++y) {
    const flow::TriageStep& s = model_.path[i];
    const flow::FlowNode* node = model_.chart != nullptr ? model_.chart->find(s.node) : nullptr;
    const std::string answer = answer_text(l, s);
    const std::string name = fmt::format("{}. {}{}", i + 1, node ? node->title : s.node,
                                         answer.empty() ? "" : fmt::format(" {} {}", g.arrow_right, answer));
    canvas.put_text(area, area.x, y, tui::truncate_to_width(name, name_w - 1, g.ellipsis),
                    s.overridden ? tui::ColorRole::kWarning : tui::ColorRole::kDefault);
    if (cost_w > 0 && (node == nullptr || node->kind != flow::NodeKind::kEnd)) {
      canvas.put_text(area, area.x + name_w, y,
                      fmt::format("{:>{}.1f}{:>{}}{:>{}}", s.seconds, kCostColumn, s.builds, kCostColumn, s.checks,
                                  kCostColumn),
                      tui::ColorRole::kDim);
    }
  }
}

void FlowchartView::draw(tui::Canvas& canvas) const {
  if (area_.empty()) return;
  canvas.fill(area_);
  tui::Rect right = area_;
  if (area_.w >= kChartColumnMinWidth) {
    const int chart_w = std::clamp(area_.w / 3, 24, 40);
    draw_chart(canvas, {area_.x, area_.y, chart_w, area_.h});
    for (int y = area_.y; y < area_.y + area_.h; ++y) {
      canvas.put_text(area_, area_.x + chart_w, y, canvas.glyphs().vertical, tui::ColorRole::kDim);
    }
    right = {area_.x + chart_w + 2, area_.y, area_.w - chart_w - 2, area_.h};
  }
  // The path takes the bottom third (at least its header and a step) on screens tall enough.
  int path_rows = 0;
  if (right.h >= 12 && !model_.path.empty()) {
    path_rows = std::min(static_cast<int>(model_.path.size()) + 1, std::max(3, right.h / 3));
  }
  draw_current(canvas, right.rows(0, right.h - path_rows - (path_rows > 0 ? 1 : 0)));
  if (path_rows > 0) draw_path(canvas, right.rows(right.h - path_rows, path_rows));
  if (confirm_) confirm_->draw(canvas, area_);
}

}  // namespace vn::views
