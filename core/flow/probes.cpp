// SPDX-License-Identifier: Apache-2.0
// The probes of the flowchart's nodes: each answers its node's question (or does its step) on the
// walk, with a one-line summary and the evidence.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/subprocess.h"
#include "core/debug/build.h"
#include "core/debug/builtin_check.h"
#include "core/debug/diff_tactics.h"
#include "core/engine/engine_backend.h"
#include "core/engine/plan.h"
#include "core/engine/tactic_replay.h"
#include "core/eut/local_errors.h"
#include "core/flow/walk.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/surgeon.h"

namespace vn::flow {
namespace {

nlohmann::ordered_json check_json(const debug::CheckResult& r) {
  return {{"verdict", debug::verdict_name(r.verdict)}, {"reason", r.reason}, {"seconds", r.seconds}};
}

nlohmann::ordered_json output_json(const debug::OutputNumbers& o) {
  nlohmann::ordered_json j = {{"output", o.name}};
  if (!o.mismatch.empty()) {
    j["mismatch"] = o.mismatch;
  } else {
    j["max_abs_error"] = number_json(o.max_abs_error);
    j["max_rel_error"] = number_json(o.max_rel_error);
    j["cosine"] = number_json(o.cosine);
  }
  j["atol"] = o.atol;
  j["rtol"] = o.rtol;
  j["tolerance_from"] = o.tolerance_from;
  if (!o.reach.note.empty()) j["tolerance_note"] = o.reach.note;
  return j;
}

// A built-in check's evidence: its verdict, the numbers of the output it is summed up by (failing
// or passing), what its tolerance cannot tell, the reason, and every output's numbers.
nlohmann::ordered_json check_json(const debug::BuiltinCheckDetail& d) {
  nlohmann::ordered_json j = {{"verdict", debug::verdict_name(d.result.verdict)}};
  if (const debug::OutputNumbers* worst = debug::worst_output(d.outputs)) {
    j.update(output_json(*worst));
    // What the tolerance cannot tell on any output, where the output shown says nothing.
    for (const debug::OutputNumbers& o : d.outputs) {
      if (j.contains("tolerance_note") || o.reach.note.empty()) continue;
      j["tolerance_note"] = o.reach.note;
    }
  }
  j["reason"] = d.result.reason;
  j["seconds"] = d.result.seconds;
  if (d.outputs.size() > 1) {
    j["outputs"] = nlohmann::ordered_json::array();
    for (const debug::OutputNumbers& o : d.outputs) j["outputs"].push_back(output_json(o));
  }
  return j;
}

Result<debug::BuiltinCheckDetail> check(Walk& w, const Model& model, const std::vector<TensorMap>& feeds,
                                        const std::vector<TensorMap>* ref) {
  debug::BuiltinCheck builtin;
  builtin.engine.build = w.config.build;
  builtin.compare = w.config.compare;
  builtin.threads = w.config.threads;
  builtin.under_test = w.engine;
  builtin.origin = w.config.tolerance_origin;
  ++w.checks;
  ++w.builds;
  return debug::run_builtin_check(model, feeds, builtin, ref, w.cancel);
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
  if (w.config.watch.model) w.config.watch.model(w.config.model);
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
  w.progress->stage("checking the engine against the reference", ProgressUnit::kCheck,
                    w.config.real_feeds.empty() ? 1 : 2);
  // The reference outputs of the data that fails are kept for the probes after this one.
  VN_ASSIGN_OR_RETURN(std::vector<TensorMap> synthetic_ref,
                      debug::reference_outputs(w.config.model, w.config.synthetic_feeds, w.config.threads, w.cancel));
  VN_ASSIGN_OR_RETURN(const debug::BuiltinCheckDetail synthetic_check,
                      check(w, w.config.model, w.config.synthetic_feeds, &synthetic_ref));
  const debug::CheckResult& synthetic = synthetic_check.result;
  VN_RETURN_IF_ERROR(resolved(synthetic));
  a.evidence["synthetic"] = check_json(synthetic_check);
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
  w.progress->count(1);
  VN_ASSIGN_OR_RETURN(std::vector<TensorMap> real_ref,
                      debug::reference_outputs(w.config.model, w.config.real_feeds, w.config.threads, w.cancel));
  VN_ASSIGN_OR_RETURN(const debug::BuiltinCheckDetail real_check,
                      check(w, w.config.model, w.config.real_feeds, &real_ref));
  const debug::CheckResult& real = real_check.result;
  VN_RETURN_IF_ERROR(resolved(real));
  a.evidence["real"] = check_json(real_check);
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
  setup.builtin.origin = w.config.tolerance_origin;
  std::error_code ec;
  std::filesystem::remove_all(builds_dir(w), ec);
  for (const char* verdict : {"good", "bad", "unresolved"}) std::filesystem::create_directories(builds_dir(w) / verdict, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create: {}", builds_dir(w).string(), ec.message());
  const uint64_t base = w.config.build.builder_seed.value_or(1);
  int good = 0, bad = 0;
  Answered a;
  w.progress->stage("building and checking the engine", ProgressUnit::kBuild, w.config.builds);
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
    w.progress->count(i + 1);
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
    if (w.config.watch.layerwise) w.config.watch.layerwise(nullptr, a.summary);
    return a;
  }
  w.progress->stage("building the engine with every tensor marked");
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
  // A watcher's Tensor screen shows what the comparison keeps of each pair.
  if (w.config.watch.layerwise) lw.digest = DigestLimits{};
  std::vector<LayerInfo> layers;
  if (const std::vector<LayerInfo>* own = build->backend().layers()) {
    layers = *own;
  } else {
    VN_ASSIGN_OR_RETURN(layers, graph_layers(w.config.model.graph));
  }
  w.progress->stage("comparing layer by layer", ProgressUnit::kLayer, static_cast<int64_t>(layers.size()));
  lw.on_tensor = count_layers(*w.progress, layers);
  VN_ASSIGN_OR_RETURN(LayerwiseComparison result, compare_layerwise(reference, build->backend(), w.feeds.front(), lw));
  if (!w.capabilities.layers_alone) {
    w.progress->stage("measuring local errors with an isolated-layers model");
    eut::IsolatedLocalErrors local;
    local.build = w.config.build;
    local.compare = w.config.compare;
    local.threads = w.config.threads;
    local.cancel = w.cancel;
    VN_RETURN_IF_ERROR(eut::add_isolated_local_errors(result, w.config.model, w.feeds.front(), *w.engine, local));
    ++w.builds;
    a.evidence["local_errors"] = "from one run of an isolated-layers model";
  }
  // Layers without a local error are ranked by their accumulated error alone: say which and why.
  const auto skipped = std::find_if(result.layers.begin(), result.layers.end(),
                                    [](const LayerComparison& l) { return !l.local_skipped.empty(); });
  if (skipped != result.layers.end()) {
    a.evidence["local_errors_skipped"] = {
        {"layers", std::count_if(result.layers.begin(), result.layers.end(),
                                 [](const LayerComparison& l) { return !l.local_skipped.empty(); })},
        {"first", skipped->layer.name},
        {"reason", skipped->local_skipped}};
  }
  a.answer = !result.passed();
  size_t failed = 0;
  for (const TensorComparison& t : result.tensors) failed += t.passed ? 0 : 1;
  a.evidence["tensors"] = result.tensors.size();
  a.evidence["failed"] = failed;
  std::optional<size_t> culprit = result.first_nonfinite ? result.first_nonfinite : result.first_culprit;
  if (culprit) a.evidence["first_culprit"] = result.layers[*culprit].layer.name;
  // Below the precision's resolution every tensor large enough fails on rounding alone, and the
  // layer named first may be one that only rounds.
  const Tolerance tolerance = w.config.compare.tolerance_for("");
  a.evidence["tolerance"] = fmt::format("atol {:.5g}, rtol {:.5g} ({})", tolerance.atol, tolerance.rtol,
                                        debug::origin_text(w.config.tolerance_origin));
  const std::string rounding = debug::rounding_note(tolerance, engine::loosest_allowed(w.config.build.allowed));
  if (!rounding.empty()) a.evidence["tolerance_note"] = rounding;
  a.summary = *a.answer ? fmt::format("{} of {} tensor(s) fail with every tensor marked{}", failed, result.tensors.size(),
                                      culprit ? fmt::format("; the first layer introducing the error: '{}'",
                                                            result.layers[*culprit].layer.name)
                                              : "")
                        : fmt::format("all {} tensor(s) pass with every tensor marked: marking hides the failure",
                                      result.tensors.size());
  if (w.config.watch.layerwise) w.config.watch.layerwise(layerwise_session(w.config.model, result, *build), "");
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

Result<debug::BuiltinCheckDetail> check_candidate(Walk& w, const debug::Reducer& reducer,
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
  w.progress->stage("checking the extracted subgraph", ProgressUnit::kCheck, 1);
  VN_ASSIGN_OR_RETURN(const debug::BuiltinCheckDetail checked, check_candidate(w, reducer, candidate));
  const debug::CheckResult& result = checked.result;
  w.progress->count(1);
  if (w.config.watch.extract) {
    ExtractWatch extracted{layer, {}, reducer.describe(candidate), std::string(debug::verdict_name(result.verdict)),
                           result.reason};
    for (int64_t v : nodes) extracted.nodes.push_back(node_label(reducer.model().graph, v));
    w.config.watch.extract(extracted);
  }
  a.evidence["subgraph"] = reducer.describe(candidate);
  a.evidence["check"] = check_json(checked);
  a.answer = result.verdict == debug::Verdict::kBad;
  a.summary = fmt::format("'{}' extracted with its inputs from the reference {}: {}", layer,
                          *a.answer                                          ? "fails alone"
                          : result.verdict == debug::Verdict::kUnresolved ? "cannot run alone on the engine"
                                                                          : "passes alone",
                          result.reason);
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
  const TriageWatch& watch = w.config.watch;
  w.progress->stage("reducing the model", ProgressUnit::kCheck, 0, true);
  if (watch.reduce_start) {
    ReduceStartWatch start{reducer.node_count(), {}, w.config.check ? w.config.workdir / "vernier_debug.onnx" : ""};
    for (int64_t v = 0; v < reducer.node_count(); ++v) {
      start.labels.push_back(fmt::format("{} ({})", node_label(reducer.model().graph, v),
                                         reducer.model().graph.nodes[static_cast<size_t>(v)].op_type));
    }
    watch.reduce_start(start);
  }
  // The bound on the checks comes with each check's progress: check 7 of at most 6 + what the
  // sixth said was left. Before the first, and when the last said none were left (the reducer's
  // bound covers its current stage only), the total is not known.
  debug::ReduceProgress last;
  debug::ReduceObserver observe = [&](const debug::ReduceIteration& it, const debug::ReduceProgress& p) -> Status {
    if (w.reduce_observer) VN_RETURN_IF_ERROR(w.reduce_observer(it, p));
    last = p;
    if (watch.reduce_iteration) watch.reduce_iteration(it, p);
    return Status::OK();
  };
  debug::ReduceOracle oracle = [&](const debug::ReduceCandidate& c, const std::string&) -> Result<debug::CheckResult> {
    w.progress->count(last.checks_done, {}, last.checks_left > 0 ? last.checks_done + last.checks_left : 0);
    if (watch.reduce_check) watch.reduce_check(c);
    if (!w.config.check) {
      VN_ASSIGN_OR_RETURN(debug::BuiltinCheckDetail checked, check_candidate(w, reducer, c));
      return std::move(checked.result);
    }
    VN_RETURN_IF_ERROR(write_candidate(w, reducer, c));
    ++w.checks;
    return w.config.check->run(w.cancel);
  };
  VN_ASSIGN_OR_RETURN(debug::ReduceResult result, reducer.reduce(options, w.reduce_replay, oracle, observe));
  if (watch.reduce_end) watch.reduce_end(result.failed_any ? std::optional(result.minimal) : std::nullopt);
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

}  // namespace

Result<Answered> run_probe(Walk& w, const FlowNode& node) {
  // One function per row of probes.inc: a row without its probe_<name> does not compile.
  using ProbeFn = Result<Answered> (*)(Walk&);
  static constexpr std::pair<std::string_view, ProbeFn> kProbes[] = {
#define VN_PROBE(name, help) {#name, &probe_##name},
#include "core/flow/probes.inc"
#undef VN_PROBE
  };
  w.progress.emplace(&w.config.watch, node.id);
  for (const auto& [name, probe] : kProbes) {
    if (node.probe == name) return probe(w);
  }
  return make_error(StatusCode::kInvalidArgument, "flowchart node '{}': unknown probe '{}'", node.id, node.probe);
}

}  // namespace vn::flow
