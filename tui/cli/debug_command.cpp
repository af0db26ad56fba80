// SPDX-License-Identifier: Apache-2.0
// `vernier debug build|precision|repeat`: the iterative debug tools of Polygraphy, with the
// built-in engine-vs-reference check when no --check is given (build, precision).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <system_error>

#include "core/debug/build_session.h"
#include "core/debug/precision_session.h"
#include "core/debug/repeat_session.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "tui/cli/debug_options.h"
#include "tui/cli/options.h"

namespace vn::cli {
namespace {

/// The options of the verbs that build engines (build, precision).
struct EngineDebugArgs {
  std::string model;
  int threads = 0;
  std::string iter_artifact = "vernier_debug.plan";
  bool no_remove_intermediate = false;
  DataOptions data;
  CompareOptions compare;
  EngineOptions engine;
  RunnerFlags runners;  ///< --engine-runner: the engine under test, when not the built-in one
  CheckOptions check;
  ArtifactOptions artifacts;

  void add_to(CLI::App& cmd, const char* model_help) {
    cmd.add_option("model", model, model_help)->required();
    cmd.add_option("--iter-artifact,--intermediate-artifact", iter_artifact,
                   "Where each iteration's engine plan is written (what a --check reads)")
        ->capture_default_str();
    cmd.add_flag("--no-remove-intermediate", no_remove_intermediate,
                 "Keep the iteration artifact after each iteration (default: removed unless sorted)");
    cmd.add_option("--threads", threads, "Threads for builds and runs (default: all cores)")
        ->check(CLI::Range(0, 1024));
    data.add_to(cmd);
    compare.add_to(cmd);
    engine.add_to(cmd);
    runners.add_to(cmd);
    runners.add_engine_model(cmd);
    check.add_to(cmd);
    artifacts.add_to(cmd);
    accept_check_command(cmd);
  }
};

/// The engine session `args` describe: flags checked, the external check made, the model loaded,
/// the tolerances (with the preset of the loosest allowed precision) and, for the built-in check,
/// the feeds. `verb` names the tool in messages; `checker` receives the external check, which the
/// setup points at.
Result<debug::EngineSessionConfig> engine_session(const EngineDebugArgs& args, const std::string& verb,
                                                  std::optional<debug::ExternalChecker>& checker) {
  debug::EngineSessionConfig s;
  VN_ASSIGN_OR_RETURN(engine::EngineOptions engine, args.engine.engine_options(args.data.input_shapes));
  VN_RETURN_IF_NOT(!engine.plan, StatusCode::kInvalidArgument,
                   "--load-engine: debug {} builds its own engines; give it the model", verb);
  VN_RETURN_IF_NOT(args.engine.save_engine.empty(), StatusCode::kInvalidArgument,
                   "--save-engine: debug {} writes each build's plan to --iter-artifact; list it in --artifacts to "
                   "keep every plan",
                   verb);
  // Comparison flags that only `vernier run` acts on would be silently ignored here.
  for (const auto& [set, flag] : {std::pair{args.compare.local_errors, "--local-errors"},
                                  std::pair{!args.compare.report_json.empty(), "--report-json"},
                                  std::pair{args.compare.fail_fast, "--fail-fast"}}) {
    VN_RETURN_IF_NOT(!set, StatusCode::kInvalidArgument, "{}: not used by debug {} (use it with `vernier run`)", flag,
                     verb);
  }
  VN_ASSIGN_OR_RETURN(checker, args.check.checker());
  std::error_code ec;
  VN_RETURN_IF_NOT(!std::filesystem::exists(args.iter_artifact, ec), StatusCode::kInvalidArgument,
                   "--iter-artifact {} already exists; remove it or choose another path (it is rewritten and removed "
                   "every iteration)",
                   args.iter_artifact);
  VN_ASSIGN_OR_RETURN(s.model, load_model(args.model));
  s.model_name = args.model;
  VN_ASSIGN_OR_RETURN(CompareConfig compare, args.compare.config());
  s.setup.builtin.origin = apply_tolerance_preset(loosest_allowed(engine.build.allowed), compare);
  if (!checker) {
    VN_ASSIGN_OR_RETURN(s.feeds, args.data.make_feeds(s.model.graph));
  }
  s.setup.builtin.compare = std::move(compare);
  s.setup.builtin.threads = args.threads;
  VN_ASSIGN_OR_RETURN(s.setup.builtin.under_test, args.runners.single_engine());
  s.setup.external = checker ? &*checker : nullptr;
  s.setup.iter_artifact = args.iter_artifact;
  s.setup.save_tactics = args.engine.save_tactics;
  s.build = std::move(engine.build);
  s.artifacts = args.artifacts.paths();
  s.artifacts_dir = args.artifacts.artifacts_dir;
  s.keep_iter_artifact = args.no_remove_intermediate;
  return s;
}

void print_reference_ready(size_t feeds) {
  fmt::print(
      "[I] Checking each build against the reference backend on {} feed(s) (built-in check; give --check CMD to use "
      "your own)\n",
      feeds);
}

std::string verdict_word(debug::Verdict v) {
  switch (v) {
    case debug::Verdict::kGood:
      return "PASSED";
    case debug::Verdict::kBad:
      return "FAILED";
    case debug::Verdict::kUnresolved:
      return "UNRESOLVED";
  }
  return "?";
}

void print_sorted(const std::vector<debug::SortedArtifact>& sorted) {
  for (const debug::SortedArtifact& a : sorted) {
    if (a.to.empty()) {
      fmt::print("[E]     Artifact {} not sorted: {}\n", a.from.string(), a.problem);
    } else {
      fmt::print("[I]     Moved {} to {}\n", a.from.string(), a.to.string());
    }
  }
}

void print_summary(const debug::LoopSummary& summary) {
  fmt::print("[I] Finished {} iteration(s) | Passed: {}/{} | Pass Rate: {}%{}\n", summary.iterations, summary.passed,
             summary.iterations, format_number(summary.pass_rate()),
             summary.unresolved ? fmt::format(" | Unresolved: {}", summary.unresolved) : "");
}

// "Approximately r iteration(s) remaining" is only known for --until N.
std::string remaining(const debug::Until& until, int64_t index) {
  if (until.kind != debug::Until::Kind::kCount) return "";
  return fmt::format(" | Approximately {} iteration(s) remaining", until.count - index - 1);
}

// ---- debug build ------------------------------------------------------------------------------

struct BuildArgs : EngineDebugArgs {
  std::string until;
  std::optional<uint64_t> first_builder_seed;
};

int debug_build(const BuildArgs& args) {
  Result<debug::Until> until = debug::Until::parse(args.until);
  if (!until.ok()) return report_error(until.status());
  std::optional<debug::ExternalChecker> checker;
  Result<debug::EngineSessionConfig> engine = engine_session(args, "build", checker);
  if (!engine.ok()) return report_error(engine.status());
  debug::BuildSessionConfig config;
  config.engine = std::move(*engine);
  config.until = *until;
  config.first_builder_seed = args.first_builder_seed;

  debug::BuildHooks hooks;
  hooks.on_reference = print_reference_ready;
  hooks.on_start = [&](int64_t index) {
    fmt::print("[I] RUNNING | Iteration {}{}\n", index + 1, remaining(*until, index));
  };
  hooks.on_built = [](int64_t, uint64_t seed, const engine::Plan* plan) {
    fmt::print("[I]     Builder seed {}{}\n", seed, plan ? ": " + plan_summary(*plan) : "");
  };
  hooks.on_finish = [&](const debug::IterationOutcome& o) {
    print_check_output(o.result, args.check.show_output);
    fmt::print("[I]     {}\n", o.result.reason);
    fmt::print("[I] {} | Iteration {} | Duration {:.4f}s\n", verdict_word(o.result.verdict), o.index + 1,
               o.result.seconds);
    print_sorted(o.sorted);
  };
  Result<debug::BuildSessionResult> result = debug::run_build_session(config, hooks);
  if (!result.ok()) return report_error(result.status());
  print_summary(result->summary);
  const std::vector<uint64_t>& bad_seeds = result->bad_seeds;
  const std::vector<uint64_t>& good_seeds = result->good_seeds;
  // An engine whose builds never vary (ONNX Runtime) has no seed that chooses a build.
  const std::shared_ptr<eut::EngineUnderTest>& under_test = config.engine.setup.builtin.under_test;
  Result<eut::Capabilities> caps = under_test ? under_test->capabilities() : Result<eut::Capabilities>(eut::Capabilities{true});
  if (caps.ok() && !caps->builds_vary) {
    fmt::print("[I] {} builds a model the same way every time: the builds differ in nothing a seed chooses\n",
               under_test->name());
  } else if (!bad_seeds.empty()) {
    fmt::print("[I] Rebuild a failing engine with `--builder-seed {}`", bad_seeds.front());
    if (!good_seeds.empty()) fmt::print(", a passing one with `--builder-seed {}`", good_seeds.front());
    fmt::print("\n");
  }
  if (!args.engine.save_tactics.empty() && !bad_seeds.empty()) {
    fmt::print("[I] Compare the tactics of good and bad builds: vernier inspect diff-tactics --dir {}\n",
               args.artifacts.artifacts_dir);
  }
  return result->summary.failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace

void add_debug_build(CLI::App& debug, Action& action) {
  auto args = std::make_shared<BuildArgs>();
  CLI::App* cmd = debug.add_subcommand(
      "build", "Build the engine repeatedly (a fresh builder seed each time), check every build and sort artifacts");
  cmd->footer(
      "Without --check, each build is compared with the reference backend (the comparison flags apply). "
      "With --save-tactics replay.json, every build's tactic replay is sorted into good/ or bad/ of "
      "--artifacts-dir (as if listed in --artifacts); then run `vernier inspect diff-tactics --dir "
      "vernier_artifacts`. Exit code 1 when any build failed.");
  args->add_to(*cmd, "ONNX model");
  cmd->add_option("--until", args->until, "Stop after N iterations, at the first good build, or at the first bad one")
      ->required();
  cmd->add_option("--first-builder-seed", args->first_builder_seed,
                  "Build i (0-based) uses seed N + i, for a reproducible session (default: random seeds; "
                  "--builder-seed uses one seed for every build)")
      ->excludes("--builder-seed");
  cmd->callback([args, &action] { action = [args] { return debug_build(*args); }; });
}

namespace {

// ---- debug precision --------------------------------------------------------------------------

struct PrecisionArgs : EngineDebugArgs {
  std::string mode = "bisect";
  std::string direction = "forward";
  std::string precision = "fp32";
  bool no_minimize = false;
  std::string save_keep_fp32;  ///< --save-keep-fp32: the layers found, for convert --keep-fp32 @FILE
};

// Single-quoted for a POSIX shell when it holds anything but plain word characters.
std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./:=,@%+").find(c) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The `vernier run` command that builds the engine as the search's passing iteration did and
// compares it with the reference under the same data and tolerances.
std::string run_command_line(const PrecisionArgs& args, const CompareConfig& compare, uint64_t seed,
                             const std::vector<std::string>& layers, const std::string& precision) {
  std::vector<std::string> a = {"vernier", "run", args.model, "--ref"};
  auto add = [&](const std::string& flag, const std::vector<std::string>& values) {
    if (values.empty()) return;
    a.push_back(flag);
    a.insert(a.end(), values.begin(), values.end());
  };
  if (args.runners.engine_runners.empty()) {
    a.push_back("--engine");
  } else {
    add("--engine-runner", args.runners.engine_runners);
    for (const std::string& o : args.runners.options) add("--runner-option", {o});
  }
  const EngineOptions& e = args.engine;
  if (e.fp16) a.push_back("--fp16");
  if (e.bf16) a.push_back("--bf16");
  if (e.tf32) a.push_back("--tf32");
  if (e.deterministic) {
    a.push_back("--deterministic");
  } else {
    add("--builder-seed", {std::to_string(seed)});
  }
  if (e.timing_margin != 0.1) add("--timing-margin", {fmt::format("{}", e.timing_margin)});
  add("--load-tactics", e.load_tactics.empty() ? std::vector<std::string>{} : std::vector<std::string>{e.load_tactics});
  add("--inject-fault", e.inject_faults);
  const DataOptions& d = args.data;
  if (d.seed != 1) add("--seed", {std::to_string(d.seed)});
  add("--val-range", d.val_ranges);
  if (d.float_min) add("--float-min", {fmt::format("{}", *d.float_min)});
  if (d.float_max) add("--float-max", {fmt::format("{}", *d.float_max)});
  if (d.int_min) add("--int-min", {std::to_string(*d.int_min)});
  if (d.int_max) add("--int-max", {std::to_string(*d.int_max)});
  add("--load-inputs", d.load_inputs);
  add("--input-shapes", d.input_shapes);
  if (d.iterations != 1) add("--iterations", {std::to_string(d.iterations)});
  // The tolerances the search used, preset included, so that `run` judges as it did.
  std::vector<std::string> atol, rtol;
  for (const auto& [name, v] : compare.atol)
    atol.push_back(name.empty() ? format_number(v) : name + ":" + format_number(v));
  for (const auto& [name, v] : compare.rtol)
    rtol.push_back(name.empty() ? format_number(v) : name + ":" + format_number(v));
  add("--atol", atol);
  add("--rtol", rtol);
  add("--check-error-stat", args.compare.check_error_stat);
  add("--error-quantile", args.compare.error_quantile);
  if (args.compare.infinities_compare_equal) a.push_back("--infinities-compare-equal");
  std::vector<std::string> lp = e.layer_precisions;
  for (const std::string& l : layers) lp.push_back(l + ":" + precision);
  add("--layer-precisions", lp);
  add("--precision-constraints", {e.precision_constraints});
  std::string line;
  for (const std::string& s : a) line += (line.empty() ? "" : " ") + shell_quote(s);
  return line;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

int debug_precision(PrecisionArgs args) {
  const std::optional<engine::PrecisionId> higher =
      engine::precision_from_name(args.precision == "float32"   ? "fp32"
                                  : args.precision == "float16" ? "fp16"
                                                                : args.precision);
  if (!higher || (*higher != engine::PrecisionId::kFp32 && *higher != engine::PrecisionId::kFp16)) {
    return report_error(
        make_error(StatusCode::kInvalidArgument, "-p/--precision '{}': expected fp32 or fp16", args.precision));
  }
  if (!args.runners.engine_model.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--engine-model: debug precision changes the precision of layers as it builds, and "
                                   "an engine model keeps the precisions it holds; give the float32 model and --fp16"));
  }
  if (!args.engine.fp16 && !args.engine.bf16 && !args.engine.tf32) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "debug precision needs a reduced precision to search from: give --fp16, --bf16 or "
                                   "--tf32"));
  }
  if (*higher == engine::PrecisionId::kFp16 && (!args.engine.fp16 || (!args.engine.bf16 && !args.engine.tf32))) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "-p fp16 marks layers fp16 against a lower precision: give --fp16 with --bf16"));
  }
  if (args.engine.precision_constraints == "none") {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--precision-constraints none ignores the layer precisions debug precision sets; "
                                   "use obey (the default here) or prefer"));
  }
  std::optional<debug::ExternalChecker> checker;
  Result<debug::EngineSessionConfig> engine = engine_session(args, "precision", checker);
  if (!engine.ok()) return report_error(engine.status());
  debug::PrecisionSessionConfig config;
  config.engine = std::move(*engine);
  config.higher = *higher;
  config.search.mode = args.mode == "linear" ? debug::PrecisionMode::kLinear : debug::PrecisionMode::kBisect;
  config.search.direction =
      args.direction == "reverse" ? debug::PrecisionDirection::kReverse : debug::PrecisionDirection::kForward;
  config.search.minimize = !args.no_minimize;

  const std::string prec = std::string(engine::precision_name(*higher));
  debug::PrecisionHooks hooks;
  hooks.on_reference = print_reference_ready;
  hooks.on_seed = [](uint64_t seed) {
    fmt::print("[I] Builder seed {} for every iteration (--deterministic removes timing from the builds)\n", seed);
  };
  hooks.on_candidates = [&](const std::vector<debug::PrecisionCandidate>& candidates,
                            const std::vector<debug::ExcludedLayer>& excluded) {
    fmt::print("[I] {} layer(s) can be marked {}{}\n", candidates.size(), prec,
               excluded.empty() ? "" : fmt::format(" ({} left out)", excluded.size()));
    for (const debug::ExcludedLayer& e : excluded) fmt::print("[I]     Left out {}: {}\n", e.layer, e.reason);
  };
  hooks.on_start = [&](int64_t step, const std::vector<std::string>& marked) {
    fmt::print("[I] RUNNING | Iteration {} | {} layer(s) in {}: {}\n", step, marked.size(), prec, join_names(marked));
  };
  hooks.on_step = [&](int64_t step, const debug::PrecisionStep& st, const std::vector<debug::SortedArtifact>& sorted) {
    print_check_output(st.result, args.check.show_output);
    fmt::print("[I]     {}\n", st.result.reason);
    fmt::print("[I] {} | Iteration {} | Duration {:.4f}s\n", verdict_word(st.result.verdict), step, st.result.seconds);
    print_sorted(sorted);
  };
  Result<debug::PrecisionSessionResult> result = debug::run_precision_session(config, hooks);
  if (!result.ok()) return report_error(result.status());
  const debug::PrecisionResult& r = result->search;
  std::map<std::string, std::string> layer_of;  // --layer-precisions name -> plan layer
  for (const debug::PrecisionCandidate& c : result->candidates) layer_of[c.name] = c.layer;
  int64_t passed = 0;
  for (const debug::PrecisionStep& st : r.steps) passed += st.result.verdict == debug::Verdict::kGood ? 1 : 0;
  fmt::print("[I] Finished {} iteration(s) | Passed: {}/{} | Pass Rate: {}%\n", r.steps.size(), passed, r.steps.size(),
             format_number(r.steps.empty() ? 0.0 : 100.0 * passed / static_cast<double>(r.steps.size())));
  if (!r.k) {
    fmt::print(
        "[E] Could not find a configuration that satisfied accuracy requirements: the check fails even with all "
        "{} layer(s) in {}\n",
        result->candidates.size(), prec);
    return kExitFailed;
  }
  if (*r.k == 0) {
    fmt::print("[I] The engine passes with no layer forced to {}: nothing to mark\n", prec);
    return kExitOk;
  }
  const char* which = config.search.direction == debug::PrecisionDirection::kForward ? "first" : "last";
  fmt::print("[I] The check passes with the {} {} layer(s) in {}: {}\n", which, *r.k, prec, join_names(r.prefix));
  if (config.search.minimize) {
    fmt::print("[I] Of those, these {} layer(s) must run in {} (removing any other still passes): {}\n",
               r.layers.size(), prec, join_names(r.layers));
  }
  fmt::print("[I] To achieve acceptable accuracy, run these layers in {}:\n", prec);
  for (const std::string& l : r.layers) {
    fmt::print("    {}{}\n", l, layer_of[l] == l ? "" : fmt::format(" (layer '{}')", layer_of[l]));
  }
  fmt::print("[I] Apply and verify with:\n    {}\n",
             run_command_line(args, config.engine.setup.builtin.compare, result->seed, r.layers, prec));
  if (!args.save_keep_fp32.empty()) {
    if (*higher != engine::PrecisionId::kFp32) {
      return report_error(make_error(StatusCode::kInvalidArgument,
                                     "--save-keep-fp32: the layers found must run in {}, not fp32", prec));
    }
    std::string text = fmt::format("# Layers `vernier debug precision` found must stay in float32 ({}).\n"
                                   "# For `vernier convert MODEL --to-onnx OUT.onnx --fp16 --keep-fp32 @{}`.\n",
                                   args.model, args.save_keep_fp32);
    for (const std::string& l : r.layers) text += l + "\n";
    if (Status s = file_write_atomic(args.save_keep_fp32, text); !s.ok()) return report_error(s);
    fmt::print("[I] Wrote the {} layer(s) to keep in float32 to {}\n", r.layers.size(), args.save_keep_fp32);
  }
  if (checker) {
    fmt::print(
        "[I] (The verdicts came from your --check; the command above compares with the reference backend. "
        "Build the plan your check reads with `vernier convert` and the same flags.)\n");
  }
  return kExitOk;
}

}  // namespace

