// SPDX-License-Identifier: Apache-2.0
// `vernier debug reduce`: shrinks a failing model to a minimal failing subgraph, checking every
// candidate with the built-in check, an external --check, or by asking the user good/bad.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "core/common/paths.h"
#include "core/debug/reduce_session.h"
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
  RunnerFlags runners;  ///< --engine-runner: the engine the built-in check tests
  CheckOptions check;
  ArtifactOptions artifacts;
  ReplayOptions replay;
};

// Good/bad answers typed by the user. On a terminal with readline (history, editing); otherwise
// plain lines from stdin, so the session can be scripted.
class Interactive {
 public:
  using Answer = debug::ReduceAnswer;

  Interactive() : tty_(isatty(STDIN_FILENO) != 0) {}

  Answer ask(const std::string& candidate, const std::string& artifact, int64_t checks) {
    fmt::print("\n[I] Candidate {}: {}\n[I] Written to {} (and its inputs to {})\n", checks + 1, candidate, artifact,
               debug::inputs_artifact(artifact).string());
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
  Result<debug::ReduceSession> session = debug::ReduceSession::open(std::move(*model), std::move(*feeds), args.threads);
  if (!session.ok()) return report_error(session.status().with_context(args.model));
  if (!args.replay.load_debug_replay.empty()) {
    if (Status s = session->load_replay(args.replay.load_debug_replay); !s.ok()) return report_error(s);
  }
  if (session->loaded() > 0) {
    fmt::print("[I] Loaded {} iteration(s) from {}\n", session->loaded(), args.replay.load_debug_replay);
  }

  debug::ReduceSessionConfig config;
  if (args.builtin_check) {
    debug::BuiltinCheck builtin;
    Result<engine::EngineOptions> options = args.engine.engine_options(args.data.input_shapes);
    if (!options.ok()) return report_error(options.status());
    builtin.engine = std::move(*options);
    Result<CompareConfig> compare = args.compare.config();
    if (!compare.ok()) return report_error(compare.status());
    builtin.compare = std::move(*compare);
    builtin.origin = apply_tolerance_preset(loosest_allowed(builtin.engine.build.allowed), builtin.compare);
    builtin.threads = args.threads;
    Result<std::shared_ptr<eut::EngineUnderTest>> under_test = args.runners.single_engine();
    if (!under_test.ok()) return report_error(under_test.status());
    builtin.under_test = *under_test;
    std::string engine_name = "engine";
    if (builtin.under_test) {
      Result<std::string> described = builtin.under_test->describe();
      if (!described.ok()) return report_error(described.status());
      engine_name = *described;
    }
    const Tolerance tolerance = builtin.compare.tolerance_for("");
    fmt::print("[I] Built-in check: {} vs reference, atol={} rtol={}\n", engine_name, format_number(tolerance.atol),
               format_number(tolerance.rtol));
    config.builtin = std::move(builtin);
  } else if (!args.runners.engine_runners.empty() || !args.runners.engine_model.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "{} the engine --builtin-check tests; add --builtin-check",
                                   args.runners.engine_runners.empty() ? "--engine-model is what" : "--engine-runner names"));
  } else if (interactive) {
    fmt::print("[I] No --check or --builtin-check: asking good/bad for every candidate\n");
  }
  config.options.mode = *mode;
  config.options.reduce_inputs = !args.no_reduce_inputs;
  config.options.reduce_outputs = !args.no_reduce_outputs;
  config.external = std::move(*external);
  config.iter_artifact = args.iter_artifact;
  config.artifacts = args.artifacts.paths();
  config.artifacts_dir = args.artifacts.artifacts_dir;
  config.save_replay = args.replay.save_debug_replay;
  config.output = args.output;
  config.min_good = args.min_good;

  const debug::Reducer& reducer = session->reducer();
  const bool progress_line = !use_tui && !args.no_progress && isatty(STDERR_FILENO);
  // With --tui the questions, the history and the progress go to the Reduce screen instead.
  std::optional<ReduceScreenState> screen;
  if (use_tui) screen.emplace(reducer.node_count());
  Interactive prompt;
  debug::ReduceHooks hooks;
  hooks.ask = [&](const debug::ReduceQuestion& q) {
    if (!screen) return prompt.ask(q.description, args.iter_artifact, q.checks);
    return screen->ask(q.candidate, q.labels, *q.cancel);
  };
  hooks.on_check_output = [&](const debug::CheckResult& result) { print_check_output(result, args.check.show_output); };
  hooks.on_sorted = [](const std::vector<debug::SortedArtifact>& sorted) {
    for (const debug::SortedArtifact& a : sorted) {
      if (!a.problem.empty()) fmt::print(stderr, "[W] Artifact {}: {}\n", a.from.string(), a.problem);
    }
  };
  hooks.on_iteration = [&](const debug::ReduceIteration& it, const debug::ReduceProgress& progress) {
    if (screen) return screen->record(it, progress);
    if (progress_line) fmt::print(stderr, "\r\033[K");
    const char* word = it.result.verdict == debug::Verdict::kBad    ? "FAILED"
                       : it.result.verdict == debug::Verdict::kGood ? "PASSED"
                                                                    : "UNRESOLVED";
    fmt::print("[I] {:<10} | Iteration {} ({}) | {} node(s) | {}{}{}\n", word, it.iteration, it.phase,
               it.candidate.nodes.size(), it.result.reason, it.replayed ? " | from replay" : "",
               it.replayed ? "" : fmt::format(" | {:.3g} s", it.result.seconds));
    std::fflush(stdout);
    if (progress_line) {
      fmt::print(stderr, "[reduce {}] {} check(s) done{} | {} of {} node(s) kept", progress.phase, progress.checks_done,
                 progress.checks_left > 0 ? fmt::format(", at most {} left", progress.checks_left) : "",
                 progress.nodes_kept, progress.total_nodes);
      std::fflush(stderr);
    }
  };
  hooks.on_search_start = [&] {
    if (screen) screen->restart();
  };
  hooks.on_undo = [&](const std::string& key) {
    if (!screen) fmt::print("[I] Undid iteration {}\n", key);
  };
  if (screen) {
    hooks.run = [&](const debug::ReduceHooks::Search& search) {
      return run_reduce_screen(*screen, [&](session::JobContext& context) { return search(context.cancel_flag()); });
    };
  }

  fmt::print("[I] Reducing {} ({} node(s)) with {}\n", args.model, reducer.node_count(), args.mode);
  Result<debug::ReduceSessionResult> result = session->run(config, hooks);
  if (progress_line) fmt::print(stderr, "\r\033[K");
  if (!result.ok()) return report_error(result.status());
  const debug::ReduceSessionResult& r = *result;
  if (r.quit) {
    fmt::print("[I] Stopped. {} answer(s) saved to {}; resume with --load-debug-replay {}\n", r.answers,
               args.replay.save_debug_replay, args.replay.save_debug_replay);
    return kExitOk;
  }
  fmt::print("[I] Finished {} check(s) in {:.3g} s | {} of {} node(s) kept: {}\n", r.reduce.checks, r.seconds,
             r.reduce.minimal.nodes.size(), r.total_nodes, r.minimal);
  if (!args.output.empty()) {
    if (!r.saved_output) return report_error(r.saved);
    fmt::print("[I] Saved the minimal failing model to {}\n", args.output);
  }
  if (!args.min_good.empty()) {
    if (!r.reduce.min_good) {
      fmt::print(stderr, "[W] No candidate passed, so there is no --min-good model\n");
    } else {
      if (!r.saved_min_good) return report_error(r.saved);
      fmt::print("[I] Saved a passing model close in size ({} node(s)) to {}\n", r.reduce.min_good->nodes.size(),
                 args.min_good);
    }
  }
  if (r.might_reduce_further) {
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
  args->runners.add_to(*cmd);
  args->runners.add_engine_model(*cmd);
  args->check.add_to(*cmd);
  args->artifacts.add_to(*cmd);
  args->replay.add_to(*cmd);
  accept_check_command(*cmd);
  cmd->callback([args, &action] { action = [args] { return reduce(*args); }; });
}

}  // namespace vn::cli
