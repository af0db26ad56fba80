// SPDX-License-Identifier: Apache-2.0
// `vernier debug reduce`: shrinks a failing model to a minimal failing subgraph, checking every
// candidate with the built-in check, an external --check, or by asking the user good/bad.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "core/common/paths.h"
#include "core/debug/builtin_check.h"
#include "core/debug/reduce.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/browser.h"
#include "tui/cli/commands.h"
#include "tui/cli/debug_options.h"
#include "tui/cli/options.h"
#include "tui/cli/reduce_tui.h"

namespace vn::cli {
namespace {

struct ReduceArgs {
  std::string model;
  std::string output;
  std::string min_good;
  std::string mode = "bisect";
  bool no_reduce_inputs = false;
  bool no_reduce_outputs = false;
  std::string iter_artifact = "vernier_debug.onnx";
  bool builtin_check = false;
  bool no_progress = false;
  bool force = false;
  bool tui = false;
  int threads = 0;
  DataOptions data;
  CompareOptions compare;
  EngineOptions engine;
  CheckOptions check;
  ArtifactOptions artifacts;
  ReplayOptions replay;
};

// The feeds of a candidate as a Polygraphy feed list beside the iteration artifact, so an external
// check can run the candidate on the reference values of its inputs (`--load-inputs`).
std::filesystem::path inputs_artifact(const std::filesystem::path& model_artifact) {
  std::filesystem::path p = model_artifact;
  p.replace_filename(model_artifact.stem().string() + "_inputs.json");
  return p;
}

Status write_candidate(const debug::Reducer& reducer, const debug::ReduceCandidate& candidate,
                       const std::filesystem::path& path, bool with_inputs) {
  VN_ASSIGN_OR_RETURN(Model model, reducer.build_model(candidate));
  VN_RETURN_IF_ERROR(save_model(model, path));
  if (with_inputs) VN_RETURN_IF_ERROR(io::save_feed_list(reducer.build_feeds(candidate), inputs_artifact(path)));
  return Status::OK();
}

// Good/bad answers typed by the user. On a terminal with readline (history, editing); otherwise
// plain lines from stdin, so the session can be scripted.
class Interactive {
 public:
  enum class Answer { kGood, kBad, kSkip, kUndo, kQuit };

  Interactive() : tty_(isatty(STDIN_FILENO) != 0) {}

  Answer ask(const std::string& candidate, const std::string& artifact, int64_t checks) {
    fmt::print("\n[I] Candidate {}: {}\n[I] Written to {} (and its inputs to {})\n", checks + 1, candidate, artifact,
               inputs_artifact(artifact).string());
    std::fflush(stdout);
    const std::string prompt = "Does it fail? [b]ad (fails) / [g]ood (passes) / [s]kip / [u]ndo / [q]uit: ";
    for (;;) {
      std::optional<std::string> line = read_line(prompt);
      if (!line) return Answer::kQuit;
      const size_t first = line->find_first_not_of(" \t");
      if (first == std::string::npos) continue;
      switch (std::tolower(static_cast<unsigned char>((*line)[first]))) {
        case 'b':
        case 'f':  // Polygraphy's [f]ail
          return Answer::kBad;
        case 'g':
        case 'p':  // Polygraphy's [p]ass
          return Answer::kGood;
        case 's':
          return Answer::kSkip;
        case 'u':
          return Answer::kUndo;
        case 'q':
          return Answer::kQuit;
        default:
          fmt::print("Please answer b, g, s, u or q.\n");
      }
    }
  }

 private:
  std::optional<std::string> read_line(const std::string& prompt) {
    if (tty_) {
      char* raw = readline(prompt.c_str());
      if (!raw) return std::nullopt;
      std::string line(raw);
      std::free(raw);
      if (!line.empty()) add_history(line.c_str());
      return line;
    }
    fmt::print("{}", prompt);
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    return line;
  }

