// SPDX-License-Identifier: Apache-2.0
// `vernier run`: runs a model on a backend and reports or saves its outputs.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "core/common/logging.h"
#include "core/common/process_memory.h"
#include "core/backend/profile.h"
#include "core/backend/external_backend.h"
#include "core/backend/runner_backend.h"
#include "core/eut/local_errors.h"
#include "core/compare/compare_json.h"
#include "core/compare/layerwise.h"
#include "core/engine/engine_backend.h"
#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "core/session/layerwise_session.h"
#include "tui/cli/browser.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "tui/cli/ui_options.h"
#include "tui/i18n.h"
#include "views/report/compare_report.h"
#include "views/report/profile_report.h"
#include "views/report/tensor_report.h"

namespace vn::cli {
namespace {

/// Where the results of one runner come from, in command-line order.
enum class Source { kRef, kEngine, kExternal, kRunner, kLoaded };

/// One runner of the command line: its source and, for --external and --engine-runner, which one.
struct Runner {
  Source source = Source::kRef;
  size_t index = 0;
};

struct RunArgs {
  std::string model;
  bool ref = false;
  std::string ref_precision = "fp32";
  bool engine = false;
  std::vector<std::string> external;
  double external_timeout = 0;
  RunnerFlags runners;
  std::string engine_model;  // --engine-model: what --engine and --engine-runner run instead of the model
  std::vector<std::string> load_outputs;
  std::vector<Runner> order;  // the backend flags as they appear on the command line
  int threads = 0;
  int warm_up = 0;
  ProfileOptions profile;
  bool verbose = false;
  bool tui = false;
  DataOptions data;
  OutputOptions outputs;
  CompareOptions compare;
  EngineOptions engine_build;
};

PrepareOptions prepare_options(const RunArgs& args) {
  return PrepareOptions{args.outputs.outputs, args.outputs.mark_all, false, args.threads};
}

// Prepares `backend` for the model with the run's output flags.
Status prepare_backend(Backend& backend, const RunArgs& args, const Model& model) {
  return backend.prepare(model, prepare_options(args)).with_context(args.model);
}

// Runs a prepared backend over every feed and prints each output's statistics. The outputs of
// every iteration are kept in the result when `keep` (to compare or save them); otherwise each
// iteration's are freed once printed, and the result holds their timings only. With --profile,
// prints the backend's profile and adds it to `profiles`.
Result<io::RunnerResults> run_backend(Backend& backend, const RunArgs& args, const std::vector<TensorMap>& feeds,
                                      int index, bool keep, nlohmann::ordered_json& profiles) {
  io::RunnerResults runner;
  runner.runner_name = io::polygraphy_runner_name(backend.name(), index);
  fmt::print("[I] {:<35} | Running {} iteration(s) of {}\n", runner.runner_name, feeds.size(), args.model);
  TimedRunOptions options{args.warm_up, keep, args.profile.profile, [&](size_t it, const TensorMap& out) {
    if (feeds.size() > 1) fmt::print("[I] Iteration {}\n", it);
    for (const NamedTensor& t : out) {
      fmt::print("[I]     {}\n", views::format_tensor_summary(t.name, t.tensor));
      if (args.verbose) fmt::print("{}\n", views::format_values(t.tensor, 100));
    }
  }};
  Result<TimedRun> ran = run_timed(backend, feeds, options);
  if (!ran.ok()) return ran.status().with_context(args.model);
  double total_ms = 0;
  for (size_t it = 0; it < ran->ms.size(); ++it) {
    total_ms += ran->ms[it];
    runner.iterations.push_back(io::IterationResult{keep ? std::move(ran->outputs[it]) : TensorMap(),
                                                    ran->ms[it] / 1000.0, runner.runner_name});
  }
  fmt::print(
      "[I] {:<35} | Completed {} iteration(s) in {:.4g} ms | Average inference time: {:.4g} ms | "
      "Peak memory: {:.1f} MiB\n",
      runner.runner_name, feeds.size(), total_ms, total_ms / static_cast<double>(feeds.size()), peak_rss_mib());
  if (args.profile.profile && !backend.can_profile()) {
    fmt::print("[W] --profile: {} runs in another process and cannot time its layers; its time per run is above\n",
               runner.runner_name);
  } else if (args.profile.profile) {
    VN_ASSIGN_OR_RETURN(const RunProfile profile, summarize_profile(runner.runner_name, *ran));
    fmt::print("{}", views::format_profile(profile, args.profile.top));
    profiles.push_back(profile_json(profile));
  }
  return runner;
}

// Builds (or loads) the engine, reports the build and saves its plan and tactics when asked.
// The engine build flags of the command line, parsed.
Result<engine::EngineOptions> engine_options(const RunArgs& args) {
  VN_ASSIGN_OR_RETURN(const data::SyntheticOptions synthetic, args.data.synthetic_options());
  return args.engine_build.engine_options(args.data.input_shapes, synthetic);
}

Result<std::unique_ptr<engine::EngineBackend>> prepare_engine(const RunArgs& args, const Model& model) {
  VN_ASSIGN_OR_RETURN(engine::EngineOptions options, engine_options(args));
  const bool loaded = options.plan != nullptr;
  auto backend = std::make_unique<engine::EngineBackend>(std::move(options));
  const auto start = std::chrono::steady_clock::now();
  VN_RETURN_IF_ERROR(prepare_backend(*backend, args, model));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("[I] {} in {:.3g} s: {}\n",
             loaded ? "Loaded the engine plan " + args.engine_build.load_engine : std::string("Built the engine"),
             seconds, plan_summary(*backend->plan()));
  VN_RETURN_IF_ERROR(args.engine_build.save_artifacts(*backend->plan()));
  return backend;
}

// What each comparison keeps of its tensors for the tensor detail: the digests, when the browser
// or the report will show them.
std::optional<DigestLimits> digest_limits(const RunArgs& args) {
  if (args.tui || !args.compare.report_json.empty()) return DigestLimits{};
  return std::nullopt;
}

// The layer-wise comparison the browser opens on: the first that failed, else the first.
struct Browsed {
  std::shared_ptr<session::LayerwiseSession> session;
  size_t test = 0;       // runner index
  size_t iteration = 0;
  std::string title;
};

void keep_for_browsing(std::optional<Browsed>& browsed, const Model& model, const LayerwiseComparison& cmp,
                       size_t test, size_t iteration, const std::string& title) {
  if (browsed && (!browsed->session->comparison.passed() || cmp.passed())) return;
  auto s = std::make_shared<session::LayerwiseSession>();
  s->model = model;
  s->comparison = cmp;
  browsed = Browsed{std::move(s), test, iteration, title};
}

// Browses `browsed` full-screen; `code` is the run's exit code, kept unless the UI cannot start
// (then a note, and the plain report stands).
int browse_result(std::optional<Browsed> browsed, BrowseSource source, int code) {
  if (!browsed) {
    fmt::print("[W] --tui: no layer-wise comparison to browse\n");
    return code;
  }
  if (!on_terminal()) {
    fmt::print("[I] --tui: not on a terminal, the report above stands\n");
    return code;
  }
  source.done = std::move(browsed->session);
  source.origin = browsed->title;
  std::string error;
  if (!browse(std::move(source), error)) fmt::print("[W] --tui: {}; the report above stands\n", error);
  return code;
}

// Whether comparing `test` with `ref` is layer-wise: asked for, or the results hold the model's
// layer tensors.
bool is_layerwise(const RunArgs& args, const TensorMap& test, const Model* model) {
  return args.outputs.mark_all || (model && holds_layer_tensors(test, model->graph));
}

void add_comparison_entry(const RunArgs& args, nlohmann::ordered_json& report, const std::string& test,
                          const std::string& ref, size_t it, const std::function<nlohmann::ordered_json()>& comparison) {
  add_report_comparison(report, test, ref, it, !args.compare.report_json.empty(), comparison);
}

// Compares every runner after the first with the first, iteration by iteration, from results held
// in memory. Layer-wise results are ranked against `model`'s graph when there is one. Returns
// whether everything matched; the JSON report collects every comparison.
Result<bool> compare_backends(const RunArgs& args, const CompareConfig& config, const io::RunResults& results,
                              const Model* model, nlohmann::ordered_json& report, std::optional<Browsed>& browsed) {
  bool all_passed = true;
  const io::RunnerResults& ref = results.front();
  for (size_t k = 1; k < results.size(); ++k) {
    const io::RunnerResults& test = results[k];
    if (test.iterations.size() != ref.iterations.size()) {
      return make_error(StatusCode::kInvalidArgument,
                        "'{}' holds {} iteration(s) but '{}' has {}; feed the inputs that produced it with "
                        "--load-inputs",
                        test.runner_name, test.iterations.size(), ref.runner_name, ref.iterations.size());
    }
    for (size_t it = 0; it < ref.iterations.size(); ++it) {
      const TensorMap& test_out = test.iterations[it].outputs;
      const TensorMap& ref_out = ref.iterations[it].outputs;
      const std::string title = fmt::format("{} vs. {} | Iteration {}", test.runner_name, ref.runner_name, it);
      bool passed = false;
      if (model && is_layerwise(args, test_out, model)) {
        VN_ASSIGN_OR_RETURN(LayerwiseComparison cmp,
                            compare_layerwise_results(test_out, ref_out, model->graph, config, digest_limits(args)));
        fmt::print("{}", views::format_layerwise(title, cmp, args.verbose));
        if (args.tui) keep_for_browsing(browsed, *model, cmp, k, it, title);
        passed = cmp.passed();
        add_comparison_entry(args, report, test.runner_name, ref.runner_name, it,
                             [&] { return layerwise_comparison_json(cmp); });
      } else {
        ResultsComparison cmp = compare_results(test_out, ref_out, config, args.compare.fail_fast);
        fmt::print("{}", views::format_comparison(title, cmp, args.verbose));
        passed = cmp.passed();
        add_comparison_entry(args, report, test.runner_name, ref.runner_name, it,
                             [&] { return results_comparison_json(cmp); });
      }
      all_passed = all_passed && passed;
      if (args.compare.fail_fast && !passed) return false;
    }
  }
  return all_passed;
}

// Writes --report-json, when asked for.
Status write_report(const RunArgs& args, const nlohmann::ordered_json& report) {
  if (args.compare.report_json.empty()) return Status::OK();
  VN_RETURN_IF_ERROR(file_write_atomic(args.compare.report_json, report.dump(2) + "\n"));
  fmt::print("[I] Wrote the report to {}\n", args.compare.report_json);
  return Status::OK();
}

// Writes --report-json and prints the verdict line; the exit code says whether all passed.
int finish_report(const RunArgs& args, nlohmann::ordered_json& report, bool passed) {
  report["passed"] = passed;
  if (Status s = write_report(args, report); !s.ok()) return report_error(s);
  fmt::print("{} | {} comparison(s)\n", passed ? "PASSED" : "FAILED", report["comparisons"].size());
  return passed ? kExitOk : kExitFailed;
}

/// A live backend of the command line; a runner's is the build of its engine under test.
struct LiveBackend {
  std::unique_ptr<Model> engine_model;  // --engine-model, which the backend runs
  std::unique_ptr<Backend> own;
  std::shared_ptr<eut::EngineUnderTest> engine;
  std::unique_ptr<eut::Build> build;
  Backend& backend() { return build ? build->backend() : *own; }
};

// Starts an engine runner and builds the model on it (converted first when the runner does not
// lower precision itself), and says what it built. The precisions allowed set the tolerance
// preset.
Result<LiveBackend> prepare_runner(const RunArgs& args, const std::string& spec, const Model& model,
                                   CompareConfig& config) {
  LiveBackend live;
  VN_ASSIGN_OR_RETURN(live.engine, args.runners.engine_under_test(spec));
  VN_ASSIGN_OR_RETURN(engine::EngineOptions options, engine_options(args));
  VN_RETURN_IF_NOT(!options.plan, StatusCode::kInvalidArgument,
                   "--load-engine: a plan of Vernier's built-in engine cannot run on --engine-runner {}", spec);
  const PrepareOptions prep = prepare_options(args);
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<eut::Build>> built = live.engine->build(model, options.build, prep);
  if (!built.ok()) return built.status().with_context(args.model);
  live.build = std::move(*built);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  VN_ASSIGN_OR_RETURN(const std::string described, live.engine->describe());
  VN_ASSIGN_OR_RETURN(const eut::Capabilities caps, live.engine->capabilities());
  const size_t layers = live.build->layers().size();
  fmt::print("[I] Built the model on {} in {:.3g} s{}: {}, capabilities: {}\n", described, seconds,
             live.build->converted_model() ? " (converted by Vernier to the precision asked for)" : "",
             layers == 0 ? std::string("no layers reported") : fmt::format("{} layer(s)", layers),
             eut::capabilities_summary(caps));
  for (const std::filesystem::path& artifact : live.build->artifacts()) {
    fmt::print("[I]     artifact {}\n", artifact.string());
  }
  apply_tolerance_preset(loosest_allowed(options.build.allowed), config);
  return live;
}

// Builds and prepares the backend of a live runner. An engine sets the tolerance preset.
Result<LiveBackend> make_backend(const RunArgs& args, const Runner& runner, const Model& model, CompareConfig& config) {
  LiveBackend live;
  const bool is_engine = runner.source == Source::kEngine || runner.source == Source::kRunner;
  if (is_engine && !args.engine_model.empty()) {
    VN_ASSIGN_OR_RETURN(Model engine_model, load_model(args.engine_model));
    live.engine_model = std::make_unique<Model>(std::move(engine_model));
  }
  const Model& runs = live.engine_model ? *live.engine_model : model;
  switch (runner.source) {
    case Source::kEngine: {
      VN_ASSIGN_OR_RETURN(std::unique_ptr<engine::EngineBackend> engine, prepare_engine(args, runs));
      apply_tolerance_preset(loosest_precision(*engine->plan()), config);
      live.own = std::move(engine);
      return live;
    }
    case Source::kExternal: {
      ExternalOptions options;
      options.command = args.external[runner.index];
      options.model_path = args.model;
      options.timeout_s = args.external_timeout;
      auto backend = std::make_unique<ExternalBackend>(std::move(options));
      VN_RETURN_IF_ERROR(prepare_backend(*backend, args, model));
      live.own = std::move(backend);
      return live;
    }
    case Source::kRunner: {
      VN_ASSIGN_OR_RETURN(LiveBackend built, prepare_runner(args, args.runners.engine_runners[runner.index], runs, config));
      built.engine_model = std::move(live.engine_model);
      return built;
    }
    case Source::kRef:
    case Source::kLoaded: break;
  }
  auto backend = std::make_unique<ref::ReferenceBackend>(ref::ReferenceOptions{args.ref_precision == "fp64"});
  VN_RETURN_IF_ERROR(prepare_backend(*backend, args, model));
  live.own = std::move(backend);
  return live;
}

// Layer-wise comparison of live backends (--mark-all or --local-errors): each runner after the
// first is streamed against the first, feed by feed, so no run keeps every tensor. The runs'
// tensors are collected only when --save-outputs asks for them.
int run_streamed(const RunArgs& args, CompareConfig config, const Model& model, const std::vector<TensorMap>& feeds) {
  std::vector<LiveBackend> backends;
  for (const Runner& runner : args.order) {
    Result<LiveBackend> backend = make_backend(args, runner, model, config);
    if (!backend.ok()) return report_error(backend.status());
    backends.push_back(std::move(*backend));
  }
  const bool save = !args.outputs.save_outputs.empty();
  io::RunResults saved(backends.size());
  for (size_t k = 0; k < backends.size(); ++k) {
    saved[k].runner_name = io::polygraphy_runner_name(backends[k].backend().name(), static_cast<int>(k));
  }

  nlohmann::ordered_json report = new_run_report(args.model);
  bool all_passed = true;
  std::optional<Browsed> browsed;
  Backend& ref = backends.front().backend();
  for (size_t k = 1; k < backends.size(); ++k) {
    for (size_t it = 0; it < feeds.size(); ++it) {
      LayerwiseOptions options;
      options.config = config;
      // A runner cannot run its layers alone: its local errors come from an isolated-layers model
      // after the comparison, and its layers are the model's nodes.
      const bool isolated = args.compare.local_errors && backends[k].engine;
      options.local_errors = args.compare.local_errors && !isolated;
      options.layer_graph = &model.graph;
      options.threads = args.threads;
      options.digest = digest_limits(args);
      TensorMap ref_out, test_out;
      if (save) {
        options.on_tensor = [&](bool test, const std::string& name, const Tensor& t) {
          (test ? test_out : ref_out).set(name, t);
        };
      }
      fmt::print("[I] {:<35} | Comparing layer-wise with {} on iteration {} of {}{}\n", saved[k].runner_name,
                 saved[0].runner_name, it, args.model, options.local_errors ? ", with local errors" : "");
      const auto start = std::chrono::steady_clock::now();
      Result<LayerwiseComparison> cmp = compare_layerwise(ref, backends[k].backend(), feeds[it], options);
      if (!cmp.ok()) return report_error(cmp.status().with_context(args.model));
      if (isolated) {
        Result<engine::EngineOptions> build = engine_options(args);
        if (!build.ok()) return report_error(build.status());
        eut::IsolatedLocalErrors local;
        local.build = build->build;
        local.compare = config;
        local.threads = args.threads;
        Status added = eut::add_isolated_local_errors(*cmp, model, feeds[it], *backends[k].engine, local);
        if (!added.ok()) return report_error(added.with_context(args.model));
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      fmt::print("[I] {:<35} | Completed in {:.4g} ms | Tensors held at most: {:.1f} MiB | Peak memory: {:.1f} MiB\n",
                 saved[k].runner_name, ms, static_cast<double>(cmp->peak_held_bytes) / (1024.0 * 1024.0),
                 peak_rss_mib());
      const std::string title =
          fmt::format("{} vs. {} | Iteration {}", saved[k].runner_name, saved[0].runner_name, it);
      fmt::print("{}", views::format_layerwise(title, *cmp, args.verbose));
      all_passed = all_passed && cmp->passed();
      add_comparison_entry(args, report, saved[k].runner_name, saved[0].runner_name, it,
                           [&] { return layerwise_comparison_json(*cmp); });
      if (args.tui) keep_for_browsing(browsed, model, *cmp, k, it, title);
      if (save) {
        if (k == 1) saved[0].iterations.push_back(io::IterationResult{std::move(ref_out), std::nullopt, saved[0].runner_name});
        saved[k].iterations.push_back(io::IterationResult{std::move(test_out), std::nullopt, saved[k].runner_name});
      }
    }
  }
  if (save) {
    if (Status s = io::save_outputs_file(saved, args.outputs.save_outputs); !s.ok()) return report_error(s);
    fmt::print("[I] Saved outputs to {}\n", args.outputs.save_outputs);
  }
  const int code = finish_report(args, report, all_passed);
  if (!args.tui) return code;
  // The browser compares again (`:set`) on the backends of the browsed comparison.
  BrowseSource source;
  source.config = config;
  LiveBackend* test = browsed ? &backends[browsed->test] : nullptr;
  if (browsed) {
    const auto* engine = dynamic_cast<const engine::EngineBackend*>(test->own.get());
    session::describe_layers(engine != nullptr ? engine->plan() : nullptr, *browsed->session);
  }
  // An engine runner's build stays with its engine: the browser shows its result but does not
  // compare again.
  if (browsed && test->own) {
    session::LayerwiseSessionOptions options;
    options.local_errors = args.compare.local_errors;
    options.threads = args.threads;
    // The backends point into `model`, which outlives the browser (it is run()'s).
    auto runner = std::make_shared<session::LayerwiseRunner>(std::shared_ptr<const Model>(std::shared_ptr<void>(), &model),
                                                             feeds[browsed->iteration], std::move(backends.front().own),
                                                             std::move(test->own), options);
    source.rerun = [runner](const CompareConfig& c, session::JobContext& ctx) { return runner->run(c, ctx); };
  }
  return browse_result(std::move(browsed), std::move(source), code);
}

int run(const RunArgs& args) {
  if (args.order.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "choose a backend: --ref, --engine, --engine-runner NAME, --external CMD, or --load-outputs FILE"));
  }
  Result<CompareConfig> config = args.compare.config();
  if (!config.ok()) return report_error(config.status());
  if (args.tui) {
    if (!args.outputs.mark_all && !args.compare.local_errors &&
        std::none_of(args.order.begin(), args.order.end(), [](const Runner& r) { return r.source == Source::kLoaded; })) {
      return report_error(make_error(StatusCode::kInvalidArgument,
                                     "--tui browses a layer-wise comparison: add --mark-all (and two backends)"));
    }
    if (Status s = set_ui_language(ui_options().lang); !s.ok()) return report_error(s);
  }
  const bool any_live = std::any_of(args.order.begin(), args.order.end(),
                                    [](const Runner& r) { return r.source != Source::kLoaded; });
  const bool any_loaded = std::any_of(args.order.begin(), args.order.end(),
                                      [](const Runner& r) { return r.source == Source::kLoaded; });
  if (args.compare.local_errors && (any_loaded || args.order.size() < 2 ||
                                    (args.order[1].source != Source::kEngine && args.order[1].source != Source::kRunner))) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--local-errors runs engine layers alone on the reference's inputs: give the "
                                   "reference first and then --engine or --engine-runner, e.g. `vernier run MODEL "
                                   "--ref --engine --mark-all --local-errors`"));
  }
  io::RunResults results;
  io::RunResults live;  // the runners of this run, which --save-outputs saves
  std::optional<Model> model;
  std::optional<std::vector<TensorMap>> feeds;
  // A model is needed to run it, and to rank layers when comparing loaded layer-wise results.
  if ((any_live || args.outputs.mark_all) && args.model.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "a model is required to run {}: give MODEL first (`vernier run MODEL ...`)",
                                   any_live ? "a backend" : "--mark-all"));
  }
  if (any_live || args.outputs.mark_all || (!args.model.empty() && std::filesystem::exists(args.model))) {
    Result<Model> loaded = load_model(args.model);
    if (!loaded.ok() && (any_live || args.outputs.mark_all)) return report_error(loaded.status());
    if (loaded.ok()) model = std::move(*loaded);
  }
  if (any_live) {
    Result<std::vector<TensorMap>> made = args.data.make_feeds(model->graph);
    if (!made.ok()) return report_error(made.status());
    feeds = std::move(*made);
  }
  const bool streamed = (args.outputs.mark_all || args.compare.local_errors) && !any_loaded && args.order.size() >= 2;
  if (args.profile.profile && (streamed || !any_live)) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--profile times plain runs of --ref or --engine, not {}",
                                   streamed ? "a layer-wise comparison (it copies every tensor, which distorts the "
                                              "times): drop --mark-all/--local-errors" : "loaded results"));
  }
  if (streamed) return run_streamed(args, *config, *model, *feeds);
  nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
  int index = 0;
  for (const Runner& runner : args.order) {
    if (runner.source == Source::kLoaded) {
      for (const std::string& path : args.load_outputs) {
        Result<io::RunResults> loaded = io::load_run_results(path);
        if (!loaded.ok()) return report_error(loaded.status());
        fmt::print("[I] Loaded {} runner(s) from {}\n", loaded->size(), path);
        for (io::RunnerResults& r : *loaded) results.push_back(std::move(r));
      }
      continue;
    }
    Result<LiveBackend> backend = make_backend(args, runner, *model, *config);
    if (!backend.ok()) return report_error(backend.status());
    // A lone runner whose outputs are not saved has nothing to compare them with: holding every
    // iteration's outputs would only grow the run's memory (and fault in fresh pages each time).
    const bool keep = args.order.size() >= 2 || !args.outputs.save_outputs.empty();
    Result<io::RunnerResults> ran = run_backend(backend->backend(), args, *feeds, index++, keep, profiles);
    if (!ran.ok()) return report_error(ran.status());
    live.push_back(*ran);
    results.push_back(std::move(*ran));
  }
  if (!args.outputs.save_outputs.empty() && !live.empty()) {
    if (Status s = io::save_outputs_file(live, args.outputs.save_outputs); !s.ok()) return report_error(s);
    fmt::print("[I] Saved outputs to {}\n", args.outputs.save_outputs);
  }
  nlohmann::ordered_json report = new_run_report(args.model);
  if (args.profile.profile) report["profiles"] = std::move(profiles);
  if (results.size() < 2) {
    if (Status s = args.profile.profile ? write_report(args, report) : Status::OK(); !s.ok()) return report_error(s);
    if (any_loaded && !any_live) fmt::print("[I] {} runner(s) loaded: nothing to compare\n", results.size());
    if (args.tui) fmt::print("[W] --tui: nothing was compared, so there is nothing to browse\n");
    return kExitOk;
  }

  std::optional<Browsed> browsed;
  Result<bool> passed = compare_backends(args, *config, results, model ? &*model : nullptr, report, browsed);
  if (!passed.ok()) return report_error(passed.status());
  const int code = finish_report(args, report, *passed);
  if (!args.tui) return code;
  BrowseSource source;
  source.config = *config;
  source.no_rerun = tui::trf("saved results are not compared again here: run `vernier run ... --atol/--rtol ... --tui`");
  return browse_result(std::move(browsed), std::move(source), code);
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on one or more backends and compare their outputs");
  cmd->add_option("model", args->model, "ONNX model (not needed to compare --load-outputs files alone)");
  CLI::Option* ref = cmd->add_flag("--ref", args->ref, "Run the reference backend (the oracle)")->group("Backends");
  cmd->add_option("--ref-precision", args->ref_precision,
                  "fp64 computes float models in double throughout (outputs keep their declared dtypes)")
      ->check(CLI::IsMember({"fp32", "fp64"}))
      ->group("Backends");
  CLI::Option* engine =
      cmd->add_flag("--engine", args->engine, "Build and run the engine under test (see Engine build)")
          ->group("Backends");
  CLI::Option* external =
      cmd->add_option("--external", args->external,
                      "Run another engine as a command (repeatable): 'CMD {model} {inputs} {outputs} {mark}' "
                      "(see assets/runners/)")
          ->group("Backends");
  cmd->add_option("--engine-model", args->engine_model,
                  "The engine (--engine, --engine-runner) runs this model instead of MODEL, e.g. one you converted "
                  "to float16 yourself; the reference runs MODEL, and tensors are paired by name")
      ->check(CLI::ExistingFile)
      ->group("Backends");
  cmd->add_option("--external-timeout", args->external_timeout,
                  "Seconds an --external command may run per inference before it is killed (default: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->group("Backends");
  CLI::Option* loaded =
      cmd->add_option("--load-outputs", args->load_outputs,
                      "Results saved by Vernier or Polygraphy (RunResults .json), compared with the others; "
                      "`--load-outputs A B` and `--load-outputs A --load-outputs B` are the same; with no live "
                      "backend no model is needed")
          ->expected(1, CLI::detail::expected_max_vector_size)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->group("Backends");
  cmd->add_option("--threads", args->threads, "Threads for the backends (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--warm-up", args->warm_up, "Untimed runs on the first feed before timing")
      ->check(CLI::Range(0, 1000));
  args->profile.add_to(*cmd);
  cmd->add_flag("-v,--verbose", args->verbose, "Also print output values");
  cmd->add_flag("--tui", args->tui,
                "After a layer-wise comparison (--mark-all), browse it full-screen: Graph, Layers, Tensor detail");
  add_ui_flags(*cmd);
  args->data.add_to(*cmd);
  args->outputs.add_to(*cmd);
  args->compare.add_to(*cmd);
  CLI::Option* engine_runner = args->runners.add_to(*cmd);
  args->engine_build.add_to(*cmd);
  cmd->callback([args, cmd, ref, engine, external, engine_runner, loaded, &action] {
    // Backends run and compare in the order their flags appear: the first is the reference of
    // every comparison. Each --external is a runner of its own.
    args->order.clear();
    size_t externals = 0, engine_runners = 0;
    bool seen_ref = false, seen_engine = false, seen_loaded = false;
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == external) {
        args->order.push_back({Source::kExternal, externals++});
      } else if (opt == engine_runner) {
        args->order.push_back({Source::kRunner, engine_runners++});
      } else if (opt == ref && !seen_ref) {
        seen_ref = true;
        args->order.push_back({Source::kRef});
      } else if (opt == engine && !seen_engine) {
        seen_engine = true;
        args->order.push_back({Source::kEngine});
      } else if (opt == loaded && !seen_loaded) {
        seen_loaded = true;
        args->order.push_back({Source::kLoaded});
      }
    }
    action = [args] { return run(*args); };
  });
}

}  // namespace vn::cli
