// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/reduce_tui.h"

#include <csignal>

#include "tui/app.h"
#include "tui/cli/ui_options.h"
#include "tui/curses_terminal.h"
#include "tui/i18n.h"
#include "views/screens/help_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/screens.h"

namespace vn::cli {

ReduceScreenState::ReduceScreenState(int64_t total_nodes) {
  model_.total_nodes = total_nodes;
  model_.nodes_kept = total_nodes;
  model_.status = "reducing";
}

debug::ReduceAnswer ReduceScreenState::ask(const debug::ReduceCandidate& candidate, std::vector<std::string> labels,
                                           const std::atomic<bool>& cancel) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    model_.candidate = candidate.nodes;
    model_.candidate_labels = std::move(labels);
    model_.asking = true;
    ++version_;
  }
  const std::optional<debug::ReduceAnswer> a = box_.wait(cancel);
  std::lock_guard<std::mutex> lock(mutex_);
  model_.asking = false;
  ++version_;
  return a.value_or(debug::ReduceAnswer::kQuit);
}

void ReduceScreenState::record(const debug::ReduceIteration& iteration, const debug::ReduceProgress& progress) {
  std::lock_guard<std::mutex> lock(mutex_);
  model_.history.push_back(views::reduce_step(iteration));
  model_.phase = progress.phase;
  // The answers kept count as checks done: after an undo they replay without a check, and the
  // next question is the one after them.
  model_.checks_done = static_cast<int64_t>(model_.history.size());
  model_.checks_left = progress.checks_left;
  model_.nodes_kept = progress.nodes_kept;
  ++version_;
}

void ReduceScreenState::restart() {
  std::lock_guard<std::mutex> lock(mutex_);
  model_.history.clear();
  model_.checks_done = 0;
  ++version_;
}

std::optional<views::ReduceModel> ReduceScreenState::poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (seen_ == version_) return std::nullopt;
  seen_ = version_;
  return model_;
}

Result<debug::ReduceResult> run_reduce_screen(
    ReduceScreenState& state, std::function<Result<debug::ReduceResult>(session::JobContext&)> search) {
  VN_RETURN_IF_ERROR(set_ui_language(ui_options().lang));
  std::string error;
  std::unique_ptr<tui::CursesTerminal> terminal = tui::CursesTerminal::open({}, error);
  if (!terminal) return make_error(StatusCode::kInvalidArgument, "cannot open the terminal UI: {}", error);
  auto job = session::Job<debug::ReduceResult>::start(std::move(search));
  {
    // Quitting ends the reduction; the answers given so far stay in the debug replay.
    tui::App app(*terminal, app_options([&job] {
                   return job->progress()->state == session::JobState::kRunning
                              ? std::string(tui::tr("Quitting ends the reduction (the replay keeps the answers)"))
                              : std::string();
                 }));
    app.set_screen_catalog(views::screen_ids());
    auto on_answer = [&state](tui::Action a) {
      state.answer(a == tui::Action::kGood   ? debug::ReduceAnswer::kGood
                   : a == tui::Action::kBad  ? debug::ReduceAnswer::kBad
                   : a == tui::Action::kSkip ? debug::ReduceAnswer::kSkip
                                             : debug::ReduceAnswer::kUndo);
    };
    app.add_view(std::make_unique<views::ReduceView>(on_answer, [&state] { return state.poll(); }));
    app.add_view(std::make_unique<views::HelpView>([&app] { return app.help_document(); }));
    while (!app.quit_requested() && job->progress()->state == session::JobState::kRunning) app.run(1);
    // Leaving the screen early (Q, a signal) quits the reduction as the prompt's quit would.
    if (job->progress()->state == session::JobState::kRunning) state.answer(debug::ReduceAnswer::kQuit);
  }
  job->wait();
  const int signal = terminal->caught_signal();
  terminal->close();
  if (signal != 0) std::raise(signal);
  if (auto result = job->result()) return *result;
  return job->progress()->status;
}

}  // namespace vn::cli
