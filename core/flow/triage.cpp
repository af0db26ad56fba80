// SPDX-License-Identifier: Apache-2.0
#include "core/flow/triage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/subprocess.h"
#include "core/compare/layerwise.h"
#include "core/flow/bundle.h"
#include "core/flow/session.h"
#include "core/debug/build.h"
#include "core/debug/builtin_check.h"
#include "core/debug/diff_tactics.h"
#include "core/debug/reduce.h"
#include "core/engine/engine_backend.h"
#include "core/engine/plan.h"
#include "core/engine/tactic_replay.h"
#include "core/eut/local_errors.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/surgeon.h"

namespace vn::flow {
namespace {

// What the probes learn and hand on to later probes.
struct Walk {
  Walk(TriageConfig& c, const std::atomic<bool>* k) : config(c), cancel(k) {}

  TriageConfig& config;
  const std::atomic<bool>* cancel;
  std::vector<TensorMap> feeds;        ///< the data the failure shows on
  std::vector<TensorMap> ref_outputs;  ///< the reference's outputs for `feeds`
  /// The reducer of the model over `feeds` (every tensor's reference values), made once for the
  /// extract and reduce probes.
  std::optional<debug::Reducer> reducer;
  std::optional<LayerwiseComparison> layerwise;
  std::string culprit;
  std::string outcome;  ///< set when a probe ends the walk outside the chart's ends
  int64_t checks = 0;   ///< built-in checks run (each one engine build and run)
  int64_t builds = 0;   ///< engine builds, checks included
  std::filesystem::path bad_replay;  ///< the tactic replay of a failing build (intermittency probe)
  std::string lost_failure;  ///< what the last reduction that found no failing candidate saw
  /// The failing case for the bundle, once a probe has pinned it down.
  std::optional<BundleContents> failing;
  /// The iterations of the reduction a resumed session had in progress (checked again by none),
  /// and what is told of every new one (the session records it).
  debug::DebugReplay reduce_replay;
  debug::ReduceObserver reduce_observer;
  /// The engine under test (the config's, or the built-in engine) and what it can do.
  std::shared_ptr<eut::EngineUnderTest> engine;
  eut::Capabilities capabilities;
};

struct Answered {
  std::optional<bool> answer;
  std::string summary;
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
};

nlohmann::ordered_json check_json(const debug::CheckResult& r) {
  return {{"verdict", debug::verdict_name(r.verdict)}, {"reason", r.reason}, {"seconds", r.seconds}};
}

Result<debug::CheckResult> check(Walk& w, const Model& model, const std::vector<TensorMap>& feeds,
                                 const std::vector<TensorMap>* ref) {
  debug::BuiltinCheck builtin;
  builtin.engine.build = w.config.build;
  builtin.compare = w.config.compare;
  builtin.threads = w.config.threads;
  builtin.under_test = w.engine;
  ++w.checks;
  ++w.builds;
  VN_ASSIGN_OR_RETURN(debug::BuiltinCheckDetail detail, debug::run_builtin_check(model, feeds, builtin, ref, w.cancel));
  return detail.result;
}

// The whole model must build and run for triage to learn anything: a check that could not run it
// (the engine refused or crashed) ends the walk with its reason, where a reduction's candidates
// are merely skipped.
Status resolved(const debug::CheckResult& r) {
  if (r.verdict != debug::Verdict::kUnresolved) return Status::OK();
  return make_error(StatusCode::kExternalFailure, "triage cannot go on: {}", r.reason);
}

Result<Answered> probe_sanitize(Walk& w) {
  surgeon::SanitizeOptions options;
  options.fold_constants = true;
  options.cleanup = true;
  surgeon::FoldCounts counts;
  VN_ASSIGN_OR_RETURN(surgeon::Rewrite rewrite, surgeon::sanitize(w.config.model, options, &counts));
  Answered a;
  a.summary = fmt::format("{} node(s) before, {} after: {} folded, {} change(s)", counts.original,
                          rewrite.model.graph.nodes.size(), counts.folded.size(), rewrite.changes.size());
  a.evidence["nodes_before"] = counts.original;
  a.evidence["nodes_after"] = rewrite.model.graph.nodes.size();
  a.evidence["changes"] = rewrite.changes;
  w.config.model = std::move(rewrite.model);
  return a;
}

// The reducer for the model and the failing feeds, made on first use.
Result<const debug::Reducer*> reducer_of(Walk& w) {
  if (!w.reducer) {
    VN_ASSIGN_OR_RETURN(debug::Reducer reducer, debug::Reducer::create(w.config.model, w.feeds, w.config.threads));
    w.reducer.emplace(std::move(reducer));
  }
  return &*w.reducer;
}

Result<Answered> probe_real_data(Walk& w) {
  Answered a;
  // The reference outputs of the data that fails are kept for the probes after this one.
  VN_ASSIGN_OR_RETURN(std::vector<TensorMap> synthetic_ref,
                      debug::reference_outputs(w.config.model, w.config.synthetic_feeds, w.config.threads, w.cancel));
  VN_ASSIGN_OR_RETURN(debug::CheckResult synthetic,
                      check(w, w.config.model, w.config.synthetic_feeds, &synthetic_ref));
  VN_RETURN_IF_ERROR(resolved(synthetic));
  a.evidence["synthetic"] = check_json(synthetic);
  if (w.config.real_feeds.empty()) {
    if (synthetic.verdict != debug::Verdict::kBad) {
      w.outcome = "no_failure";
      a.summary = fmt::format("no real data given (--load-inputs); synthetic data passes ({})", synthetic.reason);
      return a;
    }
    a.answer = false;
    a.summary = fmt::format("no real data given (--load-inputs) to tell; synthetic data fails: {}", synthetic.reason);
    w.feeds = w.config.synthetic_feeds;
    w.ref_outputs = std::move(synthetic_ref);
    return a;
  }
  VN_ASSIGN_OR_RETURN(std::vector<TensorMap> real_ref,
                      debug::reference_outputs(w.config.model, w.config.real_feeds, w.config.threads, w.cancel));
  VN_ASSIGN_OR_RETURN(debug::CheckResult real, check(w, w.config.model, w.config.real_feeds, &real_ref));
  VN_RETURN_IF_ERROR(resolved(real));
  a.evidence["real"] = check_json(real);
  const bool real_bad = real.verdict == debug::Verdict::kBad, synthetic_bad = synthetic.verdict == debug::Verdict::kBad;
  if (!real_bad && !synthetic_bad) {
    w.outcome = "no_failure";
    a.summary = "real and synthetic data both pass";
    return a;
  }
  a.answer = !real_bad;
  a.summary = real_bad ? fmt::format("real data fails too: {}", real.reason)
                       : fmt::format("real data passes, synthetic data fails: {}", synthetic.reason);
  w.feeds = real_bad ? w.config.real_feeds : w.config.synthetic_feeds;
  w.ref_outputs = real_bad ? std::move(real_ref) : std::move(synthetic_ref);
  return a;
}

std::filesystem::path builds_dir(const Walk& w) { return w.config.workdir / "builds"; }

Result<Answered> probe_intermittent(Walk& w) {
  if (!w.capabilities.builds_vary) {
    // Rebuilding an engine whose builds are all alike would only repeat one check.
    Answered a;
    a.answer = false;
    VN_ASSIGN_OR_RETURN(const std::string engine, w.engine->describe());
    a.summary = fmt::format("{} builds a model the same way every time (it says so): not intermittent", engine);
    a.evidence["skipped"] = "builds do not vary";
    a.evidence["capabilities"] = eut::capabilities_json(w.capabilities);
    return a;
  }
  debug::EngineCheckSetup setup;
  setup.model = &w.config.model;
  setup.feeds = &w.feeds;
  setup.ref_outputs = &w.ref_outputs;
  setup.builtin.compare = w.config.compare;
  setup.builtin.threads = w.config.threads;
  setup.builtin.under_test = w.engine;
  std::error_code ec;
  std::filesystem::remove_all(builds_dir(w), ec);
  for (const char* verdict : {"good", "bad", "unresolved"}) std::filesystem::create_directories(builds_dir(w) / verdict, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create: {}", builds_dir(w).string(), ec.message());
  const uint64_t base = w.config.build.builder_seed.value_or(1);
  int good = 0, bad = 0;
  Answered a;
  for (int i = 0; i < w.config.builds; ++i) {
    engine::BuildOptions build = w.config.build;
    build.builder_seed = base + static_cast<uint64_t>(i);
    const std::filesystem::path replay = builds_dir(w) / fmt::format("build{}.json", i);
    if (w.capabilities.tactic_replays) setup.save_tactics = replay;
    ++w.checks;
    ++w.builds;
    VN_ASSIGN_OR_RETURN(debug::EngineCheck built, debug::check_engine_build(setup, build, w.cancel));
    const std::string verdict(debug::verdict_name(built.result.verdict));
    std::filesystem::rename(replay, builds_dir(w) / verdict / replay.filename(), ec);
    if (built.result.verdict == debug::Verdict::kBad && w.bad_replay.empty()) {
      w.bad_replay = builds_dir(w) / verdict / replay.filename();
    }
    good += built.result.verdict == debug::Verdict::kGood;
    bad += built.result.verdict == debug::Verdict::kBad;
    a.evidence["builds"].push_back({{"builder_seed", *build.builder_seed}, {"check", check_json(built.result)}});
  }
  a.answer = good > 0 && bad > 0;
  a.summary = fmt::format("{} of {} build(s) fail, {} pass{}", bad, w.config.builds, good,
                          w.config.build.deterministic ? " (--deterministic: every build makes the same choices)" : "");
  return a;
}

Result<Answered> probe_debug_intermittent(Walk& w) {
  if (!w.capabilities.tactic_replays) {
    Answered a;
    a.answer = false;
    VN_ASSIGN_OR_RETURN(const std::string engine, w.engine->describe());
    a.summary = fmt::format("{} does not tell its tactics, so no tactic diff can separate the builds", engine);
    a.evidence["skipped"] = "no tactic replays";
    return a;
  }
  VN_ASSIGN_OR_RETURN(std::vector<debug::ReplayChoices> good, debug::load_tactic_replays(builds_dir(w) / "good"));
  VN_ASSIGN_OR_RETURN(std::vector<debug::ReplayChoices> bad, debug::load_tactic_replays(builds_dir(w) / "bad"));
  const debug::TacticDiff diff = debug::diff_tactics(good, bad);
  Answered a;
  a.evidence["good_builds"] = diff.good_replays;
  a.evidence["bad_builds"] = diff.bad_replays;
  if (good.empty() || bad.empty()) {
    // Reached by overriding "intermittent?" when every build agreed: with nothing to compare, every
    // choice of the one side would "separate" the builds.
    a.answer = false;
    a.summary = fmt::format("the tactic diff needs good and bad builds; there are {} good and {} bad",
                            diff.good_replays, diff.bad_replays);
    return a;
  }
  for (const debug::LayerSuspects& layer : diff.layers) {
    for (const debug::TacticSuspect& s : layer.suspects) {
      a.evidence["suspects"].push_back({{"layer", s.layer}, {"tactic", s.choice.label}, {"bad", s.bad},
                                        {"good", s.good}, {"score", s.score}, {"p_value", s.p_value}});
    }
  }
  // Found: a choice made by every bad build and by no good one.
  const debug::TacticSuspect* best =
      diff.layers.empty() || diff.layers.front().suspects.empty() ? nullptr : &diff.layers.front().suspects.front();
  a.answer = best && best->score >= 1.0;
  // A faulty kernel fails on every layer that runs it, so when several layers can choose it, each
  // bad build may owe its failure to another layer and no single layer's choice separates the
  // builds. Then a tactic chosen somewhere in every bad build and nowhere in a good one does.
  std::optional<std::pair<std::string, std::vector<std::string>>> across;
  if (!*a.answer && !bad.empty()) {
    auto uses = [](const debug::ReplayChoices& build, const std::string& label) {
      return std::any_of(build.begin(), build.end(), [&](const auto& choice) { return choice.second.label == label; });
    };
    for (const auto& [layer, choice] : bad.front()) {
      const std::string& label = choice.label;
      if (!std::all_of(bad.begin(), bad.end(), [&](const auto& b) { return uses(b, label); }) ||
          std::any_of(good.begin(), good.end(), [&](const auto& g) { return uses(g, label); })) {
        continue;
      }
      std::vector<std::string> layers;
      for (const debug::ReplayChoices& b : bad) {
        for (const auto& [name, c] : b) {
          if (c.label == label && std::find(layers.begin(), layers.end(), name) == layers.end()) layers.push_back(name);
        }
      }
      std::sort(layers.begin(), layers.end());
      across.emplace(label, std::move(layers));
      break;
    }
    a.answer = across.has_value();
  }
  if (across) {
    std::string layers;
    for (const std::string& layer : across->second) layers += fmt::format("{}'{}'", layers.empty() ? "" : ", ", layer);
    w.culprit = fmt::format("tactic {} on layer{} {}", across->first, across->second.size() == 1 ? "" : "s", layers);
    a.evidence["tactic_across_layers"] = {{"tactic", across->first}, {"layers", across->second}};
  } else if (*a.answer) {
    w.culprit = fmt::format("tactic {} of layer '{}'", best->choice.label, best->layer);
  }
  if (*a.answer) {
    // The bundle rebuilds a failing engine exactly: with the tactics of a bad build.
    VN_ASSIGN_OR_RETURN(engine::TacticReplay replay, engine::load_tactic_replay(w.bad_replay));
    BundleContents failing;
    failing.model = w.config.model;
    failing.feeds = w.feeds;
    failing.build = w.config.build;
    failing.build.replay = std::move(replay);
    w.failing = std::move(failing);
    a.summary = across ? fmt::format("{} is in all {} bad build(s) and in none of the {} good one(s); no single "
                                     "layer's choice of it is in every bad build",
                                     w.culprit, diff.bad_replays, diff.good_replays)
                       : fmt::format("{} is in all {} bad build(s) and in none of the {} good one(s) (p = {:.3g})",
                                     w.culprit, best->bad, diff.good_replays, best->p_value);
  } else {
    a.summary = best ? fmt::format("no tactic separates the builds; the best, {} of '{}', scores {:.2f}",
                                   best->choice.label, best->layer, best->score)
                     : "no tactic appears more often in bad builds than in good ones";
  }
  return a;
}

Result<Answered> probe_layerwise(Walk& w) {
  Answered a;
  if (!w.capabilities.intermediate_tensors) {
    VN_ASSIGN_OR_RETURN(const std::string engine, w.engine->describe());
    a.answer = false;
    a.summary = fmt::format("{} cannot return intermediate tensors, so no layer-wise comparison", engine);
    a.evidence["skipped"] = "no intermediate tensors";
    return a;
  }
  ref::ReferenceBackend reference;
  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = w.config.threads;
  VN_RETURN_IF_ERROR(reference.prepare(w.config.model, prep));
  VN_ASSIGN_OR_RETURN(std::unique_ptr<eut::Build> build, w.engine->build(w.config.model, w.config.build, prep));
  ++w.builds;
  LayerwiseOptions lw;
  lw.config = w.config.compare;
  // An engine that cannot run its layers alone gets its local errors from an isolated-layers model
  // afterwards; its layers are the model's nodes.
  lw.local_errors = w.capabilities.layers_alone;
  lw.layer_graph = &w.config.model.graph;
  lw.cancel = w.cancel;
  VN_ASSIGN_OR_RETURN(LayerwiseComparison result, compare_layerwise(reference, build->backend(), w.feeds.front(), lw));
  if (!w.capabilities.layers_alone) {
    eut::IsolatedLocalErrors local;
    local.build = w.config.build;
    local.compare = w.config.compare;
    local.threads = w.config.threads;
    local.cancel = w.cancel;
    VN_RETURN_IF_ERROR(eut::add_isolated_local_errors(result, w.config.model, w.feeds.front(), *w.engine, local));
    ++w.builds;
    a.evidence["local_errors"] = "from one run of an isolated-layers model";
  }
  a.answer = !result.passed();
  size_t failed = 0;
  for (const TensorComparison& t : result.tensors) failed += t.passed ? 0 : 1;
  a.evidence["tensors"] = result.tensors.size();
  a.evidence["failed"] = failed;
  std::optional<size_t> culprit = result.first_nonfinite ? result.first_nonfinite : result.first_culprit;
  if (culprit) a.evidence["first_culprit"] = result.layers[*culprit].layer.name;
  a.summary = *a.answer ? fmt::format("{} of {} tensor(s) fail with every tensor marked{}", failed, result.tensors.size(),
                                      culprit ? fmt::format("; the first layer introducing the error: '{}'",
                                                            result.layers[*culprit].layer.name)
                                              : "")
                        : fmt::format("all {} tensor(s) pass with every tensor marked: marking hides the failure",
                                      result.tensors.size());
  w.layerwise = std::move(result);
  return a;
}

Status keep_failing(Walk& w, const debug::Reducer& reducer, const debug::ReduceCandidate& candidate) {
  BundleContents failing;
  VN_ASSIGN_OR_RETURN(failing.model, reducer.build_model(candidate));
  failing.feeds = reducer.build_feeds(candidate);
  failing.build = w.config.build;
  w.failing = std::move(failing);
  return Status::OK();
}

Result<debug::CheckResult> check_candidate(Walk& w, const debug::Reducer& reducer,
                                           const debug::ReduceCandidate& candidate) {
  VN_ASSIGN_OR_RETURN(Model model, reducer.build_model(candidate));
  const std::vector<TensorMap> expected = reducer.reference_outputs(candidate);
  return check(w, model, reducer.build_feeds(candidate), &expected);
}

// Writes a candidate where the external check reads it: vernier_debug.onnx and its inputs as a
// Polygraphy feed list, vernier_debug_inputs.json, in the work folder (debug reduce's names).
Status write_candidate(const Walk& w, const debug::Reducer& reducer, const debug::ReduceCandidate& candidate) {
  VN_ASSIGN_OR_RETURN(Model model, reducer.build_model(candidate));
  VN_RETURN_IF_ERROR(save_model(model, w.config.workdir / "vernier_debug.onnx"));
  return io::save_feed_list(reducer.build_feeds(candidate), w.config.workdir / "vernier_debug_inputs.json");
}

nlohmann::ordered_json external_check_json(const debug::ExternalCheck& check) {
  return {{"command", check.argv},
          {"fail_regex", check.fail_regex},
          {"fail_code", check.fail_codes},
          {"ignore_fail_code", check.ignore_fail_codes}};
}

Result<Answered> probe_extract(Walk& w) {
  Answered a;
  const LayerwiseComparison& lw = *w.layerwise;
  std::optional<size_t> index = lw.first_nonfinite ? lw.first_nonfinite : lw.first_culprit;
  if (!index && !lw.ranking().empty()) index = lw.ranking().front();
  if (!index) {
    a.answer = false;
    a.summary = "no layer stands out in the layer-wise comparison";
    return a;
  }
  const std::string layer = lw.layers[*index].layer.name;
  VN_ASSIGN_OR_RETURN(const debug::Reducer* reducer_ptr, reducer_of(w));
  const debug::Reducer& reducer = *reducer_ptr;
  // A fused layer is named after its nodes joined with " + ".
  std::vector<int64_t> nodes;
  for (int64_t v = 0; v < reducer.node_count(); ++v) {
    const std::string label = node_label(reducer.model().graph, v);
    size_t start = 0;
    while (start <= layer.size()) {
      const size_t end = std::min(layer.find(" + ", start), layer.size());
      if (layer.compare(start, end - start, label) == 0 && label.size() == end - start) nodes.push_back(v);
      start = end + 3;
    }
  }
  a.evidence["layer"] = layer;
  if (nodes.empty()) {
    a.answer = false;
    a.summary = fmt::format("layer '{}' has no node left to extract", layer);
    return a;
  }
  const debug::ReduceCandidate candidate = reducer.candidate_of(nodes);
  VN_ASSIGN_OR_RETURN(debug::CheckResult result, check_candidate(w, reducer, candidate));
  a.evidence["subgraph"] = reducer.describe(candidate);
  a.evidence["check"] = check_json(result);
  a.answer = result.verdict == debug::Verdict::kBad;
  a.summary = fmt::format("'{}' extracted with its inputs from the reference {}: {}", layer,
                          *a.answer ? "fails alone" : "passes alone", result.reason);
  if (*a.answer) {
    w.culprit = fmt::format("layer '{}'", layer);
    VN_RETURN_IF_ERROR(keep_failing(w, reducer, candidate));
  }
  return a;
}

Result<Answered> probe_reduce(Walk& w) {
  VN_ASSIGN_OR_RETURN(const debug::Reducer* reducer_ptr, reducer_of(w));
  const debug::Reducer& reducer = *reducer_ptr;
  debug::ReduceOptions options;
  options.mode = debug::ReduceMode::kDdmin;
  debug::ReduceOracle oracle = [&](const debug::ReduceCandidate& c, const std::string&) -> Result<debug::CheckResult> {
    if (!w.config.check) return check_candidate(w, reducer, c);
    VN_RETURN_IF_ERROR(write_candidate(w, reducer, c));
    ++w.checks;
    return w.config.check->run(w.cancel);
  };
  VN_ASSIGN_OR_RETURN(debug::ReduceResult result, reducer.reduce(options, w.reduce_replay, oracle, w.reduce_observer));
  // Iterations a resumed session replayed were checked by an earlier run: they count too.
  result.checks = static_cast<int64_t>(result.history.size());
  Answered a;
  if (w.config.check) a.evidence["check"] = external_check_json(w.config.check->check());
  a.evidence["checks"] = result.checks;
  a.evidence["nodes_before"] = reducer.node_count();
  // The iteration to show: the first whose command failed though its verdict was not bad (a fail
  // regex or code that misses the failure's message), else the first.
  const debug::ReduceIteration* shown = result.history.empty() ? nullptr : &result.history.front();
  int64_t missed = 0;
  for (const debug::ReduceIteration& it : result.history) {
    if (!it.result.process || it.result.process->succeeded() || it.result.verdict == debug::Verdict::kBad) continue;
    if (missed++ == 0) shown = &it;
  }
  if (shown) {
    nlohmann::ordered_json seen = check_json(shown->result);
    seen["candidate"] = reducer.describe(shown->candidate);
    if (shown->result.process) {
      seen["output"] = last_lines(shown->result.process->out + "\n" + shown->result.process->err, 2);
    }
    a.evidence["shown_check"] = std::move(seen);
  }
  if (w.config.check) a.evidence["checks_failing_without_bad_verdict"] = missed;
  a.answer = result.failed_any;
  if (!result.failed_any) {
    a.summary = fmt::format("no candidate failed in {} check(s)", result.checks);
    if (w.config.check && shown) {
      const debug::CheckResult& r = shown->result;
      a.summary += fmt::format(
          " of the check `{}`; {} of them exited with a failure but were not counted bad; one, of {} node(s), was {} "
          "({}){}",
          fmt::join(w.config.check->check().argv, " "), missed, shown->candidate.nodes.size(),
          debug::verdict_name(r.verdict), r.reason,
          r.process ? fmt::format(", its output ending '{}'", last_lines(r.process->out + "\n" + r.process->err, 1))
                    : "");
    }
    w.lost_failure = a.summary;
    return a;
  }
  a.evidence["minimal"] = reducer.describe(result.minimal);
  a.summary = fmt::format("reduced {} node(s) to {} in {} check(s): {}", reducer.node_count(),
                          result.minimal.nodes.size(), result.checks, reducer.describe(result.minimal));
  std::string nodes;
  for (int64_t v : result.minimal.nodes) {
    nodes += fmt::format("{}'{}'", nodes.empty() ? "" : ", ", node_label(reducer.model().graph, v));
  }
  w.culprit = fmt::format("{} {}", result.minimal.nodes.size() == 1 ? "node" : "nodes", nodes);
  VN_RETURN_IF_ERROR(keep_failing(w, reducer, result.minimal));
  return a;
}

// Headless triage cannot edit the check; a reduction that lost the failure ends here, saying
// what the check saw so the user can fix it.
Result<Answered> probe_double_check(Walk& w) {
  w.outcome = "not_localized";
  Answered a;
  if (w.config.check) {
    const debug::ExternalCheck& check = w.config.check->check();
    a.evidence["check"] = external_check_json(check);
    a.summary = fmt::format(
        "the reduction lost the failure: {}. Make the check fail for this failure only ({}), then triage again",
        w.lost_failure,
        check.fail_regex.empty() ? "--fail-regex matching its message, --fail-code or --ignore-fail-code"
                                 : fmt::format("does --fail-regex '{}' match its message?",
                                               fmt::join(check.fail_regex, "' '")));
  } else {
    a.summary = fmt::format(
        "the reduction lost the failure ({}); check the tolerances and the engine options, or give a --check, "
        "then triage again",
        w.lost_failure);
  }
  a.evidence["reduction"] = w.lost_failure;
  return a;
}

Result<Answered> run_probe(Walk& w, const FlowNode& node) {
  if (node.probe == "sanitize") return probe_sanitize(w);
  if (node.probe == "real_data") return probe_real_data(w);
  if (node.probe == "intermittent") return probe_intermittent(w);
  if (node.probe == "debug_intermittent") return probe_debug_intermittent(w);
  if (node.probe == "layerwise") return probe_layerwise(w);
  if (node.probe == "extract") return probe_extract(w);
  if (node.probe == "reduce") return probe_reduce(w);
  if (node.probe == "double_check") return probe_double_check(w);
  return make_error(StatusCode::kInvalidArgument, "flowchart node '{}': unknown probe '{}'", node.id, node.probe);
}

// The path so far as a numbered Markdown list, for the bundle's report.
std::string path_markdown(const std::vector<TriageStep>& path, const Flowchart& chart) {
  std::string text;
  for (size_t i = 0; i < path.size(); ++i) {
    const FlowNode* node = chart.find(path[i].node);
    std::string answer;
    if (path[i].answer && node) answer = fmt::format(" — {}", *path[i].answer ? node->yes.label : node->no.label);
    text += fmt::format("{}. **{}**{}\n   {} ({:.2f} s, {} engine build(s), {} check(s))\n", i + 1,
                        node ? node->title : path[i].node, answer, path[i].summary, path[i].seconds, path[i].builds,
                        path[i].checks);
  }
  return text;
}

// ---- What the answered steps hand on, for the session state ----

// Numbers that may be infinite or NaN (tolerance excesses) as JSON, which has no literal for them.
nlohmann::ordered_json number_json(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

double number_from(const nlohmann::ordered_json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string text = j.is_string() ? j.get<std::string>() : "nan";
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::ordered_json index_json(const std::optional<size_t>& index) {
  return index ? nlohmann::ordered_json(*index) : nlohmann::ordered_json();
}

// The layers of a layer-wise comparison with their culprit fields: what later probes read of it
// (the tensors' comparisons stay in the step's evidence).
nlohmann::ordered_json layerwise_json(const LayerwiseComparison& lw) {
  nlohmann::ordered_json j;
  j["local_errors"] = lw.local_errors;
  j["first_culprit"] = index_json(lw.first_culprit);
  j["first_nonfinite"] = index_json(lw.first_nonfinite);
  j["layers"] = nlohmann::ordered_json::array();
  for (const LayerComparison& l : lw.layers) {
    j["layers"].push_back({{"name", l.layer.name},
                           {"op", l.layer.op},
                           {"node", l.layer.node},
                           {"inputs", l.layer.inputs},
                           {"outputs", l.layer.outputs},
                           {"accumulated_excess", number_json(l.accumulated_excess)},
                           {"input_excess", number_json(l.input_excess)},
                           {"local_excess", number_json(l.local_excess)},
                           {"inputs_within", l.inputs_within},
                           {"introduces", l.introduces},
                           {"nonfinite", l.nonfinite},
                           {"score", number_json(l.score)},
                           {"rank", l.rank}});
  }
  return j;
}

LayerwiseComparison layerwise_from_json(const nlohmann::ordered_json& j) {
  LayerwiseComparison lw;
  lw.local_errors = j.value("local_errors", false);
  auto index = [&](const char* key) -> std::optional<size_t> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<size_t>();
  };
  for (const nlohmann::ordered_json& l : j.value("layers", nlohmann::ordered_json::array())) {
    LayerComparison layer;
    layer.layer.name = l.value("name", "");
    layer.layer.op = l.value("op", "");
    layer.layer.node = l.value("node", int64_t{-1});
    layer.layer.inputs = l.value("inputs", std::vector<std::string>{});
    layer.layer.outputs = l.value("outputs", std::vector<std::string>{});
    layer.accumulated_excess = number_from(l.value("accumulated_excess", nlohmann::ordered_json(0)));
    layer.input_excess = number_from(l.value("input_excess", nlohmann::ordered_json(0)));
    layer.local_excess = number_from(l.value("local_excess", nlohmann::ordered_json(-1)));
    layer.inputs_within = l.value("inputs_within", true);
    layer.introduces = l.value("introduces", false);
    layer.nonfinite = l.value("nonfinite", false);
    layer.score = number_from(l.value("score", nlohmann::ordered_json(0)));
    layer.rank = l.value("rank", 0);
    lw.layers.push_back(std::move(layer));
  }
  const std::optional<size_t> culprit = index("first_culprit"), nonfinite = index("first_nonfinite");
  if (culprit && *culprit < lw.layers.size()) lw.first_culprit = culprit;
  if (nonfinite && *nonfinite < lw.layers.size()) lw.first_nonfinite = nonfinite;
  return lw;
}

bool same_feeds(const std::vector<TensorMap>& a, const std::vector<TensorMap>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (const NamedTensor& t : a[i]) {
      const Tensor* other = b[i].find(t.name);
      if (!other || !other->same_as(t.tensor)) return false;
    }
  }
  return true;
}

// Where a file of the session folder is recorded: relative to the work folder, so a moved work
// folder still resumes.
std::string session_file(const TriageSession& session, const std::filesystem::path& path) {
  return std::filesystem::relative(path, session.workdir()).generic_string();
}

// Keeps what the walk hands on in the session: small values in the state, models and feeds as
// files in the session folder (written when they change). `saved_model_hash` is the hash of the
// model file written last.
Result<nlohmann::ordered_json> walk_json(const Walk& w, const TriageSession& session, std::string& saved_model_hash) {
  nlohmann::ordered_json j = session.walk();
  VN_ASSIGN_OR_RETURN(const std::filesystem::path dir, session.files_dir());
  // A probe that rewrote the model (sanitize) hands the new model on.
  const std::string hash = engine::model_hash(w.config.model);
  if (hash != saved_model_hash) {
    VN_RETURN_IF_ERROR(save_model(w.config.model, dir / "model.onnx"));
    saved_model_hash = hash;
    j["model"] = session_file(session, dir / "model.onnx");
    j["model_hash"] = hash;
  }
  if (w.feeds.empty()) {
    j["feeds"] = "none";
  } else if (!w.config.real_feeds.empty() && same_feeds(w.feeds, w.config.real_feeds)) {
    j["feeds"] = "real";
  } else if (same_feeds(w.feeds, w.config.synthetic_feeds)) {
    j["feeds"] = "synthetic";
  } else {
    VN_RETURN_IF_ERROR(io::save_feed_list(w.feeds, dir / "feeds.json"));
    j["feeds"] = session_file(session, dir / "feeds.json");
  }
  if (w.layerwise) j["layerwise"] = layerwise_json(*w.layerwise);
  j["culprit"] = w.culprit;
  j["outcome"] = w.outcome;
  j["checks"] = w.checks;
  j["engine_builds"] = w.builds;
  j["bad_replay"] = w.bad_replay.empty() ? "" : session_file(session, w.bad_replay);
  if (w.failing) {
    VN_RETURN_IF_ERROR(save_model(w.failing->model, dir / "failing.onnx"));
    VN_RETURN_IF_ERROR(io::save_feed_list(w.failing->feeds, dir / "failing_inputs.json"));
    j["failing"] = {{"model", session_file(session, dir / "failing.onnx")},
                    {"inputs", session_file(session, dir / "failing_inputs.json")},
                    {"tactics", w.failing->build.replay ? engine::tactic_replay_to_json(*w.failing->build.replay)
                                                        : nlohmann::ordered_json()}};
  } else {
    j.erase("failing");
  }
  return j;
}

// Restores what walk_json kept. The reference outputs of the failing data are computed again
// (a reference run, not a check).
Status restore_walk(Walk& w, const TriageSession& session, std::string& saved_model_hash) {
  const nlohmann::ordered_json& j = session.walk();
  const std::filesystem::path& workdir = session.workdir();
  auto bad = [&](std::string_view what) {
    return make_error(StatusCode::kIoError, "{}: walk: {}", session.file().string(), what);
  };
  if (j.contains("model")) {
    const std::filesystem::path file = workdir / j.value("model", "");
    VN_ASSIGN_OR_RETURN(Model model, load_model(file));
    VN_RETURN_IF_NOT(engine::model_hash(model) == j.value("model_hash", ""), StatusCode::kIoError,
                     "{}: not the model this session saved (its hash differs)", file.string());
    w.config.model = std::move(model);
  }
  saved_model_hash = engine::model_hash(w.config.model);
  const std::string feeds = j.value("feeds", "none");
  if (feeds == "real") {
    w.feeds = w.config.real_feeds;
  } else if (feeds == "synthetic") {
    w.feeds = w.config.synthetic_feeds;
  } else if (feeds != "none") {
    VN_ASSIGN_OR_RETURN(w.feeds, io::load_feed_list(workdir / feeds));
  }
  if (feeds == "real" && w.config.real_feeds.empty()) return bad("the failing data is the real data, and none is given");
  if (!w.feeds.empty()) {
    VN_ASSIGN_OR_RETURN(w.ref_outputs, debug::reference_outputs(w.config.model, w.feeds, w.config.threads, w.cancel));
  }
  if (const auto lw = j.find("layerwise"); lw != j.end()) {
    if (!lw->is_object()) return bad("'layerwise' is not an object");
    w.layerwise = layerwise_from_json(*lw);
  }
  w.culprit = j.value("culprit", "");
  w.outcome = j.value("outcome", "");
  w.checks = j.value("checks", int64_t{0});
  w.builds = j.value("engine_builds", int64_t{0});
  if (const std::string replay = j.value("bad_replay", ""); !replay.empty()) w.bad_replay = workdir / replay;
  if (const auto failing = j.find("failing"); failing != j.end()) {
    if (!failing->is_object()) return bad("'failing' is not an object");
    BundleContents contents;
    VN_ASSIGN_OR_RETURN(contents.model, load_model(workdir / failing->value("model", "")));
    VN_ASSIGN_OR_RETURN(contents.feeds, io::load_feed_list(workdir / failing->value("inputs", "")));
    contents.build = w.config.build;
    if (const auto tactics = failing->find("tactics"); tactics != failing->end() && !tactics->is_null()) {
      VN_ASSIGN_OR_RETURN(engine::TacticReplay replay, engine::tactic_replay_from_json(*tactics));
      contents.build.replay = std::move(replay);
    }
    w.failing = std::move(contents);
  }
  return Status::OK();
}

// Brings a new session's state file into being, or a resumed one's walk back: the steps it
// answered (shown to `observe`) and what they hand on. Returns the node to continue at, null when
// the session had ended.
Result<const FlowNode*> open_session(Walk& w, TriageSession& session, const Flowchart& chart, TriageResult& result,
                                     const TriageObserver& observe, std::string& saved_model_hash) {
  if (!session.resumed()) {
    saved_model_hash = engine::model_hash(w.config.model);
    session.start_at(chart.start);
    VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, session, saved_model_hash));
    session.set_walk(std::move(walk));
    VN_RETURN_IF_ERROR(session.save());
    return chart.find(chart.start);
  }
  VN_RETURN_IF_NOT(engine::model_hash(w.config.model) == session.model_hash(), StatusCode::kInvalidArgument,
                   "{}: the model is not the one this session started with (its hash differs)",
                   session.file().string());
  for (const TriageStep& step : session.path()) {
    const FlowNode* node = chart.find(step.node);
    VN_RETURN_IF_NOT(node != nullptr, StatusCode::kInvalidArgument, "{}: step '{}' is not a node of the flowchart",
                     session.file().string(), step.node);
    result.path.push_back(step);
    if (observe) observe(step, *node);
  }
  VN_RETURN_IF_ERROR(restore_walk(w, session, saved_model_hash));
  VN_RETURN_IF_ERROR(session.save());  // the new run is counted
  if (session.ended()) {
    result.outcome = session.outcome();
    result.culprit = session.culprit();
    result.bundle = session.bundle();
    return nullptr;
  }
  const FlowNode* next = chart.find(session.next());
  VN_RETURN_IF_NOT(next != nullptr, StatusCode::kInvalidArgument, "{}: next step '{}' is not a node of the flowchart",
                   session.file().string(), session.next());
  return next;
}

}  // namespace

