// SPDX-License-Identifier: Apache-2.0
// A `debug reduce` session: a model prepared for reduction, the debug replay it resumes from, and
// the search run to its end with one check per candidate (the built-in check, an external command,
// or the user's good/bad answer), every verdict saved to the replay as it comes, the iteration
// artifacts written and sorted, and the minimal failing model (and --min-good) written. The
// session prints nothing: what the user sees comes through ReduceHooks.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/artifacts.h"
#include "core/debug/builtin_check.h"
#include "core/debug/check.h"
#include "core/debug/reduce.h"
#include "core/debug/replay.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

/// The user's answer to "does this candidate fail?" in an interactive session.
enum class ReduceAnswer { kGood, kBad, kSkip, kUndo, kQuit };

/// What the session asks the user about one candidate; the candidate and its inputs are on disk
/// (ReduceSessionConfig::iter_artifact and inputs_artifact() of it) when the question comes.
struct ReduceQuestion {
  const ReduceCandidate& candidate;
  /// Reducer::describe of the candidate ("2 nodes: conv3 (Conv), ...").
  std::string description;
  /// One label per node of the candidate: "name (OpType)".
  std::vector<std::string> labels;
  /// Iterations in the replay so far (the candidate is number checks + 1).
  int64_t checks = 0;
  /// Set while the search runs under ReduceHooks::run with a cancel flag: an answer that waits
  /// should give up (kQuit) once it is set.
  const std::atomic<bool>* cancel = nullptr;
};

/// How the session checks candidates and what it writes. Exactly one way of checking: `builtin`,
/// else `external`, else the user's answer (ReduceHooks::ask).
struct ReduceSessionConfig {
  ReduceOptions options;
  /// The in-process check: the engine built as it says against the reference, with its
  /// tolerances as given (no preset is applied here).
  std::optional<BuiltinCheck> builtin;
  /// An external command (`--check`) run for every candidate.
  std::optional<ExternalChecker> external;
  /// Where each candidate is written before its check (with its feeds at inputs_artifact() of it
  /// for external and interactive checks), and removed after it. The built-in check writes it only
  /// when `artifacts` are sorted. The caller decides whether an existing file may be overwritten.
  std::filesystem::path iter_artifact = "vernier_debug.onnx";
  /// Files moved into `artifacts_dir`/good, bad or unresolved after every check.
  std::vector<std::filesystem::path> artifacts;
  std::filesystem::path artifacts_dir = "vernier_artifacts";
  /// The debug replay, rewritten after every check; `<stem>_skip_current<ext>` beside it is
  /// written before each check with that iteration unresolved (skip_current_path) and removed
  /// after it.
  std::filesystem::path save_replay = "vernier_debug_replay.json";
  /// Where the minimal failing model is written; empty: not written.
  std::filesystem::path output;
  /// Where a passing model close in size to the minimal one is written; empty: not written.
  std::filesystem::path min_good;
};

/// What the caller sees of a session while it runs. Every hook is optional but `ask`, which an
/// interactive session (no built-in or external check) needs.
struct ReduceHooks {
  /// Interactive sessions: the good/bad question about one candidate.
  std::function<ReduceAnswer(const ReduceQuestion& question)> ask;
  /// An external check ended (its process output is in the result), before its artifacts are sorted.
  std::function<void(const CheckResult& result)> on_check_output;
  /// The artifacts sorted after a check, with any that could not be moved.
  std::function<void(const std::vector<SortedArtifact>& sorted)> on_sorted;
  /// After every check, and every iteration taken from the replay, once the replay is saved.
  std::function<void(const ReduceIteration& iteration, const ReduceProgress& progress)> on_iteration;
  /// Before each run of the search: the first, and again after every undo (the answers kept are
  /// replayed and reported through on_iteration anew).
  std::function<void()> on_search_start;
  /// An undo forgot the iteration `key` (the last one answered) before the search runs again.
  std::function<void(const std::string& key)> on_undo;
  /// Runs `search` (for example on a UI's worker thread, with its cancel flag) and returns its
  /// result; unset, the search runs on the calling thread with no cancel flag.
  using Search = std::function<Result<ReduceResult>(const std::atomic<bool>* cancel)>;
  std::function<Result<ReduceResult>(const Search& search)> run;
};

/// How a session ended.
struct ReduceSessionResult {
  /// The user quit (kQuit): nothing was reduced; every answer is in the saved replay and the
  /// iteration artifact is removed. The fields below are then unset.
  bool quit = false;
  /// Iterations in the saved replay at the end.
  int64_t answers = 0;
  ReduceResult reduce;
  /// Reducer::describe of the minimal failing candidate.
  std::string minimal;
  int64_t total_nodes = 0;
  /// Wall time of the search (replayed iterations cost nothing).
  double seconds = 0;
  /// Whether `output` and `min_good` were written. When a write failed, `saved` holds its error
  /// and nothing after it was written (output is written first); min_good is not written when no
  /// candidate passed.
  bool saved_output = false;
  bool saved_min_good = false;
  Status saved;
  /// A bisect result of several nodes that is still a quarter of the model or more: ddmin (or
  /// linear) on the result may reduce it further.
  bool might_reduce_further = false;
};

/// "<stem>_inputs.json" beside `model_artifact`: the candidate's feeds as a Polygraphy feed list,
/// so an external check can run the candidate on the reference values of its inputs.
std::filesystem::path inputs_artifact(const std::filesystem::path& model_artifact);

/// A model prepared for reduction with the replay it resumes from.
class ReduceSession {
 public:
  /// Prepares `model` for reduction: the reference run of every tensor on every feed
  /// (Reducer::create). Errors: the reducer's.
  static Result<ReduceSession> open(Model model, std::vector<TensorMap> feeds, int threads);

  /// Resumes from the debug replay at `path`: the iterations recorded there are not checked
  /// again. Errors: the replay's (kIoError).
  Status load_replay(const std::filesystem::path& path);

  const Reducer& reducer() const { return reducer_; }
  /// Iterations in the replay (read by load_replay before run()).
  int64_t loaded() const { return static_cast<int64_t>(replay_.size()); }

  /// Runs the search to its end. An undo answer forgets the last answer and runs the search again
  /// (the answers before it replay at once). Errors: the checks' and the search's, kIoError when
  /// the replay or an artifact cannot be written, kInvalidArgument when no candidate failed (the
  /// check is wrong, or the model does not fail it); a quit is a result, not an error.
  Result<ReduceSessionResult> run(const ReduceSessionConfig& config, const ReduceHooks& hooks);

 private:
  explicit ReduceSession(Reducer reducer) : reducer_(std::move(reducer)) {}

  Reducer reducer_;
  DebugReplay replay_;
};

}  // namespace vn::debug
