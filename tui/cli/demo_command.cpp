// SPDX-License-Identifier: Apache-2.0
// `vernier demo`: triage of the bundled demo scenario (assets/scenarios/demo.json: the demo model
// with a fault planted in conv2), through `vernier triage --scenario`'s own entry point. Without a
// terminal (or with --headless) it walks the flowchart headless, printing the path with its
// evidence and writing the report and bug-report bundle into the work folder; on a terminal the
// same walk runs in the full-screen triage UI. `--browse` opens the full-screen browser over the
// scenario's layer-wise comparison instead. With `--engine-runner`, the triage is that of a real
// engine: assets/scenarios/ort_fp16_range.json (a float16 model whose last layer leaves float16's
// range) on the runner given.
#include <system_error>

#include "core/engine/fault.h"
#include "core/flow/scenario.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/browser.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "tui/cli/triage_command.h"
#include "tui/cli/ui_options.h"

namespace vn::cli {
namespace {

constexpr const char* kDefaultWorkdir = "vernier_demo";

struct DemoArgs {
  bool headless = false;
  bool browse = false;
  std::string workdir = kDefaultWorkdir;
  bool force = false;
  std::string lang;
  std::string engine_runner;                ///< --engine-runner: triage a real engine instead
  std::vector<std::string> runner_options;  ///< --runner-option KEY=VALUE
};

// The browser's exit code, or nullopt when this terminal cannot show it (then the caller walks
// the flowchart headless).
std::optional<int> demo_tui(const flow::Scenario& scenario) {
  Result<Model> model = load_model(scenario.model);
  if (!model.ok()) return report_error(model.status());
  DataOptions data;
  Result<std::vector<TensorMap>> feeds = data.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
  session::LayerwiseSessionOptions options;
  for (const std::string& spec : scenario.inject_fault) {
    Result<engine::FaultSpec> fault = engine::parse_fault(spec);
    if (!fault.ok()) return report_error(fault.status());
    options.engine.build.faults.push_back(std::move(*fault));
  }
  options.engine.build.builder_seed = scenario.builder_seed;
  options.local_errors = true;
  options.threads = 1;
  BrowseSource source = live_source(std::move(*model), std::move(feeds->front()), std::move(options));
  source.origin = fmt::format("The demo scenario: {}", scenario.model.string());
  std::string error;
  std::optional<int> code = browse(std::move(source), error);
  if (!code) fmt::print(stderr, "[W] {}; walking the flowchart headless instead\n", error);
  return code;
}

int demo(const DemoArgs& demo_args) {
  const bool real_engine = !demo_args.engine_runner.empty();
  const std::filesystem::path scenario_path =
      assets_dir() / "scenarios" / (real_engine ? "ort_fp16_range.json" : "demo.json");
  if (real_engine && demo_args.browse) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--browse shows the built-in engine's demo; with --engine-runner the demo is a "
                                   "triage (run it without --browse)"));
  }
  if (!real_engine && !demo_args.runner_options.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--runner-option is for --engine-runner"));
  }
  std::error_code ec;
  if (!std::filesystem::exists(scenario_path, ec)) {
    return report_error(make_error(StatusCode::kIoError,
                                   "{}: demo scenario not found; set VERNIER_ASSETS to the assets/ folder of Vernier",
                                   scenario_path.string()));
  }
  // The chart and the screens speak the same language.
  if (Status s = set_ui_language(demo_args.lang); !s.ok()) return report_error(s);
  if (demo_args.browse && !demo_args.headless && on_terminal()) {
    Result<flow::Scenario> scenario = flow::load_scenario(scenario_path);
    if (!scenario.ok()) return report_error(scenario.status());
    if (const std::optional<int> code = demo_tui(*scenario)) return *code;
  }
  TriageArgs args;
  args.scenario = scenario_path.string();
  args.headless = demo_args.headless;
  args.workdir = demo_args.workdir;
  args.lang = demo_args.lang;
  // The demo model is tiny: one thread beats several on a busy machine.
  args.threads = 1;
  // The default folder holds nothing but earlier demos; another one is kept unless --force.
  args.force = demo_args.force || demo_args.workdir == kDefaultWorkdir;
  // What `vernier triage --resume` needs to start this triage again.
  std::error_code abs_ec;
  args.command = {"--scenario", std::filesystem::absolute(scenario_path, abs_ec).string(), "--threads", "1"};
  if (!demo_args.lang.empty()) args.command.insert(args.command.end(), {"--lang", demo_args.lang});
  if (real_engine) {
    // The runner given replaces the scenario's (ort), with its options.
    args.runners.engine_runners = {demo_args.engine_runner};
    args.runners.options = demo_args.runner_options;
    args.given.insert({"--engine-runner", "--runner-option"});
    args.command.insert(args.command.end(), {"--engine-runner", demo_args.engine_runner});
    for (const std::string& o : demo_args.runner_options) args.command.insert(args.command.end(), {"--runner-option", o});
  }
  const int code = run_triage(std::move(args));
  // Triage exits 1 when it pins a failure down: for the demo, finding the planted fault is success.
  return code == kExitFailed ? kExitOk : code;
}

}  // namespace

void add_demo_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Triage of the demo scenario: the path through the flowchart, the culprit and a bug-report bundle");
  cmd->add_flag("--headless,--no-tui", args->headless, "Walk the flowchart headless even on a terminal");
  cmd->add_flag("--browse", args->browse,
                "On a terminal, browse the demo's layer-wise comparison (graph, layers, tensors) instead");
  cmd->add_option("--workdir", args->workdir, "Work folder: report.json and the bug-report bundle")
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Reuse a work folder other than the default that holds an earlier triage");
  cmd->add_option("--lang", args->lang, "Language of the chart and the screens: en or zh (default: from LANG)");
  cmd->add_option("--engine-runner", args->engine_runner,
                  "Triage a real engine instead: the float16 scenario (ort_fp16_range) on this runner (ort, "
                  "ort-python, trt or a command line)");
  cmd->add_option("--runner-option", args->runner_options, "KEY=VALUE for the runner (repeatable)");
  add_no_mouse_flag(*cmd);
  cmd->callback([&action, args] { action = [args] { return demo(*args); }; });
}

}  // namespace vn::cli
