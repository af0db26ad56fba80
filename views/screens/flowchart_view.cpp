// SPDX-License-Identifier: Apache-2.0
#include "views/screens/flowchart_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "tui/i18n.h"
#include "tui/text.h"
#include "tui/widgets/progress.h"
#include "views/screens/screens.h"

namespace vn::views {
namespace {

// Columns from which the chart gets its own column left of the current node.
constexpr int kChartColumnMinWidth = 70;
// The chart column: at least this wide, at most this share of the screen (the rest is the
// question's), titles wrapping onto further rows when they need more.
constexpr int kChartMinWidth = 24;
// Columns of each cost (seconds, builds, checks) in the path.
constexpr int kCostColumn = 7;
// Rows of the prompt box: border, question, blank, choices, border.
constexpr int kPromptRows = 5;

std::string scalar_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::string answer_text(const flow::TriageStep& step) {
  if (!step.answer) return {};
  return std::string(tui::tr(*step.answer ? "yes" : "no")) + std::string(step.overridden ? tui::tr(" (yours)") : "");
}

// Writes wrapped `text` from row `y` on, stopping before `bottom`; returns the next free row.
int put_wrapped(tui::Canvas& canvas, tui::Rect area, int y, int bottom, std::string_view text, tui::ColorRole role) {
  for (const std::string& line : tui::wrap_text(text, area.w)) {
    if (y >= bottom) break;
    canvas.put_text(area, area.x, y++, line, role);
  }
  return y;
}

// "8 s", "2 min 5 s".
std::string duration_text(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
  return s < 60 ? tui::trf("{} s", s) : tui::trf("{} min {} s", s / 60, s % 60);
}

}  // namespace

std::optional<EvidenceLink> evidence_link(const nlohmann::ordered_json& evidence, std::string_view line) {
  if (!evidence.is_object()) return std::nullopt;
  for (const auto& [key, value] : evidence.items()) {
    if (!value.is_string()) continue;
    const std::string text = value.get<std::string>();
    if (fmt::format("{}: {}", tui::tr_data(key), text) != line) continue;
    if (key == "first_culprit" || key == "layer") return EvidenceLink{EvidenceLink::Kind::kLayer, text};
    if (key == "subgraph" || key == "minimal") {
      // A reducer's description: "2 node(s): conv2 (Conv), relu2 (Relu) | inputs: ...".
      const size_t start = text.find(": ");
      const size_t end = start == std::string::npos ? start : text.find(" (", start);
      if (end != std::string::npos)
        return EvidenceLink{EvidenceLink::Kind::kNode, text.substr(start + 2, end - start - 2)};
    }
  }
  return std::nullopt;
}

std::optional<EvidenceLink> culprit_link(std::string_view culprit) {
  const size_t open = culprit.find('\'');
  const size_t close = open == std::string_view::npos ? open : culprit.find('\'', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return EvidenceLink{culprit.starts_with("node") ? EvidenceLink::Kind::kNode : EvidenceLink::Kind::kLayer,
                      std::string(culprit.substr(open + 1, close - open - 1))};
}

std::string progress_counts(const flow::ProbeProgress& p) {
  const int64_t at = p.total > 0 ? std::min(p.done + 1, p.total) : p.done + 1;
  switch (p.unit) {
    case flow::ProgressUnit::kBuild:
      return p.total > 0 ? tui::trf("build {} of {}", at, p.total) : tui::trf("build {}", at);
    case flow::ProgressUnit::kLayer:
      return p.total > 0 ? tui::trf("layer {} of {}", at, p.total) : tui::trf("layer {}", at);
    case flow::ProgressUnit::kCheck:
      if (p.total <= 0) return tui::trf("check {}", at);
      return p.at_most ? tui::trf("check {} of at most {}", at, p.total) : tui::trf("check {} of {}", at, p.total);
    case flow::ProgressUnit::kNone:
      break;
  }
  return {};
}

std::vector<std::string> evidence_lines(const nlohmann::ordered_json& evidence, size_t max_lines) {
  std::vector<std::string> lines;
  auto add = [&](std::string line) {
    if (lines.size() < max_lines) lines.push_back(std::move(line));
  };
  if (!evidence.is_object()) return lines;
  for (const auto& [key, value] : evidence.items()) {
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) {
        if (!v.is_structured()) add(fmt::format("{}.{}: {}", tui::tr_data(key), tui::tr_data(sub), scalar_text(v)));
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
        add(fmt::format("{}: {}", tui::tr_data(key), joined.empty() ? "-" : joined));
      } else {
        add(fmt::format("{}: {}", tui::tr_data(key), tui::trf("{} item(s)", value.size())));
      }
    } else {
      add(fmt::format("{}: {}", tui::tr_data(key), scalar_text(value)));
    }
  }
  return lines;
}

