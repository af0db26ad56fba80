// SPDX-License-Identifier: Apache-2.0
#include "core/debug/reduce_session.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"

namespace vn::debug {
namespace {

Status write_candidate(const Reducer& reducer, const ReduceCandidate& candidate, const std::filesystem::path& path,
                       bool with_inputs) {
  VN_ASSIGN_OR_RETURN(Model model, reducer.build_model(candidate));
  VN_RETURN_IF_ERROR(save_model(model, path));
  if (with_inputs) VN_RETURN_IF_ERROR(io::save_feed_list(reducer.build_feeds(candidate), inputs_artifact(path)));
  return Status::OK();
}

void remove_candidate(const std::filesystem::path& iter_artifact) {
  std::error_code ec;
  std::filesystem::remove(iter_artifact, ec);
  std::filesystem::remove(inputs_artifact(iter_artifact), ec);
}

// Why the search stopped early at the user's request.
enum class Stop { kNone, kUndo, kQuit };

// The verdict of an answer; nullopt for undo and quit, which stop the search.
std::optional<CheckResult> answered(ReduceAnswer answer) {
  CheckResult result;
  switch (answer) {
    case ReduceAnswer::kGood:
      result.verdict = Verdict::kGood;
      result.reason = "answered good";
      return result;
    case ReduceAnswer::kBad:
      result.verdict = Verdict::kBad;
      result.reason = "answered bad";
      return result;
    case ReduceAnswer::kSkip:
      result.verdict = Verdict::kUnresolved;
      result.reason = "skipped";
      return result;
    case ReduceAnswer::kUndo:
    case ReduceAnswer::kQuit:
      break;
  }
  return std::nullopt;
}

}  // namespace

std::filesystem::path inputs_artifact(const std::filesystem::path& model_artifact) {
  std::filesystem::path p = model_artifact;
  p.replace_filename(model_artifact.stem().string() + "_inputs.json");
  return p;
}

Result<ReduceSession> ReduceSession::open(Model model, std::vector<TensorMap> feeds, int threads) {
  VN_ASSIGN_OR_RETURN(Reducer reducer, Reducer::create(std::move(model), std::move(feeds), threads));
  return ReduceSession(std::move(reducer));
}

Status ReduceSession::load_replay(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(replay_, DebugReplay::load(path));
  return Status::OK();
}

Result<ReduceSessionResult> ReduceSession::run(const ReduceSessionConfig& config, const ReduceHooks& hooks) {
  const bool builtin = config.builtin.has_value();
  const bool external = !builtin && config.external.has_value();
  VN_CHECK(builtin || external || hooks.ask != nullptr, "an interactive reduce session needs an ask hook");
  const bool write_artifact = !builtin || !config.artifacts.empty();
  const ArtifactSorter sorter(config.artifacts_dir, config.artifacts);
  DebugReplay& replay = replay_;
  Stop stop = Stop::kNone;
  const std::atomic<bool>* cancel = nullptr;

  ReduceOracle oracle = [&](const ReduceCandidate& candidate, const std::string& key) -> Result<CheckResult> {
    // A replay with this iteration unresolved, for resuming past a check that brings Vernier down.
    DebugReplay skip = replay;
    skip.record(key, ReplayEntry{{{"num_nodes", candidate.nodes.size()}}, 0, Verdict::kUnresolved, "interrupted"});
    VN_RETURN_IF_ERROR(skip.save(skip_current_path(config.save_replay)));
    if (write_artifact) VN_RETURN_IF_ERROR(write_candidate(reducer_, candidate, config.iter_artifact, !builtin));
    CheckResult result;
    if (builtin) {
      VN_ASSIGN_OR_RETURN(Model candidate_model, reducer_.build_model(candidate));
      const std::vector<TensorMap> expected = reducer_.reference_outputs(candidate);
      VN_ASSIGN_OR_RETURN(BuiltinCheckDetail detail, run_builtin_check(candidate_model, reducer_.build_feeds(candidate),
                                                                       *config.builtin, &expected));
      result = std::move(detail.result);
    } else if (external) {
      VN_ASSIGN_OR_RETURN(result, config.external->run());
      if (hooks.on_check_output) hooks.on_check_output(result);
    } else {
      std::vector<std::string> labels;
      const Graph& graph = reducer_.model().graph;
      for (int64_t n : candidate.nodes) {
        labels.push_back(node_label(graph, n) + " (" + graph.nodes[static_cast<size_t>(n)].op_type + ")");
      }
      const ReduceAnswer answer = hooks.ask(ReduceQuestion{candidate, reducer_.describe(candidate), std::move(labels),
                                                           static_cast<int64_t>(replay.size()), cancel});
      const std::optional<CheckResult> verdict = answered(answer);
      if (!verdict) {
        stop = answer == ReduceAnswer::kUndo ? Stop::kUndo : Stop::kQuit;
        return Status(StatusCode::kCancelled, answer == ReduceAnswer::kUndo ? "undo" : "quit");
      }
      result = *verdict;
    }
    if (!sorter.empty()) {
      const size_t underscore = key.find('_', 2);
      const std::string suffix = underscore == std::string::npos ? "" : key.substr(underscore + 1);
      VN_ASSIGN_OR_RETURN(auto sorted, sorter.sort(static_cast<int64_t>(replay.size()), result.verdict, suffix));
      if (hooks.on_sorted) hooks.on_sorted(sorted);
    }
    if (write_artifact) remove_candidate(config.iter_artifact);
    return result;
  };

  // The keys answered in this session, in the order they were answered, over every run of the
  // search (an undo starts a new one, which replays the answers kept without asking them again):
  // each undo takes back the last one still in the replay, so undos go back one answer at a time
  // to the first.
  std::vector<std::string> answered;
  ReduceObserver observe = [&](const ReduceIteration& it, const ReduceProgress& progress) -> Status {
    if (!it.replayed) answered.push_back(it.key);
    VN_RETURN_IF_ERROR(replay.save(config.save_replay));
    std::error_code ec;
    std::filesystem::remove(skip_current_path(config.save_replay), ec);
    if (hooks.on_iteration) hooks.on_iteration(it, progress);
    return Status::OK();
  };

  const auto start = std::chrono::steady_clock::now();
  const ReduceHooks::Search search = [&](const std::atomic<bool>* cancel_flag) -> Result<ReduceResult> {
    cancel = cancel_flag;
    Result<ReduceResult> result = Status(StatusCode::kInternal, "not run");
    for (;;) {
      stop = Stop::kNone;
      if (hooks.on_search_start) hooks.on_search_start();
      result = reducer_.reduce(config.options, replay, oracle, observe);
      if (stop != Stop::kUndo) break;
      // Undo: forget the last answer and run the search again; answers before it replay at once.
      // Past this session's answers, those of a loaded replay go, the latest iteration first.
      std::string last;
      while (last.empty() && !answered.empty()) {
        if (replay.find(answered.back()) != nullptr) last = answered.back();
        answered.pop_back();
      }
      if (last.empty()) {
        int64_t latest = -1;
        for (const auto& [key, entry] : replay.entries()) {
          if (entry.iteration > latest) {
            latest = entry.iteration;
            last = key;
          }
        }
      }
      if (!last.empty()) {
        replay.erase(last);
        if (hooks.on_undo) hooks.on_undo(last);
        VN_RETURN_IF_ERROR(replay.save(config.save_replay));
      }
    }
    return result;
  };
  Result<ReduceResult> searched = hooks.run ? hooks.run(search) : search(nullptr);

  ReduceSessionResult out;
  out.total_nodes = reducer_.node_count();
  out.answers = static_cast<int64_t>(replay.size());
  if (!searched.ok()) {
    if (stop != Stop::kQuit) return searched.status();
    remove_candidate(config.iter_artifact);
    out.quit = true;
    return out;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.reduce = std::move(*searched);
  if (!out.reduce.failed_any) {
    return make_error(StatusCode::kInvalidArgument,
                      "no candidate failed the check, so nothing was reduced; check that the full model fails it "
                      "(and, with --fail-regex, that the regex matches the failure)");
  }
  out.minimal = reducer_.describe(out.reduce.minimal);
  const size_t kept = out.reduce.minimal.nodes.size();
  out.might_reduce_further =
      config.options.mode == ReduceMode::kBisect && kept > 1 && kept * 4 >= static_cast<size_t>(reducer_.node_count());
  if (!config.output.empty()) {
    out.saved = write_candidate(reducer_, out.reduce.minimal, config.output, false);
    if (!out.saved.ok()) return out;
    out.saved_output = true;
  }
  if (!config.min_good.empty() && out.reduce.min_good) {
    out.saved = write_candidate(reducer_, *out.reduce.min_good, config.min_good, false);
    out.saved_min_good = out.saved.ok();
  }
  return out;
}

}  // namespace vn::debug