Result<TriageResult> triage_headless(const Flowchart& chart, TriageConfig config, const TriageObserver& observe,
                                     const std::atomic<bool>* cancel) {
  VN_RETURN_IF_NOT(!config.synthetic_feeds.empty(), StatusCode::kInvalidArgument, "triage: no synthetic feeds");
  std::error_code ec;
  std::filesystem::create_directories(config.workdir, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create the work folder: {}", config.workdir.string(),
                   ec.message());
  Walk w(config, cancel);
  w.engine = config.engine ? config.engine : eut::builtin_engine();
  VN_ASSIGN_OR_RETURN(w.capabilities, w.engine->capabilities());
  TriageResult result;
  VN_ASSIGN_OR_RETURN(result.engine, w.engine->describe());
  TriageSession* session = config.session;
  std::string saved_model_hash;
  const FlowNode* node = chart.find(chart.start);
  if (session) {
    VN_ASSIGN_OR_RETURN(node, open_session(w, *session, chart, result, observe, saved_model_hash));
    if (!node && session->ended()) return result;
  }
  // Every node but double_check's loop back is visited at most once; the guard bounds a chart
  // edited into a longer cycle.
  for (size_t visits = 0; node && visits < 4 * chart.nodes.size(); ++visits) {
    if (cancel && cancel->load()) return Status(StatusCode::kCancelled, "triage cancelled");
    if (node->kind == NodeKind::kEnd) {
      result.outcome = node->outcome;
      TriageStep step{node->id, std::nullopt, node->title, nlohmann::ordered_json::object()};
      if (w.failing) {
        w.failing->compare = w.config.compare;
        w.failing->threads = w.config.threads;
        w.failing->engine = w.engine;
        w.failing->culprit = w.culprit;
        w.failing->triage_path = path_markdown(result.path, chart);
        result.bundle = w.config.workdir / "bundle";
        VN_RETURN_IF_ERROR(write_bundle(result.bundle, *w.failing));
        step.summary = fmt::format("bug-report bundle written to {}", result.bundle.string());
      }
      result.path.push_back(step);
      if (session) {
        VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
        session->record_step(step, "", std::move(walk));
        session->end(result.outcome, w.culprit, result.bundle.string());
        VN_RETURN_IF_ERROR(session->save());
      }
      if (observe) observe(step, *node);
      break;
    }
    // A reduction this step had in progress when the session stopped continues from its recorded
    // iterations, with what it had cost.
    double seconds_before = 0;
    int64_t checks_before = w.checks, builds_before = w.builds;
    w.reduce_replay = debug::DebugReplay();
    if (session && session->reduce() && session->reduce()->node == node->id) {
      const SessionReduce& reduce = *session->reduce();
      w.reduce_replay = reduce.replay();
      seconds_before = reduce.seconds;
      checks_before -= reduce.checks;
      builds_before -= reduce.builds;
    }
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    w.reduce_observer = [&](const debug::ReduceIteration& it, const debug::ReduceProgress&) -> Status {
      if (!session || it.replayed) return Status::OK();
      session->record_iteration(node->id, it, elapsed(), w.builds - builds_before, w.checks - checks_before);
      return session->save();
    };
    TriageStep step;
    const bool pending = session && session->pending() && session->pending()->node == node->id;
    if (pending) {
      // The probe answered in an earlier run; only the decision is asked again.
      step = *session->pending();
    } else {
      Result<Answered> probed = run_probe(w, *node);
      w.reduce_observer = nullptr;
      VN_ASSIGN_OR_RETURN(Answered answered, std::move(probed));
      step = TriageStep{node->id, answered.answer, answered.summary, std::move(answered.evidence)};
      step.seconds = elapsed();
      step.checks = w.checks - checks_before;
      step.builds = w.builds - builds_before;
    }
    const bool ask = node->kind == NodeKind::kQuestion && w.outcome.empty() && w.config.decide;
    if (ask) {
      if (session && !pending) {
        VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
        session->set_pending(step, std::move(walk));
        VN_RETURN_IF_ERROR(session->save());
      }
      const bool chosen = w.config.decide(*node, step);
      step.overridden = chosen != step.answer.value_or(chosen);
      step.answer = chosen;
    }
    step.resumed = false;
    const FlowNode* next = nullptr;
    if (w.outcome.empty()) {
      next = chart.find(node->kind == NodeKind::kStep ? node->next : (*step.answer ? node->yes.next : node->no.next));
    }
    result.path.push_back(step);
    if (session) {
      VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
      session->record_step(step, next ? next->id : "", std::move(walk));
      if (!w.outcome.empty()) session->end(w.outcome, w.culprit, "");
      VN_RETURN_IF_ERROR(session->save());
    }
    if (observe) observe(step, *node);
    if (!w.outcome.empty()) {
      result.outcome = w.outcome;
      break;
    }
    node = next;
  }
  result.culprit = w.culprit;
  return result;
}

nlohmann::ordered_json triage_report(const TriageResult& result, const Flowchart& chart) {
  nlohmann::ordered_json report;
  report["outcome"] = result.outcome;
  report["culprit"] = result.culprit;
  report["engine"] = result.engine;
  report["bundle"] = result.bundle.string();
  for (const TriageStep& step : result.path) {
    const FlowNode* node = chart.find(step.node);
    nlohmann::ordered_json entry;
    entry["node"] = step.node;
    entry["title"] = node ? node->title : "";
    if (step.answer) entry["answer"] = *step.answer ? "yes" : "no";
    if (step.overridden) entry["overridden"] = true;
    entry["summary"] = step.summary;
    entry["seconds"] = step.seconds;
    entry["engine_builds"] = step.builds;
    entry["checks"] = step.checks;
    entry["evidence"] = step.evidence;
    report["path"].push_back(std::move(entry));
  }
  return report;
}

}  // namespace vn::flow