std::string FlowchartView::title() const { return screen_title(id()); }

std::string FlowchartView::description() const { return screen_description(id()); }

bool FlowchartView::undoable() const {
  if (!on_undo_ || model_.chart == nullptr) return false;
  return std::any_of(model_.path.begin(), model_.path.end(), [&](const flow::TriageStep& s) {
    const flow::FlowNode* node = model_.chart->find(s.node);
    return node != nullptr && node->kind == flow::NodeKind::kQuestion && s.answer.has_value();
  });
}

std::vector<tui::Action> FlowchartView::help_actions() const {
  using tui::Action;
  std::vector<Action> actions;
  if (prompt_open()) actions = {Action::kYes, Action::kNo, Action::kAccept, Action::kLeft, Action::kRight};
  if (prompt_open() && undoable()) actions.insert(actions.begin() + 2, Action::kUndo);
  if (!links_.empty()) actions.insert(actions.end(), {Action::kUp, Action::kDown, Action::kEnter});
  if (!finished()) actions.push_back(Action::kCancelJob);
  return actions;
}

std::vector<std::pair<std::string, std::optional<EvidenceLink>>> FlowchartView::evidence_shown() const {
  std::vector<std::pair<std::string, std::optional<EvidenceLink>>> shown;
  if (!model_.proposed) return shown;
  for (std::string& line : evidence_lines(model_.proposed->evidence, 12)) {
    std::optional<EvidenceLink> link = evidence_link(model_.proposed->evidence, line);
    shown.emplace_back(std::move(line), std::move(link));
  }
  return shown;
}

std::optional<size_t> FlowchartView::link_index(const EvidenceLink& link) const {
  for (size_t i = 0; i < links_.size(); ++i) {
    if (links_[i] == link) return i;
  }
  return std::nullopt;
}

void FlowchartView::set_model(FlowchartModel model) {
  const bool new_question = model.phase == TriagePhase::kAsking &&
                            (model_.phase != TriagePhase::kAsking || model.path.size() != model_.path.size() ||
                             model.current != model_.current || model.asked != model_.asked);
  const bool ended = !finished() && (model.phase == TriagePhase::kDone || model.phase == TriagePhase::kFailed ||
                                     model.phase == TriagePhase::kCancelled);
  model_ = std::move(model);
  if (finished()) confirm_cancel_ = false;
  // A new question or the end: its links, none selected (Enter answers) but the culprit at the end.
  if (new_question || ended) {
    links_.clear();
    if (model_.phase == TriagePhase::kAsking) {
      for (const auto& [line, link] : evidence_shown()) {
        if (link && !link_index(*link)) links_.push_back(*link);
      }
    } else if (model_.phase == TriagePhase::kDone) {
      if (std::optional<EvidenceLink> culprit = culprit_link(model_.culprit)) links_.push_back(*culprit);
    }
    link_.reset();
    if (model_.phase == TriagePhase::kDone && !links_.empty()) link_ = 0;
  }
  if (!new_question) return;
  answered_ = false;
  const bool yes_proposed = model_.proposed && model_.proposed->answer.value_or(true);
  const std::string mark(tui::tr(" (proposed)"));
  std::vector<tui::PromptChoice> choices = {
      {tui::Action::kYes, std::string(tui::tr("yes")) + (yes_proposed ? mark : ""), "y"},
      {tui::Action::kNo, std::string(tui::tr("no")) + (yes_proposed ? "" : mark), "n"}};
  if (undoable()) choices.push_back({tui::Action::kUndo, std::string(tui::tr("undo")), "u"});
  prompt_ = tui::Prompt(std::string(tui::tr("Your answer? Enter accepts the highlighted one")), std::move(choices),
                        yes_proposed ? 0 : 1);
  prompt_.set_focused(true);
}

