// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/triage_tui.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "core/session/answer.h"
#include "core/session/job.h"
#include "tui/app.h"
#include "tui/cli/browser.h"
#include "tui/cli/ui_options.h"
#include "tui/curses_terminal.h"
#include "tui/i18n.h"
#include "views/screens/flowchart_view.h"
#include "views/screens/help_view.h"
#include "views/screens/log_view.h"
#include "views/screens/screens.h"
#include "views/screens/tactics_view.h"
#include "views/screens/triage_cockpit.h"

namespace vn::cli {
namespace {

using TriageJob = session::Job<flow::TriageResult>;

// What the triage (worker thread) and the screens (UI thread) share.
class TriageScreenState {
 public:
  TriageScreenState(std::shared_ptr<const flow::Flowchart> chart, std::filesystem::path workdir)
      : workdir_(std::move(workdir)) {
    model_.chart = std::move(chart);
    model_.current = model_.chart->start;
    model_.started = std::chrono::steady_clock::now();
  }

  // Worker: a node was answered; the walk goes on to the node it leads to.
  void observe(const flow::TriageStep& step, const flow::FlowNode& node, session::JobContext& ctx) {
    const std::string answer = step.answer ? (*step.answer ? " -> yes" : " -> no") : "";
    ctx.log(fmt::format("{}{}{}{}: {}", node.title, answer, step.overridden ? " (your answer)" : "",
                        step.redone ? " (taken again: probed before the undo)" : "", step.summary));
    if (node.kind != flow::NodeKind::kEnd) {
      ctx.log(fmt::format("  {:.2f} s, {} engine build(s), {} check(s)", step.seconds, step.builds, step.checks));
    }
    std::string next = node.id;
    if (node.kind == flow::NodeKind::kStep) next = node.next;
    if (node.kind == flow::NodeKind::kQuestion && step.answer) next = *step.answer ? node.yes.next : node.no.next;
    std::lock_guard<std::mutex> lock(mutex_);
    model_.path.push_back(step);
    model_.proposed.reset();
    model_.undone.clear();
    model_.current = next;
    model_.phase = views::TriagePhase::kProbing;
    model_.started = std::chrono::steady_clock::now();
    ++version_;
  }

  // Worker: the walk went back to the first step of `undo`, which it asks again.
  void undone(const flow::TriageUndo& undo, const flow::Flowchart& chart, session::JobContext& ctx) {
    std::string steps;
    for (const flow::TriageStep& s : undo.undone) {
      const flow::FlowNode* n = chart.find(s.node);
      steps += fmt::format("{}{}{}{}", steps.empty() ? "" : ", ", n ? n->title : s.node,
                           s.answer ? (*s.answer ? " -> yes" : " -> no") : "", s.overridden ? " (your answer)" : "");
    }
    const flow::FlowNode* at = chart.find(undo.at);
    ctx.log(
        fmt::format("Undone at {}: {}; the first is asked again with its evidence", at ? at->title : undo.at, steps));
    std::lock_guard<std::mutex> lock(mutex_);
    model_.path.resize(model_.path.size() - std::min(model_.path.size(), undo.undone.size()));
    model_.undone = undo.undone;
    model_.proposed.reset();
    model_.phase = views::TriagePhase::kProbing;
    ++version_;
  }

  // Worker: shows the proposal and waits for the user's answer; the proposal when cancelled.
  flow::Decision decide(const flow::FlowNode& node, const flow::TriageStep& proposed, session::JobContext& ctx) {
    const bool proposal = proposed.answer.value_or(true);
    ctx.log(fmt::format("{}: proposed {} ({}){}", node.question, proposal ? "yes" : "no", proposed.summary,
                        proposed.redone ? " (probed before the undo)" : ""));
    // The intermittency probe sorted its builds into good and bad ones: the Tactics screen can
    // compare them while the user judges the question.
    std::optional<views::TacticsModel> tactics;
    if (node.probe == "intermittent") tactics = load_tactics();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (tactics) tactics_ = std::move(tactics);
      model_.current = node.id;
      model_.proposed = proposed;
      model_.phase = views::TriagePhase::kAsking;
      ++model_.asked;
      ++version_;
    }
    const std::optional<flow::Decision> answer = box_.wait(*ctx.cancel_flag());
    std::lock_guard<std::mutex> lock(mutex_);
    model_.phase = views::TriagePhase::kProbing;
    ++version_;
    return answer.value_or(proposal ? flow::Decision::kYes : flow::Decision::kNo);
  }

  // UI: the job ended.
  void finish(const TriageJob& job) {
    const auto progress = job.progress();
    const auto result = job.result();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!model_.path.empty()) model_.current = model_.path.back().node;
    if (result != nullptr) {
      model_.phase = views::TriagePhase::kDone;
      model_.outcome = result->outcome;
      model_.culprit = result->culprit;
      model_.bundle = result->bundle.string();
    } else {
      model_.phase = progress->state == session::JobState::kCancelled ? views::TriagePhase::kCancelled
                                                                       : views::TriagePhase::kFailed;
      model_.error = progress->status.message();
    }
    ++version_;
  }