  bool tty_;
};

// Why the search stopped early at the user's request.
enum class Stop { kNone, kUndo, kQuit };

int reduce(const ReduceArgs& args) {
  const std::optional<debug::ReduceMode> mode = debug::reduce_mode_from_name(args.mode);
  if (!mode) return report_error(make_error(StatusCode::kInvalidArgument, "--mode '{}': expected bisect, linear or ddmin", args.mode));
  if (args.output.empty() && args.min_good.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "give -o/--output (and/or --min-good) for the result"));
  }
  if (args.builtin_check && check_command()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--builtin-check and --check cannot be combined"));
  }
  Result<std::optional<debug::ExternalChecker>> external = args.check.checker();
  if (!external.ok()) return report_error(external.status());
  const bool interactive = !args.builtin_check && !external->has_value();
  const bool write_artifact = !args.builtin_check || !args.artifacts.artifacts.empty();
  const bool use_tui = interactive && args.tui && on_terminal();
  // A run resumed from its replay may find the candidate the stopped run was checking: it is
  // written again anyway.
  if (write_artifact) {
    const bool resuming = !args.replay.load_debug_replay.empty();
    if (Status s = check_overwrite(args.iter_artifact, args.force || resuming, "--iter-artifact"); !s.ok()) {
      return report_error(s);
    }
  }

  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  Result<std::vector<TensorMap>> feeds = args.data.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
  Result<debug::Reducer> reducer = debug::Reducer::create(std::move(*model), std::move(*feeds), args.threads);
  if (!reducer.ok()) return report_error(reducer.status().with_context(args.model));
  Result<debug::DebugReplay> loaded = args.replay.load();
  if (!loaded.ok()) return report_error(loaded.status());
  debug::DebugReplay replay = std::move(*loaded);
  if (replay.size() > 0) fmt::print("[I] Loaded {} iteration(s) from {}\n", replay.size(), args.replay.load_debug_replay);

  debug::BuiltinCheck builtin;
  if (args.builtin_check) {
    Result<engine::EngineOptions> options = args.engine.engine_options(args.data.input_shapes);
    if (!options.ok()) return report_error(options.status());
    builtin.engine = std::move(*options);
    Result<CompareConfig> config = args.compare.config();
    if (!config.ok()) return report_error(config.status());
    builtin.compare = std::move(*config);
    apply_tolerance_preset(loosest_allowed(builtin.engine.build.allowed), builtin.compare);
    builtin.threads = args.threads;
    const Tolerance tolerance = builtin.compare.tolerance_for("");
    fmt::print("[I] Built-in check: engine vs reference, atol={} rtol={}\n", format_number(tolerance.atol),
               format_number(tolerance.rtol));
  } else if (interactive) {
    fmt::print("[I] No --check or --builtin-check: asking good/bad for every candidate\n");
  }

  const debug::ArtifactSorter sorter = args.artifacts.sorter();
  const bool progress_line = !use_tui && !args.no_progress && isatty(STDERR_FILENO);
  Interactive prompt;
  Stop stop = Stop::kNone;
  std::string undo_key;
  // With --tui the questions, the history and the progress go to the Reduce screen instead.
  std::optional<ReduceScreenState> screen;
  if (use_tui) screen.emplace(reducer->node_count());
  const std::atomic<bool>* screen_cancel = nullptr;
  auto ask_user = [&](const debug::ReduceCandidate& candidate) -> Interactive::Answer {
    if (!screen) return prompt.ask(reducer->describe(candidate), args.iter_artifact, static_cast<int64_t>(replay.size()));
    std::vector<std::string> labels;
    const Graph& graph = reducer->model().graph;
    for (int64_t n : candidate.nodes) {
      labels.push_back(node_label(graph, n) + " (" + graph.nodes[static_cast<size_t>(n)].op_type + ")");
    }
    switch (screen->ask(candidate, std::move(labels), *screen_cancel)) {
      case ReduceAnswer::kGood:
        return Interactive::Answer::kGood;
      case ReduceAnswer::kBad:
        return Interactive::Answer::kBad;
      case ReduceAnswer::kSkip:
        return Interactive::Answer::kSkip;
      case ReduceAnswer::kUndo:
        return Interactive::Answer::kUndo;
      case ReduceAnswer::kQuit:
        break;
    }
    return Interactive::Answer::kQuit;
  };