bool FlowchartView::tick(std::chrono::steady_clock::time_point now) {
  bool changed = false;
  if (poll_) {
    if (std::optional<FlowchartModel> next = poll_()) {
      set_model(std::move(*next));
      changed = true;
    }
  }
  if (progress_source_) {
    if (std::optional<flow::ProbeProgress> next = progress_source_()) {
      progress_ = std::move(next);
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
  return prompt_open() ? tui::KeyContext::kPrompt : tui::KeyContext::kNormal;
}

std::string FlowchartView::status_text() const {
  if (link_ && prompt_open())
    return tui::trf("Enter opens '{}'; left or right: back to the answer", links_[*link_].name);
  int64_t builds = 0, checks = 0;
  double seconds = 0;
  for (const flow::TriageStep& s : model_.path) {
    builds += s.builds;
    checks += s.checks;
    seconds += s.seconds;
  }
  // The running probe's time counts as it goes, so the line never stands still.
  std::string counts;
  if (model_.phase == TriagePhase::kProbing) {
    seconds += std::max(0.0, std::chrono::duration<double>(now_ - model_.started).count());
    if (progress_ && progress_->node == model_.current) counts = progress_counts(*progress_);
  }
  const std::string totals = tui::trf("step {}  {:.1f} s  {} build(s)  {} check(s)",
                                      model_.path.size() + (finished() ? 0 : 1), seconds, builds, checks);
  return counts.empty() ? totals : counts + "  " + totals;
}

unsigned FlowchartView::handle(tui::Action action) {
  if (confirm_cancel_) {
    // The confirmation takes the next key, whatever it is: x again cancels, any other withdraws it.
    confirm_cancel_ = false;
    if (action == tui::Action::kCancelJob && !finished() && on_cancel_) on_cancel_();
    return tui::kHandled | tui::kRedraw;
  }
  // Screens, help, the command line, back and quit stay the App's even while a question is open:
  // no key that leaves (Esc, q, Q) ever answers the question.
  const bool app_action = tui::screen_index(action).has_value() || action == tui::Action::kHelp ||
                          action == tui::Action::kCommandLine || action == tui::Action::kQuit ||
                          action == tui::Action::kRefresh || action == tui::Action::kNextPane ||
                          action == tui::Action::kPrevPane || action == tui::Action::kBack;
  if (app_action) return tui::kIgnored;
  if (const unsigned linked = handle_link(action); linked != tui::kIgnored) return linked;
  if (finished()) return tui::kIgnored;
  if (action == tui::Action::kCancelJob) {
    confirm_cancel_ = true;
    return tui::kHandled | tui::kRedraw;
  }
  if (!prompt_open()) return tui::kIgnored;
  const unsigned result = prompt_.handle(action);
  if (const auto& answer = prompt_.result()) {
    answered_ = true;
    if (*answer == tui::Action::kUndo) {
      on_undo_();
    } else if (on_answer_) {
      on_answer_(*answer == tui::Action::kYes);
    }
    return tui::kHandled | tui::kRedraw;
  }
  return result != tui::kIgnored ? result : tui::kHandled;
}

unsigned FlowchartView::handle_link(tui::Action action) {
  using tui::Action;
  if (links_.empty()) return tui::kIgnored;
  const size_t n = links_.size();
  if (action == Action::kUp || action == Action::kDown) {
    const bool down = action == Action::kDown;
    link_ = !link_ ? (down ? 0 : n - 1) : (down ? (*link_ + 1) % n : (*link_ + n - 1) % n);
    prompt_.set_focused(false);
    return tui::kHandled | tui::kRedraw;
  }
  if (!link_) return tui::kIgnored;
  if (action == Action::kEnter || action == Action::kAccept) {
    target_ = open_ ? open_(links_[*link_]) : std::string();
    return target_.empty() ? tui::kHandled : tui::kHandled | tui::kRedraw | tui::kSwitchView;
  }
  // The question takes the keys back: left and right only return to it, y and n answer it too.
  if (prompt_open() &&
      (action == Action::kLeft || action == Action::kRight || action == Action::kYes || action == Action::kNo)) {
    link_.reset();
    prompt_.set_focused(true);
    if (action == Action::kLeft || action == Action::kRight) return tui::kHandled | tui::kRedraw;
  }
  return tui::kIgnored;
}

int FlowchartView::draw_progress(tui::Canvas& canvas, tui::Rect area, int y, int bottom) const {
  if (!progress_ || progress_->node != model_.current) return y;
  const flow::ProbeProgress& p = *progress_;
  const tui::Glyphs& g = canvas.glyphs();
  // The stage, what it works on and the estimate; then the counts, with a bar when they have a total.
  std::string estimate;
  if (p.remaining) {
    estimate = p.at_most ? tui::trf("at most about {} left", duration_text(*p.remaining))
                         : tui::trf("about {} left", duration_text(*p.remaining));
  }
  if (y < bottom && !p.stage.empty()) {
    const std::string stage = std::string(tui::tr(p.stage)) + (estimate.empty() ? "" : " (" + estimate + ")") +
                              (p.item.empty() ? "" : ": " + p.item);
    canvas.put_text(area, area.x, y++, tui::truncate_to_width(stage, area.w, g.ellipsis));
  }
  const std::string counts = progress_counts(p);
  if (y >= bottom || counts.empty()) return y;
  if (p.total > 0) {
    tui::ProgressBar bar;
    bar.set(static_cast<double>(p.done) / static_cast<double>(p.total), counts);
    bar.draw(canvas, area.rows(y - area.y, 1));
  } else {
    canvas.put_text(area, area.x, y, tui::truncate_to_width(counts, area.w, g.ellipsis));
  }
  return y + 1;
}

namespace {

// The width the chart column wants: its heading and every node's mark, title and answer.
int chart_width_wanted(const FlowchartModel& m) {
  int w = tui::display_width(tui::tr("Chart"));
  if (m.chart == nullptr) return w;
  for (const flow::FlowNode& node : m.chart->nodes) {
    const flow::TriageStep* visit = nullptr;
    for (const flow::TriageStep& s : m.path) {
      if (s.node == node.id) visit = &s;
    }
    const std::string answer = visit != nullptr ? answer_text(*visit) : std::string();
    w = std::max(w, 2 + tui::display_width(node.title) + (answer.empty() ? 0 : 1 + tui::display_width(answer)));
  }
  return w;
}

}  // namespace

void FlowchartView::draw_chart(tui::Canvas& canvas, tui::Rect area) const {
  const tui::Glyphs& g = canvas.glyphs();
  canvas.put_text(area, area.x, area.y, tui::truncate_to_width(tui::tr("Chart"), area.w, g.ellipsis), tui::ColorRole::kHeader);
  if (model_.chart == nullptr) return;
  int y = area.y + 1;
  const int bottom = area.y + area.h;
  for (const flow::FlowNode& node : model_.chart->nodes) {
    if (y >= bottom) break;
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
    // The title wraps under itself (two columns in) instead of being cut; the answer goes at the
    // end of its last row, or on a row of its own when that row is full.
    std::vector<std::string> lines = tui::wrap_text(node.title, std::max(1, area.w - 2));
    const std::string answer = visit != nullptr ? answer_text(*visit) : std::string();
    const int answer_w = answer.empty() ? 0 : tui::display_width(answer);
    for (size_t i = 0; i < lines.size() && y < bottom; ++i, ++y) {
      canvas.put_text(area, area.x, y, (i == 0 ? std::string(mark) : std::string(" ")) + " " + lines[i], role);
    }
    if (!answer.empty() && y - 1 >= area.y + 1) {
      const int last_w = 2 + tui::display_width(lines.back());
      const bool fits = last_w + 1 + answer_w <= area.w;
      if (!fits && y < bottom) ++y;
      if (fits || y - 1 < bottom) {
        canvas.put_text(area, area.x + area.w - answer_w, y - 1, answer,
                        visit->overridden ? tui::ColorRole::kWarning : tui::ColorRole::kDefault);
      }
    }
  }
}

void FlowchartView::draw_current(tui::Canvas& canvas, tui::Rect area) const {
  if (area.empty()) return;
  const tui::Glyphs& g = canvas.glyphs();
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
      header(tui::trf("Running the probe ({} s): {}", seconds, node ? node->title : model_.current),
             tui::ColorRole::kHeader);
      y = draw_progress(canvas, area, y, bottom - 1);
      if (node != nullptr) {
        if (node->kind == flow::NodeKind::kQuestion) {
          y = put_wrapped(canvas, area, y, bottom - 1, node->question, tui::ColorRole::kDefault);
        }
        y = put_wrapped(canvas, area, y, bottom - 1, node->text, tui::ColorRole::kDim);
      }
      if (y < bottom) canvas.put_text(area, area.x, bottom - 1, tui::tr("x cancels the triage"), tui::ColorRole::kDim);
      break;
    }
    case TriagePhase::kAsking: {
      const int prompt_rows = area.h >= kPromptRows + 3 ? kPromptRows : std::min(area.h, 2);
      const int text_bottom = bottom - prompt_rows;
      header(node ? node->title : model_.current, tui::ColorRole::kHeader);
      if (!model_.undone.empty()) {
        std::string steps;
        for (const flow::TriageStep& s : model_.undone) {
          const flow::FlowNode* n = model_.chart != nullptr ? model_.chart->find(s.node) : nullptr;
          const std::string answer = answer_text(s);
          steps += fmt::format("{}{}{}", steps.empty() ? "" : ", ", n ? n->title : s.node,
                               answer.empty() ? "" : fmt::format(" {} {}", g.arrow_right, answer));
        }
        y = put_wrapped(canvas, area, y, text_bottom, tui::trf("Undone: {}. Answer again:", steps),
                        tui::ColorRole::kWarning);
      }
      if (node != nullptr) y = put_wrapped(canvas, area, y, text_bottom, node->question, tui::ColorRole::kDefault);
      if (model_.proposed && node != nullptr && y < text_bottom) {
        const flow::TriageStep& p = *model_.proposed;
        const bool yes = p.answer.value_or(true);
        const std::string proposal = tui::trf("Proposed answer: {}", yes ? node->yes.label : node->no.label);
        // The proposal matters more than the details: keep rows for it below the evidence.
        const int proposal_rows = static_cast<int>(tui::wrap_text(proposal, area.w).size());
        const int evidence_bottom = std::max(y, text_bottom - proposal_rows);
        if (y < evidence_bottom) {
          // Evidence asked again after an undo is the probe's from before it (no probe ran again).
          const std::string heading = !model_.undone.empty() || p.redone
                                          ? tui::trf("Evidence ({:.2f} s, probed before the undo)", p.seconds)
                                          : tui::trf("Evidence ({:.2f} s)", p.seconds);
          canvas.put_text(area, area.x, y++, tui::truncate_to_width(heading, area.w, g.ellipsis),
                          tui::ColorRole::kHeader);
        }
        y = put_wrapped(canvas, area, y, evidence_bottom, p.summary, tui::ColorRole::kDefault);
        // Lines that cite a layer or a node are links (accent), the selected one highlighted.
        for (const auto& [line, link] : evidence_shown()) {
          if (y >= evidence_bottom) break;
          const std::optional<size_t> index = link ? link_index(*link) : std::nullopt;
          const tui::ColorRole role = index && index == link_ ? tui::ColorRole::kSelection
                                      : index                 ? tui::ColorRole::kAccent
                                                              : tui::ColorRole::kDim;
          canvas.put_text(area, area.x, y++, "  " + tui::truncate_to_width(line, area.w - 2, g.ellipsis), role);
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
      header(at_end ? node->title : std::string(tui::tr("Triage ended")),
             model_.outcome == "localized" ? tui::ColorRole::kError : tui::ColorRole::kOk);
      header(tui::trf("Outcome: {}", tui::tr_data(model_.outcome)), tui::ColorRole::kHeader);
      if (!model_.culprit.empty()) {
        header(tui::trf("Culprit: {}", model_.culprit), link_ ? tui::ColorRole::kSelection : tui::ColorRole::kDefault);
      }
      if (!model_.bundle.empty()) {
        y = put_wrapped(canvas, area, y, bottom, tui::trf("Bug-report bundle: {}", model_.bundle), tui::ColorRole::kOk);
      }
      if (at_end) {
        y = put_wrapped(canvas, area, y, std::max(y, bottom - 1), node->text, tui::ColorRole::kDim);
      }
      if (y < bottom) {
        canvas.put_text(
            area, area.x, bottom - 1,
            tui::truncate_to_width(links_.empty() ? tui::tr("q quits") : tui::tr("Enter opens the culprit; q quits"),
                                   area.w, g.ellipsis),
            tui::ColorRole::kDim);
      }
      break;
    }
    case TriagePhase::kFailed:
    case TriagePhase::kCancelled:
      header(tui::tr(model_.phase == TriagePhase::kFailed ? "Triage failed" : "Triage cancelled"), tui::ColorRole::kError);
      y = put_wrapped(canvas, area, y, bottom - 1, model_.error, tui::ColorRole::kDefault);
      if (y < bottom) canvas.put_text(area, area.x, bottom - 1, tui::tr("q quits"), tui::ColorRole::kDim);
      break;
  }
}

void FlowchartView::draw_path(tui::Canvas& canvas, tui::Rect area) const {
  if (area.empty()) return;
  const tui::Glyphs& g = canvas.glyphs();
  // Costs in three right-aligned columns; the step's title and answer take what is left.
  const int cost_w = area.w >= 40 ? 3 * kCostColumn : 0;
  const int name_w = area.w - cost_w;
  canvas.put_text(area, area.x, area.y, tui::fit_to_width(tui::tr("Path so far"), name_w, tui::Align::kLeft, g.ellipsis),
                  tui::ColorRole::kHeader);
  if (cost_w > 0) {
    const std::string columns = tui::fit_to_width(tui::tr("time s"), kCostColumn, tui::Align::kRight) +
                                tui::fit_to_width(tui::tr("builds"), kCostColumn, tui::Align::kRight) +
                                tui::fit_to_width(tui::tr("checks"), kCostColumn, tui::Align::kRight);
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
    const std::string answer = answer_text(s);
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
    const int chart_w = std::clamp(chart_width_wanted(model_), kChartMinWidth, area_.w * 2 / 5);
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
  if (confirm_cancel_) {
    tui::Prompt notice(std::string(tui::tr("Cancel the triage? Press x again to cancel it; any other key goes on")), {});
    notice.draw(canvas, area_);
  }
}

}  // namespace vn::views