void add_debug_precision(CLI::App& debug, Action& action) {
  auto args = std::make_shared<PrecisionArgs>();
  args->engine.precision_constraints = "obey";
  CLI::App* cmd = debug.add_subcommand(
      "precision", "Find which layers must run in a higher precision for the check to pass, by name");
  cmd->footer(
      "Unlike Polygraphy it tests K = 0, names the layers, reduces the K layers to those that matter, and prints the "
      "`vernier run` command that applies them. --precision-constraints defaults to obey here.");
  args->add_to(*cmd, "ONNX model");
  cmd->add_option("--mode", args->mode, "bisect (about log2(L)+2 builds) or linear (one more layer per build)")
      ->check(CLI::IsMember({"bisect", "linear"}))
      ->capture_default_str();
  cmd->add_option("--direction,--dir", args->direction,
                  "forward: mark the first K layers in network order; reverse: the last K")
      ->check(CLI::IsMember({"forward", "reverse"}))
      ->capture_default_str();
  cmd->add_option("-p,--precision", args->precision, "The higher precision: fp32 (float32) or fp16 (float16)")
      ->capture_default_str();
  cmd->add_flag("--no-minimize", args->no_minimize,
                "Stop at the K layers the search finds (default: then drop each one whose removal still passes)");
  cmd->add_option("--save-keep-fp32", args->save_keep_fp32,
                  "Write the layers found, one per line, for `convert --to-onnx --fp16 --keep-fp32 @FILE`");
  cmd->callback([args, &action] { action = [args] { return debug_precision(*args); }; });
}