  debug::ReduceOracle oracle = [&](const debug::ReduceCandidate& candidate,
                                   const std::string& key) -> Result<debug::CheckResult> {
    // A replay with this iteration unresolved, for resuming past a check that brings Vernier down.
    debug::DebugReplay skip = replay;
    skip.record(key, debug::ReplayEntry{{{"num_nodes", candidate.nodes.size()}}, 0, debug::Verdict::kUnresolved,
                                        "interrupted"});
    VN_RETURN_IF_ERROR(skip.save(debug::skip_current_path(args.replay.save_debug_replay)));
    if (write_artifact) {
      VN_RETURN_IF_ERROR(write_candidate(*reducer, candidate, args.iter_artifact, !args.builtin_check));
    }
    debug::CheckResult result;
    if (args.builtin_check) {
      Result<Model> candidate_model = reducer->build_model(candidate);
      if (!candidate_model.ok()) return candidate_model.status();
      const std::vector<TensorMap> expected = reducer->reference_outputs(candidate);
      VN_ASSIGN_OR_RETURN(debug::BuiltinCheckDetail detail,
                          debug::run_builtin_check(*candidate_model, reducer->build_feeds(candidate), builtin, &expected));
      result = std::move(detail.result);
    } else if (external->has_value()) {
      VN_ASSIGN_OR_RETURN(result, (*external)->run());
      print_check_output(result, args.check.show_output);
    } else {
      switch (ask_user(candidate)) {
        case Interactive::Answer::kGood:
          result.verdict = debug::Verdict::kGood;
          result.reason = "answered good";
          break;
        case Interactive::Answer::kBad:
          result.verdict = debug::Verdict::kBad;
          result.reason = "answered bad";
          break;
        case Interactive::Answer::kSkip:
          result.verdict = debug::Verdict::kUnresolved;
          result.reason = "skipped";
          break;
        case Interactive::Answer::kUndo:
          stop = Stop::kUndo;
          return Status(StatusCode::kCancelled, "undo");
        case Interactive::Answer::kQuit:
          stop = Stop::kQuit;
          return Status(StatusCode::kCancelled, "quit");
      }
    }
    if (!sorter.empty()) {
      const size_t underscore = key.find('_', 2);
      const std::string suffix = underscore == std::string::npos ? "" : key.substr(underscore + 1);
      VN_ASSIGN_OR_RETURN(auto sorted, sorter.sort(static_cast<int64_t>(replay.size()), result.verdict, suffix));
      for (const debug::SortedArtifact& a : sorted) {
        if (!a.problem.empty()) fmt::print(stderr, "[W] Artifact {}: {}\n", a.from.string(), a.problem);
      }
    }
    if (write_artifact) {
      std::error_code ec;
      std::filesystem::remove(args.iter_artifact, ec);
      std::filesystem::remove(inputs_artifact(args.iter_artifact), ec);
    }
    return result;
  };

  std::vector<std::string> new_keys;
  debug::ReduceObserver observe = [&](const debug::ReduceIteration& it,
                                      const debug::ReduceProgress& progress) -> Status {
    if (!it.replayed) new_keys.push_back(it.key);
    VN_RETURN_IF_ERROR(replay.save(args.replay.save_debug_replay));
    std::error_code ec;
    std::filesystem::remove(debug::skip_current_path(args.replay.save_debug_replay), ec);
    if (screen) {
      screen->record(it, progress);
      return Status::OK();
    }
    if (progress_line) fmt::print(stderr, "\r\033[K");
    const char* word = it.result.verdict == debug::Verdict::kBad    ? "FAILED"
                       : it.result.verdict == debug::Verdict::kGood ? "PASSED"
                                                                    : "UNRESOLVED";
    fmt::print("[I] {:<10} | Iteration {} ({}) | {} node(s) | {}{}{}\n", word, it.iteration, it.phase,
               it.candidate.nodes.size(), it.result.reason, it.replayed ? " | from replay" : "",
               it.replayed ? "" : fmt::format(" | {:.3g} s", it.result.seconds));
    std::fflush(stdout);
    if (progress_line) {
      fmt::print(stderr, "[reduce {}] {} check(s) done, at most {} left | {} of {} node(s) kept", progress.phase,
                 progress.checks_done, progress.checks_left, progress.nodes_kept, progress.total_nodes);
      std::fflush(stderr);
    }
    return Status::OK();
  };

