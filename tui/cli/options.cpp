// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/options.h"

#include <unistd.h>

#include <cstdlib>
#include <system_error>

#include "core/data/feeds.h"
#include "core/engine/tactic_replay.h"
#include "core/backend/runner_registry.h"
#include "core/eut/engine_model.h"
#include "core/eut/runner_engine.h"
#include "core/ir/onnx_import.h"
#include "core/io/polygraphy_json.h"

namespace vn::cli {
namespace {

Result<double> parse_double(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
    // std::stod is the only thrower here; a parse failure falls through to the error below.
  }
  return make_error(StatusCode::kInvalidArgument, "{}: '{}' is not a number", what, s);
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::pair<std::string, std::string> split_name_value(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return {"", text};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

Result<std::pair<std::string, Shape>> parse_input_shape(const std::string& text) {
  const size_t open = text.rfind(":[");
  if (open == std::string::npos || text.back() != ']') {
    return make_error(StatusCode::kInvalidArgument, "--input-shapes '{}': expected NAME:[D0,D1,...]", text);
  }
  std::pair<std::string, Shape> out{text.substr(0, open), {}};
  const std::string body = text.substr(open + 2, text.size() - open - 3);
  size_t pos = 0;
  while (pos <= body.size() && !trim(body).empty()) {
    const size_t comma = body.find(',', pos);
    const std::string item = trim(body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    VN_ASSIGN_OR_RETURN(double d, parse_double(item, "--input-shapes " + out.first));
    if (d < 0 || d != static_cast<double>(static_cast<int64_t>(d))) {
      return make_error(StatusCode::kInvalidArgument, "--input-shapes '{}': dimension '{}' is not a size", text, item);
    }
    out.second.push_back(static_cast<int64_t>(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Result<std::pair<std::string, data::ValRange>> parse_val_range(const std::string& text) {
  const size_t open = text.rfind('[');
  if (open == std::string::npos || text.back() != ']' || (open > 0 && text[open - 1] != ':')) {
    return make_error(StatusCode::kInvalidArgument, "--val-range '{}': expected [NAME:][MIN,MAX]", text);
  }
  const std::string name = open > 0 ? text.substr(0, open - 1) : "";
  const std::string body = text.substr(open + 1, text.size() - open - 2);
  const size_t comma = body.find(',');
  if (comma == std::string::npos) {
    return make_error(StatusCode::kInvalidArgument, "--val-range '{}': expected two bounds MIN,MAX", text);
  }
  VN_ASSIGN_OR_RETURN(double lo, parse_double(trim(body.substr(0, comma)), "--val-range"));
  VN_ASSIGN_OR_RETURN(double hi, parse_double(trim(body.substr(comma + 1)), "--val-range"));
  if (hi < lo) return make_error(StatusCode::kInvalidArgument, "--val-range '{}': MAX is below MIN", text);
  return std::pair<std::string, data::ValRange>{name, data::ValRange{lo, hi}};
}

void DataOptions::add_to(CLI::App& app) {
  const char* group = "Data";
  app.add_option("--seed", seed, "Seed of the synthetic data (iteration i uses seed+i)")->group(group);
  app.add_option("--val-range", val_ranges, "Synthetic value range [NAME:][MIN,MAX]; no name = every input")
      ->group(group);
  app.add_option("--float-min", float_min, "Lower bound of synthetic float data (overrides --val-range)")->group(group);
  app.add_option("--float-max", float_max, "Upper bound of synthetic float data (overrides --val-range)")->group(group);
  app.add_option("--int-min", int_min, "Lower bound of synthetic integer data (overrides --val-range)")->group(group);
  app.add_option("--int-max", int_max, "Upper bound of synthetic integer data (overrides --val-range)")->group(group);
  app.add_option("--load-inputs", load_inputs,
                 "Feeds: Polygraphy feed-list .json, .npz, .pb or an ONNX test folder; several mean several "
                 "iterations")
      ->group(group);
  app.add_option("--save-inputs", save_inputs, "Save the feeds as a Polygraphy feed-list JSON")->group(group);
  app.add_option("--input-shapes", input_shapes, "Shapes for dynamic inputs, NAME:[D0,D1,...]")->group(group);
  app.add_option("--iterations", iterations, "Number of synthetic feeds (seed, seed+1, ...)")
      ->check(CLI::Range(1, 100000))
      ->group(group);
}

Result<data::SyntheticOptions> DataOptions::synthetic_options() const {
  data::SyntheticOptions opts;
  opts.seed = seed;
  opts.iterations = iterations;
  opts.float_min = float_min;
  opts.float_max = float_max;
  opts.int_min = int_min;
  opts.int_max = int_max;
  for (const std::string& r : val_ranges) {
    VN_ASSIGN_OR_RETURN(auto parsed, parse_val_range(r));
    opts.val_ranges[parsed.first] = parsed.second;
  }
  for (const std::string& s : input_shapes) {
    VN_ASSIGN_OR_RETURN(auto parsed, parse_input_shape(s));
    opts.input_shapes[parsed.first] = parsed.second;
  }
  return opts;
}

Result<std::vector<TensorMap>> DataOptions::make_feeds(const Graph& graph) const {
  std::vector<TensorMap> feeds;
  if (!load_inputs.empty()) {
    std::vector<std::filesystem::path> paths(load_inputs.begin(), load_inputs.end());
    VN_ASSIGN_OR_RETURN(feeds, data::load_feeds(paths, graph));
  } else {
    VN_ASSIGN_OR_RETURN(const data::SyntheticOptions opts, synthetic_options());
    for (const auto& [name, shape] : opts.input_shapes) {
      bool found = false;
      for (const ValueInfo* in : graph.runtime_inputs()) found = found || in->name == name;
      if (!found) {
        return make_error(StatusCode::kNotFound, "--input-shapes names '{}', which is not an input of the model", name);
      }
    }
    VN_ASSIGN_OR_RETURN(feeds, data::generate_feeds(graph, opts));
  }
  if (!save_inputs.empty()) VN_RETURN_IF_ERROR(io::save_feed_list(feeds, save_inputs));
  return feeds;
}

void OutputOptions::add_to(CLI::App& app) {
  const char* group = "Outputs";
  app.add_option("--outputs", outputs, "Mark these tensors as outputs")->group(group);
  app.add_flag("--mark-all", mark_all, "Mark every tensor (layer-wise mode)")->group(group);
  app.add_option("--save-outputs", save_outputs,
                 "Save results: .json = Polygraphy RunResults, .npz = one array per tensor")
      ->group(group);
}

void ProfileOptions::add_to(CLI::App& app) {
  app.add_flag("--profile", profile,
               "Time every layer of --ref and --engine: time per op type and per layer (also in --report-json)");
  app.add_option("--profile-top", top, "Layers listed by --profile, longest first; the rest summed")
      ->check(CLI::Range(1, 1000000));
}

void CompareOptions::add_to(CLI::App& app) {
  const char* group = "Comparison";
  app.add_option("--atol", atol, "Absolute tolerance [NAME:]V (default 1e-5); no name = every tensor")->group(group);
  app.add_option("--rtol", rtol, "Relative tolerance [NAME:]V (default 1e-5); no name = every tensor")->group(group);
  app.add_option("--check-error-stat", check_error_stat,
                 "[NAME:]elemwise|max|mean|median|quantile: which error statistic must be within tolerance")
      ->group(group);
  app.add_option("--error-quantile", error_quantile, "[NAME:]Q for --check-error-stat quantile (default 0.99)")
      ->group(group);
  app.add_flag("--infinities-compare-equal", infinities_compare_equal, "Matching infinities count as equal")
      ->group(group);
  app.add_flag("--fail-fast", fail_fast, "Stop at the first mismatched tensor")->group(group);
  app.add_flag("--local-errors", local_errors,
               "Also run each engine layer alone on the reference's inputs: its local error beside the accumulated "
               "one, for culprit ranking")
      ->group(group);
  app.add_option("--report-json", report_json, "Write the full comparison report as JSON")->group(group);
}

Result<CompareConfig> CompareOptions::config() const {
  CompareConfig config;
  config.infinities_compare_equal = infinities_compare_equal;
  auto numbers = [](const std::vector<std::string>& items, const char* flag,
                    std::map<std::string, double, std::less<>>& out) -> Status {
    for (const std::string& item : items) {
      auto [name, value] = split_name_value(item);
      VN_ASSIGN_OR_RETURN(double v, parse_double(value, flag));
      if (!(v >= 0)) return make_error(StatusCode::kInvalidArgument, "{} '{}': must not be negative", flag, item);
      out[name] = v;
    }
    return Status::OK();
  };
  VN_RETURN_IF_ERROR(numbers(atol, "--atol", config.atol));
  VN_RETURN_IF_ERROR(numbers(rtol, "--rtol", config.rtol));
  VN_RETURN_IF_ERROR(numbers(error_quantile, "--error-quantile", config.quantile));
  for (const auto& [name, q] : config.quantile) {
    if (q > 1) return make_error(StatusCode::kInvalidArgument, "--error-quantile {}: must be in [0, 1]", q);
  }
  for (const std::string& item : check_error_stat) {
    auto [name, value] = split_name_value(item);
    std::optional<ErrorStat> stat = error_stat_from_name(value);
    if (!stat) {
      return make_error(StatusCode::kInvalidArgument,
                        "--check-error-stat '{}': expected elemwise, max, mean, median or quantile", item);
    }
    config.stat[name] = *stat;
  }
  return config;
}

void EngineOptions::add_to(CLI::App& app) {
  const char* group = "Engine build";
  app.add_flag("--fp16", fp16, "Allow float16 layers (float32 or float16 accumulation)")->group(group);
  app.add_flag("--bf16", bf16, "Allow bfloat16 layers")->group(group);
  app.add_flag("--tf32", tf32, "Allow tf32 matrix products (operands rounded to 10 mantissa bits)")->group(group);
  app.add_flag("--int8", int8,
               "Allow int8 layers (Conv, Gemm/MatMul with constant weights): post-training calibration, per-tensor "
               "activation and per-channel weight scales, int32 accumulation")
      ->group(group);
  app.add_option("--layer-precisions", layer_precisions,
                 "NAME:PREC per layer or node (PREC fp32|tf32|fp16|fp16_strict|bf16|int8); needs "
                 "--precision-constraints prefer or obey")
      ->group(group);
  app.add_option("--precision-constraints", precision_constraints,
                 "none (default: --layer-precisions ignored, as in TensorRT), prefer, or obey")
      ->check(CLI::IsMember({"none", "prefer", "obey"}))
      ->group(group);
  app.add_option("--calibration-data", calibration_data,
                 "int8 calibration feeds, in the formats of --load-inputs (default: synthetic inputs from the data "
                 "options)")
      ->group(group);
  app.add_option("--calibration-method", calibration_method,
                 "entropy (default: KL-divergence threshold), percentile (99.99th of |x|) or minmax")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}))
      ->group(group);
  app.add_option("--calibration-cache", calibration_cache,
                 "int8 scales: read from FILE when it exists (no calibration), else written to it")
      ->group(group);
  app.add_option("--save-tactics", save_tactics, "Write the tactic replay of the build (Polygraphy layout)")
      ->group(group);
  app.add_option("--load-tactics", load_tactics, "Build with the tactics and precisions of a tactic replay")
      ->group(group);
  app.add_flag("--deterministic", deterministic, "No timing: take the stable choice for every layer")->group(group);
  app.add_option("--builder-seed", builder_seed,
                 "Breaks ties between tactics timed within the margin (default: random, recorded in the plan)")
      ->group(group);
  app.add_option("--timing-margin", timing_margin,
                 "Tactics within this fraction of the fastest median time are tied (default 0.1)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app.add_option("--timing-cache", timing_cache,
                 "Tactic timings: read from FILE when it exists (timed candidates found there are not timed "
                 "again), and written back after the build")
      ->group(group);
  app.add_option("--save-engine", save_engine, "Write the engine plan (JSON)")->group(group);
  app.add_option("--load-engine", load_engine, "Run a saved engine plan instead of building one")->group(group);
  app.add_option("--inject-fault", inject_faults,
                 "Corrupt a layer on purpose, to exercise the debugger: layer=NAME|tactic=NAME,"
                 "kind=scale|offset|noise|zero|nan|inf|bias-drop[,factor=F][,magnitude=F][,fraction=F][,when=COND]")
      ->group(group);
}

CLI::Option* RunnerFlags::add_to(CLI::App& app) {
  const char* group = "Backends";
  CLI::Option* runner =
      app.add_option("--engine-runner", engine_runners,
                     "Run an engine on a persistent runner process (repeatable): ort, ort-python, trt, or a command "
                     "line speaking the runner protocol (README: Engine runners)")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->group(group);
  app.add_option("--runner-option", options, "KEY=VALUE passed to the runners' load (repeatable; runner-specific)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
  app.add_option("--runner-timeout", timeout_s,
                 "Seconds a runner may take for one inference before it is killed and restarted (default 300; 0: "
                 "no limit)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  app.add_option("--runner-load-timeout", load_timeout_s,
                 "Seconds a runner may take to load (build) a model (default 600; 0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->group(group);
  return runner;
}

Result<std::vector<std::pair<std::string, std::string>>> RunnerFlags::parsed_options() const {
  std::vector<std::pair<std::string, std::string>> parsed;
  for (const std::string& item : options) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return make_error(StatusCode::kInvalidArgument, "--runner-option '{}': expected KEY=VALUE", item);
    }
    parsed.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return parsed;
}

Result<std::shared_ptr<eut::EngineUnderTest>> RunnerFlags::engine_under_test(const std::string& spec) const {
  eut::RunnerEngineOptions options;
  VN_ASSIGN_OR_RETURN(options.runner.command, resolve_runner(spec, assets_dir()));
  options.runner.run_timeout_s = timeout_s;
  options.runner.load_timeout_s = load_timeout_s;
  VN_ASSIGN_OR_RETURN(options.options, parsed_options());
  options.spec = spec;
  return eut::runner_engine(std::move(options));
}

void RunnerFlags::add_engine_model(CLI::App& app) {
  app.add_option("--engine-model", engine_model,
                 "The engine runs this model instead of MODEL (e.g. one you converted to float16 yourself), and "
                 "each part of MODEL that is checked as the same part of it; the reference runs MODEL, tensors "
                 "paired by name")
      ->check(CLI::ExistingFile)
      ->group("Backends");
}

Result<std::shared_ptr<eut::EngineUnderTest>> RunnerFlags::single_engine() const {
  VN_RETURN_IF_NOT(engine_runners.size() <= 1, StatusCode::kInvalidArgument,
                   "--engine-runner: this command tests one engine; it was given {}", engine_runners.size());
  std::shared_ptr<eut::EngineUnderTest> engine;
  if (!engine_runners.empty()) {
    VN_ASSIGN_OR_RETURN(engine, engine_under_test(engine_runners.front()));
  }
  if (engine_model.empty()) return engine;
  VN_ASSIGN_OR_RETURN(Model converted, load_model(engine_model));
  return eut::engine_model_engine(engine ? engine : eut::builtin_engine(),
                                  std::make_shared<const Model>(std::move(converted)), engine_model);
}

Result<engine::EngineOptions> EngineOptions::engine_options(const std::vector<std::string>& input_shapes,
                                                            const data::SyntheticOptions& synthetic) const {
  engine::EngineOptions out;
  if (!load_engine.empty()) {
    std::vector<std::string> fixed;
    if (fp16) fixed.push_back("--fp16");
    if (bf16) fixed.push_back("--bf16");
    if (tf32) fixed.push_back("--tf32");
    if (int8) fixed.push_back("--int8");
    if (!calibration_data.empty()) fixed.push_back("--calibration-data");
    if (!calibration_method.empty()) fixed.push_back("--calibration-method");
    if (!calibration_cache.empty()) fixed.push_back("--calibration-cache");
    if (!layer_precisions.empty()) fixed.push_back("--layer-precisions");
    if (precision_constraints != "none") fixed.push_back("--precision-constraints");
    if (!load_tactics.empty()) fixed.push_back("--load-tactics");
    if (deterministic) fixed.push_back("--deterministic");
    if (builder_seed) fixed.push_back("--builder-seed");
    if (!inject_faults.empty()) fixed.push_back("--inject-fault");
    if (!timing_cache.empty()) fixed.push_back("--timing-cache");
    if (!fixed.empty()) {
      std::string flags;
      for (const std::string& f : fixed) flags += (flags.empty() ? "" : ", ") + f;
      return make_error(StatusCode::kInvalidArgument,
                        "--load-engine {} runs the plan as it was built; {} cannot change it (rebuild it with "
                        "`vernier convert`)",
                        load_engine, flags);
    }
    VN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(load_engine));
    out.plan = std::make_shared<const engine::Plan>(std::move(plan));
    return out;
  }
  engine::BuildOptions& b = out.build;
  if (!timing_cache.empty()) {
    if (std::filesystem::exists(timing_cache)) {
      VN_ASSIGN_OR_RETURN(engine::TimingCache cache, engine::TimingCache::load(timing_cache));
      timing_cache_state = std::make_shared<engine::TimingCache>(std::move(cache));
    } else {
      timing_cache_state = std::make_shared<engine::TimingCache>();
    }
    b.timing_cache = timing_cache_state;
  }
  if (fp16) b.allowed |= engine::kFp16 | engine::kFp16Strict;
  if (bf16) b.allowed |= engine::kBf16;
  if (tf32) b.allowed |= engine::kTf32;
  if (int8) {
    b.allowed |= engine::kInt8;
  } else if (!calibration_data.empty() || !calibration_method.empty() || !calibration_cache.empty()) {
    return make_error(StatusCode::kInvalidArgument, "--calibration-{}: calibration is for int8 builds; add --int8",
                      !calibration_data.empty()     ? "data"
                      : !calibration_method.empty() ? "method"
                                                    : "cache");
  }
  if (!calibration_method.empty())
    b.int8.calibration.method = *engine::calibration_method_from_name(calibration_method);
  if (!calibration_data.empty()) b.int8.data = {calibration_data};
  b.int8.cache = calibration_cache;
  b.int8.synthetic = synthetic;
  for (const std::string& item : layer_precisions) {
    auto [name, value] = split_name_value(item);
    const std::optional<engine::PrecisionId> p = engine::precision_from_name(value);
    if (name.empty() || !p) {
      return make_error(StatusCode::kInvalidArgument,
                        "--layer-precisions '{}': expected NAME:PREC with PREC fp32, tf32, fp16, fp16_strict, bf16 or "
                        "int8",
                        item);
    }
    if (*p == engine::PrecisionId::kInt8 && !int8) {
      return make_error(StatusCode::kInvalidArgument, "--layer-precisions '{}': int8 layers need --int8", item);
    }
    b.layer_precisions.emplace_back(name, *p);
  }
  b.constraints = *engine::constraints_from_name(precision_constraints);
  b.builder_seed = builder_seed;
  b.timing_margin = timing_margin;
  b.deterministic = deterministic;
  for (const std::string& s : input_shapes) {
    VN_ASSIGN_OR_RETURN(auto parsed, parse_input_shape(s));
    b.input_shapes[parsed.first] = parsed.second;
  }
  if (!load_tactics.empty()) {
    VN_ASSIGN_OR_RETURN(b.replay, engine::load_tactic_replay(load_tactics));
  }
  for (const std::string& spec : inject_faults) {
    VN_ASSIGN_OR_RETURN(engine::FaultSpec f, engine::parse_fault(spec));
    b.faults.push_back(std::move(f));
  }
  return out;
}

Status EngineOptions::save_artifacts(const engine::Plan& plan) const {
  if (!save_engine.empty()) {
    VN_RETURN_IF_ERROR(engine::save_plan(plan, save_engine));
    fmt::print("[I] Saved the engine plan to {}\n", save_engine);
  }
  if (!save_tactics.empty()) {
    VN_RETURN_IF_ERROR(engine::save_tactic_replay(engine::tactic_replay_from_plan(plan), save_tactics));
    fmt::print("[I] Saved the tactic replay to {}\n", save_tactics);
  }
  if (timing_cache_state) {
    VN_RETURN_IF_ERROR(timing_cache_state->save(timing_cache));
    fmt::print("[I] Saved {} timing(s) to the timing cache {} ({} found there, {} timed)\n", timing_cache_state->size(),
               timing_cache, timing_cache_state->hits(), timing_cache_state->misses());
  }
  return Status::OK();
}

engine::PrecisionId loosest_precision(const engine::Plan& plan) {
  // Coarsest last: int8 keeps 8 bits of a clipped range, bfloat16 8 mantissa bits, float16 and
  // tf32 11.
  constexpr engine::PrecisionId kOrder[] = {engine::PrecisionId::kFp32, engine::PrecisionId::kTf32,
                                            engine::PrecisionId::kFp16, engine::PrecisionId::kFp16Strict,
                                            engine::PrecisionId::kBf16, engine::PrecisionId::kInt8};
  size_t loosest = 0;
  for (const engine::PlanLayer& l : plan.layers) {
    for (size_t i = loosest + 1; i < std::size(kOrder); ++i) {
      if (l.precision == kOrder[i]) loosest = i;
    }
  }
  return kOrder[loosest];
}

std::string plan_summary(const engine::Plan& plan) {
  size_t nodes = 0, fused_layers = 0;
  std::map<std::string, size_t> per_precision;
  for (const engine::PlanLayer& l : plan.layers) {
    nodes += l.nodes.size();
    if (l.nodes.size() > 1) ++fused_layers;
    ++per_precision[std::string(engine::precision_name(l.precision))];
  }
  std::string precisions;
  for (const auto& [name, count] : per_precision) {
    precisions += fmt::format("{}{} {}", precisions.empty() ? "" : ", ", name, count);
  }
  std::string out = fmt::format("{} layer(s) from {} node(s) ({} layer(s) fused, {} node(s) folded); precisions: {}",
                                plan.layers.size(), nodes + plan.folded.size(), fused_layers, plan.folded.size(),
                                precisions.empty() ? "none" : precisions);
  size_t int8_fallbacks = 0;
  for (const engine::PlanLayer& l : plan.layers) int8_fallbacks += l.int8_fallback.empty() ? 0 : 1;
  if (int8_fallbacks > 0) {
    out += fmt::format("; {} layer(s) without an int8 tactic stay in float (`vernier inspect model PLAN` says which)",
                       int8_fallbacks);
  }
  if (!plan.prevented.empty()) out += fmt::format("; {} fusion(s) prevented by marked outputs", plan.prevented.size());
  if (!plan.faults.empty()) out += fmt::format("; {} fault(s) injected (testing facility)", plan.faults.size());
  return out;
}

Tolerance engine_tolerance_preset(engine::PrecisionId precision) {
  Tolerance t;
  switch (precision) {
    case engine::PrecisionId::kFp32:
      break;
    case engine::PrecisionId::kTf32:
    case engine::PrecisionId::kFp16:
    case engine::PrecisionId::kFp16Strict:
      t.atol = t.rtol = 1e-2;
      break;
    case engine::PrecisionId::kBf16:
      t.atol = t.rtol = 5e-2;
      break;
    case engine::PrecisionId::kInt8:
      // Each int8 layer adds noise of about half a step of 1/127 of its clipping threshold, and it
      // accumulates over the quantized layers: a few percent of the output's range is normal.
      t.atol = t.rtol = 0.1;
      break;
  }
  return t;
}

// Polygraphy's 1e-5 flags the normal rounding of a reduced-precision engine, so comparisons with
// one default to a tolerance that fits its precision, and say so. Tolerances given on the command
// line win.
debug::ToleranceOrigin apply_tolerance_preset(engine::PrecisionId precision, CompareConfig& config) {
  using Source = debug::ToleranceOrigin::Source;
  const bool atol_set = config.atol.count("") > 0, rtol_set = config.rtol.count("") > 0;
  debug::ToleranceOrigin origin{atol_set ? Source::kFlag : Source::kDefault,
                                rtol_set ? Source::kFlag : Source::kDefault, precision};
  if (precision == engine::PrecisionId::kFp32 || (atol_set && rtol_set)) return origin;
  const Tolerance preset = engine_tolerance_preset(precision);
  if (!atol_set) {
    config.atol[""] = preset.atol;
    origin.atol = Source::kPreset;
  }
  if (!rtol_set) {
    config.rtol[""] = preset.rtol;
    origin.rtol = Source::kPreset;
  }
  fmt::print("[I] Tolerance preset for an engine with {} layers: atol={}, rtol={} (set --atol/--rtol to override)\n",
             engine::precision_name(precision), format_number(config.atol[""]), format_number(config.rtol[""]));
  return origin;
}

std::filesystem::path assets_dir() {
  if (const char* env = std::getenv("VERNIER_ASSETS"); env && *env) return env;
  std::error_code ec;
#ifdef VN_SOURCE_ASSETS_DIR
  if (std::filesystem::is_directory(VN_SOURCE_ASSETS_DIR, ec)) return VN_SOURCE_ASSETS_DIR;
#endif
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return exe.parent_path().parent_path() / "share" / "vernier" / "assets";
}

std::string format_number(double v) { return fmt::format("{:.5g}", v); }

}  // namespace vn::cli