namespace {

// ---- debug repeat -----------------------------------------------------------------------------

// Polygraphy's interactive question: the answer's first letter, lowercased, decides (p: pass,
// f: fail); anything else asks again. Errors: kInvalidArgument when stdin ends first.
Result<debug::CheckResult> ask_verdict(const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  fmt::print(">>> Did '{}' [p]ass or [f]ail? ", what);
  std::fflush(stdout);
  for (std::string line; std::getline(std::cin, line);) {
    const char c = line.empty() ? '\0' : static_cast<char>(std::tolower(static_cast<unsigned char>(line[0])));
    if (c == 'p' || c == 'f') {
      debug::CheckResult r;
      r.verdict = c == 'p' ? debug::Verdict::kGood : debug::Verdict::kBad;
      r.reason = fmt::format("answered '{}'", line);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return r;
    }
    fmt::print(">>> Please choose either: 'p' or 'f': ");
    std::fflush(stdout);
  }
  fmt::print("\n");
  return make_error(StatusCode::kInvalidArgument,
                    "no answer on stdin (interactive mode): give --check CMD ARGS... to decide automatically");
}

struct RepeatArgs {
  std::string until;
  std::string iter_info;
  CheckOptions check;
  ArtifactOptions artifacts;
};

int debug_repeat(const RepeatArgs& args) {
  Result<debug::Until> until = debug::Until::parse(args.until);
  if (!until.ok()) return report_error(until.status());
  Result<std::optional<debug::ExternalChecker>> checker = args.check.checker();
  if (!checker.ok()) return report_error(checker.status());
  if (!*checker) {
    fmt::print("[I] Starting interactive debugging session since no `--check` command was provided\n");
  }
  debug::RepeatSessionConfig config;
  config.until = *until;
  config.check = std::move(*checker);
  config.artifacts = args.artifacts.paths();
  config.artifacts_dir = args.artifacts.artifacts_dir;
  config.iteration_file = args.iter_info;
  debug::RepeatHooks hooks;
  hooks.ask = [](int64_t) { return ask_verdict("this iteration"); };
  hooks.on_start = [&](int64_t index) {
    fmt::print("[I] RUNNING | Iteration {}{}\n", index + 1, remaining(*until, index));
  };
  hooks.on_finish = [&](const debug::IterationOutcome& o) {
    print_check_output(o.result, args.check.show_output);
    fmt::print("[I] {} | Iteration {} | Duration {:.4f}s | {}\n", verdict_word(o.result.verdict), o.index + 1,
               o.result.seconds, o.result.reason);
    print_sorted(o.sorted);
  };
  Result<debug::LoopSummary> summary = debug::run_repeat_session(config, hooks);
  if (!summary.ok()) return report_error(summary.status());
  print_summary(*summary);
  return summary->failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace

void add_debug_repeat(CLI::App& debug, Action& action) {
  auto args = std::make_shared<RepeatArgs>();
  CLI::App* cmd = debug.add_subcommand("repeat", "Run a check repeatedly and sort artifacts into good/ and bad/");
  cmd->add_option("--until", args->until, "Stop after N iterations, at the first pass, or at the first failure")
      ->required();
  cmd->add_option("--iter-info,--iteration-info", args->iter_info,
                  "Write {\"iteration\": i} (0-based) here before each check; removed after it");
  cmd->footer(
      "Without --check it asks after each iteration whether it passed ([p]ass or [f]ail), as Polygraphy does. "
      "Exit code 1 when any iteration failed.");
  args->check.add_to(*cmd);
  args->artifacts.add_to(*cmd);
  accept_check_command(*cmd);
  cmd->callback([args, &action] { action = [args] { return debug_repeat(*args); }; });
}

void add_debug_command(CLI::App& app, Action& action) {
  CLI::App* debug = app.add_subcommand("debug", "Iterative debugging tools (Polygraphy's debug verbs)");
  debug->require_subcommand(1);
  add_debug_build(*debug, action);
  add_debug_precision(*debug, action);
  add_debug_repeat(*debug, action);
  add_debug_reduce(*debug, action);
}

}  // namespace vn::cli