  debug::ReduceOptions options;
  options.mode = *mode;
  options.reduce_inputs = !args.no_reduce_inputs;
  options.reduce_outputs = !args.no_reduce_outputs;
  fmt::print("[I] Reducing {} ({} node(s)) with {}\n", args.model, reducer->node_count(), args.mode);
  const auto start = std::chrono::steady_clock::now();
  auto search = [&]() -> Result<debug::ReduceResult> {
    Result<debug::ReduceResult> result = Status(StatusCode::kInternal, "not run");
    for (;;) {
      stop = Stop::kNone;
      new_keys.clear();
      if (screen) screen->restart();
      result = reducer->reduce(options, replay, oracle, observe);
      if (stop != Stop::kUndo) break;
      // Undo: forget the last answer and run the search again; answers before it replay at once.
      if (!replay.entries().empty()) {
        std::string last;
        int64_t best = -1;
        for (const auto& [key, entry] : replay.entries()) {
          (void)entry;
          const auto pos = std::find(new_keys.begin(), new_keys.end(), key);
          const int64_t order = pos == new_keys.end() ? -1 : pos - new_keys.begin();
          if (order > best) {
            best = order;
            last = key;
          }
        }
        if (!last.empty()) {
          replay.erase(last);
          if (!screen) fmt::print("[I] Undid iteration {}\n", last);
        }
        VN_RETURN_IF_ERROR(replay.save(args.replay.save_debug_replay));
      }
    }
    return result;
  };
  Result<debug::ReduceResult> result =
      screen ? run_reduce_screen(*screen,
                                 [&](session::JobContext& context) {
                                   screen_cancel = context.cancel_flag();
                                   return search();
                                 })
             : search();
  if (progress_line) fmt::print(stderr, "\r\033[K");
  if (!result.ok()) {
    if (stop == Stop::kQuit) {
      std::error_code ec;
      std::filesystem::remove(args.iter_artifact, ec);
      std::filesystem::remove(inputs_artifact(args.iter_artifact), ec);
      fmt::print("[I] Stopped. {} answer(s) saved to {}; resume with --load-debug-replay {}\n", replay.size(),
                 args.replay.save_debug_replay, args.replay.save_debug_replay);
      return kExitOk;
    }
    return report_error(result.status());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result->failed_any) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "no candidate failed the check, so nothing was reduced; check that the full "
                                   "model fails it (and, with --fail-regex, that the regex matches the failure)"));
  }
  fmt::print("[I] Finished {} check(s) in {:.3g} s | {} of {} node(s) kept: {}\n", result->checks, seconds,
             result->minimal.nodes.size(), reducer->node_count(), reducer->describe(result->minimal));
  if (!args.output.empty()) {
    if (Status s = write_candidate(*reducer, result->minimal, args.output, false); !s.ok()) return report_error(s);
    fmt::print("[I] Saved the minimal failing model to {}\n", args.output);
  }
  if (!args.min_good.empty()) {
    if (!result->min_good) {
      fmt::print(stderr, "[W] No candidate passed, so there is no --min-good model\n");
    } else {
      if (Status s = write_candidate(*reducer, *result->min_good, args.min_good, false); !s.ok()) return report_error(s);
      fmt::print("[I] Saved a passing model close in size ({} node(s)) to {}\n", result->min_good->nodes.size(),
                 args.min_good);
    }
  }
  if (*mode == debug::ReduceMode::kBisect && result->minimal.nodes.size() > 1 &&
      result->minimal.nodes.size() * 4 >= static_cast<size_t>(reducer->node_count())) {
    fmt::print("[I] This model might reduce further with --mode ddmin (or linear) on the result\n");
  }
  return kExitOk;
}

}  // namespace

void add_debug_reduce(CLI::App& debug, Action& action) {
  auto args = std::make_shared<ReduceArgs>();
  CLI::App* cmd = debug.add_subcommand("reduce", "Shrink a failing model to a minimal failing subgraph");
  cmd->add_option("model", args->model, "ONNX model")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the minimal failing model");
  cmd->add_option("--min-good", args->min_good, "Also write a passing model close in size to the minimal failing one");
  cmd->add_option("--mode", args->mode, "bisect, linear or ddmin (graph-aware delta debugging)")->capture_default_str();
  cmd->add_flag("--no-reduce-inputs", args->no_reduce_inputs, "bisect/linear: skip the inputs phase");
  cmd->add_flag("--no-reduce-outputs", args->no_reduce_outputs, "bisect/linear: skip the outputs phase");
  cmd->add_option("--iter-artifact", args->iter_artifact,
                  "Each candidate is written here (its inputs to <stem>_inputs.json) before the check runs")
      ->capture_default_str();
  cmd->add_flag("--builtin-check", args->builtin_check,
                "Check each candidate in process: the engine (with the build flags) vs the reference");
  cmd->add_flag("--no-progress", args->no_progress, "No updating progress line (for logs)");
  cmd->add_flag("--force", args->force, "Overwrite an existing --iter-artifact");
  cmd->add_flag("--tui", args->tui,
                "Without a check, ask good/bad on the full-screen Reduce screen (when on a terminal) instead of a "
                "readline prompt");
  add_ui_flags(*cmd);
  cmd->add_option("--threads", args->threads, "Threads for the backends (default: all cores)")->check(CLI::Range(0, 1024));
  args->data.add_to(*cmd);
  args->compare.add_to(*cmd);
  args->engine.add_to(*cmd);
  args->check.add_to(*cmd);
  args->artifacts.add_to(*cmd);
  args->replay.add_to(*cmd);
  accept_check_command(*cmd);
  cmd->callback([args, &action] { action = [args] { return reduce(*args); }; });
}

}  // namespace vn::cli
