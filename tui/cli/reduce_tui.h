// SPDX-License-Identifier: Apache-2.0
// `debug reduce --tui`: the interactive good/bad questions on the full-screen Reduce screen while
// the reduction runs on a session job.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/debug/reduce_session.h"
#include "core/session/answer.h"
#include "core/session/job.h"
#include "views/screens/models.h"

namespace vn::cli {

/// The state the reduction (worker thread) and the Reduce screen (UI thread) share.
class ReduceScreenState {
 public:
  explicit ReduceScreenState(int64_t total_nodes);

  /// Worker: shows the question about `candidate` and waits for the answer; kQuit when the job
  /// is cancelled.
  debug::ReduceAnswer ask(const debug::ReduceCandidate& candidate, std::vector<std::string> labels,
                          const std::atomic<bool>& cancel);
  /// Worker: records a finished check.
  void record(const debug::ReduceIteration& iteration, const debug::ReduceProgress& progress);
  /// Worker: clears the history before the search runs again after an undo (the answers kept
  /// replay and are recorded anew).
  void restart();

  /// UI: the model when it changed since the last call.
  std::optional<views::ReduceModel> poll();
  /// UI: delivers an answer.
  void answer(debug::ReduceAnswer a) { box_.post(a); }

 private:
  std::mutex mutex_;
  views::ReduceModel model_;
  uint64_t version_ = 1;
  uint64_t seen_ = 0;
  session::AnswerBox<debug::ReduceAnswer> box_;
};

/// Runs `search` (the reduction) on a session job while the Reduce screen shows `state` and
/// asks its questions; returns the search's result once it ended, or the UI's error.
Result<debug::ReduceResult> run_reduce_screen(ReduceScreenState& state,
                                              std::function<Result<debug::ReduceResult>(session::JobContext&)> search);

}  // namespace vn::cli