  // UI: the model when it changed since the last call.
  std::optional<views::FlowchartModel> poll() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (seen_ == version_) return std::nullopt;
    seen_ = version_;
    return model_;
  }
  // UI: the Tactics screen's model, once, when the builds were mixed.
  std::optional<views::TacticsModel> take_tactics() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<views::TacticsModel> t = std::move(tactics_);
    tactics_.reset();
    return t;
  }
  // UI: the user's answer, or an undo.
  void answer(bool yes) { box_.post(yes ? flow::Decision::kYes : flow::Decision::kNo); }
  void undo() { box_.post(flow::Decision::kUndo); }

 private:
  // The builds' replays as the intermittency probe sorted them; nothing unless some builds passed
  // and some failed (one side alone has nothing to compare with).
  std::optional<views::TacticsModel> load_tactics() const {
    Result<std::vector<debug::ReplayChoices>> good = debug::load_tactic_replays(workdir_ / "builds" / "good");
    Result<std::vector<debug::ReplayChoices>> bad = debug::load_tactic_replays(workdir_ / "builds" / "bad");
    if (!good.ok() || !bad.ok() || good->empty() || bad->empty()) return std::nullopt;
    return views::tactics_model(*good, *bad);
  }

  const std::filesystem::path workdir_;
  std::mutex mutex_;
  views::FlowchartModel model_;
  std::optional<views::TacticsModel> tactics_;
  uint64_t version_ = 1;
  uint64_t seen_ = 0;
  session::AnswerBox<flow::Decision> box_;
};

// The full-screen walk. The terminal is already open.
Result<flow::TriageResult> triage_screen(tui::CursesTerminal& terminal, const flow::Flowchart& chart,
                                         flow::TriageConfig config) {
  auto state = std::make_shared<TriageScreenState>(std::make_shared<const flow::Flowchart>(chart), config.workdir);
  // The Graph, Layers, Tensor and Reduce screens, fed by the walk's watch.
  views::TriageCockpit cockpit;
  config.watch = cockpit.watch();
  auto job = TriageJob::start([state, &chart, config = std::move(config)](session::JobContext& ctx) mutable {
    config.watch.extract = [extract = std::move(config.watch.extract), &ctx](const flow::ExtractWatch& e) {
      extract(e);
      ctx.log(fmt::format("Extracted '{}': {} alone ({})", e.layer, e.verdict == "bad" ? "fails" : "passes", e.reason));
    };
    config.decide = [state, &ctx](const flow::FlowNode& node, const flow::TriageStep& proposed) {
      return state->decide(node, proposed, ctx);
    };
    config.on_undo = [state, &chart, &ctx](const flow::TriageUndo& undo) { state->undone(undo, chart, ctx); };
    auto observe = [state, &ctx](const flow::TriageStep& step, const flow::FlowNode& node) {
      state->observe(step, node, ctx);
    };
    return flow::triage_headless(chart, std::move(config), observe, ctx.cancel_flag());
  });
  {
    TriageJob& running = *job;
    // Quitting before the end cancels the walk: the App asks first, with keys no question uses.
    tui::App app(terminal, app_options([&running] {
                   return running.progress()->state == session::JobState::kRunning
                              ? std::string(tui::tr("Quitting cancels the triage"))
                              : std::string();
                 }));
    app.set_screen_catalog(views::screen_ids());
    app.set_absent_screen_message(views::triage_absent_screen);
    auto& flowchart = static_cast<views::FlowchartView&>(app.add_view(
        std::make_unique<views::FlowchartView>([state](bool yes) { state->answer(yes); },
                                               [state] { return state->poll(); }, [&running] { running.cancel(); })));
    flowchart.set_progress_source([&cockpit] { return cockpit.take_progress(); });
    flowchart.set_open([&cockpit](const views::EvidenceLink& link) { return cockpit.open(link); });
    flowchart.set_undo([state] { state->undo(); });
    cockpit.add_screens(app);
    app.add_view(std::make_unique<views::LogView>([&running] { return running.progress(); }));
    app.add_view(std::make_unique<views::HelpView>([&app] { return app.help_document(); }));
    bool ended = false;
    while (!app.quit_requested()) {
      app.run(1);
      cockpit.pump(app);
      if (!ended && job->progress()->state != session::JobState::kRunning) {
        ended = true;
        state->finish(*job);
      }
      if (std::optional<views::TacticsModel> tactics = state->take_tactics()) {
        auto view = std::make_unique<views::TacticsView>();
        view->set_model(std::move(*tactics));
        app.add_view(std::move(view));
      }
    }
  }
  // Quitting before the end cancels the walk (a question waiting for an answer gives up too).
  job->cancel();
  job->wait();
  if (auto result = job->result()) return *result;
  return job->progress()->status;
}

}  // namespace

Result<flow::TriageResult> walk_triage(const flow::Flowchart& chart, flow::TriageConfig config,
                                       const flow::TriageObserver& observe, bool headless,
                                       const std::atomic<bool>* cancel) {
  if (headless) return flow::triage_headless(chart, std::move(config), observe, cancel);
  if (!on_terminal()) {
    if (isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0) {
      const char* term = std::getenv("TERM");
      fmt::print("[I] This terminal (TERM={}) cannot show the full-screen triage; walking the flowchart headless\n",
                 term != nullptr ? term : "");
    }
    return flow::triage_headless(chart, std::move(config), observe, cancel);
  }
  std::string error;
  std::unique_ptr<tui::CursesTerminal> terminal = tui::CursesTerminal::open({}, error);
  if (!terminal) {
    fmt::print("[I] {}; walking the flowchart headless\n", error);
    std::fflush(stdout);
    return flow::triage_headless(chart, std::move(config), observe, cancel);
  }
  // The screens speak the chart's language.
  tui::set_language(tui::language_from_code(chart.lang).value_or(tui::Language::kEnglish));
  Result<flow::TriageResult> result = triage_screen(*terminal, chart, std::move(config));
  const int signal = terminal->caught_signal();
  terminal->close();
  if (signal != 0) std::raise(signal);
  if (result.ok() && observe) {
    for (const flow::TriageStep& step : result->path) {
      if (const flow::FlowNode* node = chart.find(step.node)) observe(step, *node);
    }
  }
  return result;
}

}  // namespace vn::cli
