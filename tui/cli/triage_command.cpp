// SPDX-License-Identifier: Apache-2.0
// `vernier triage`: walks the accuracy-debugging flowchart, answering each question with its
// probe, and prints the path with the evidence; writes report.json into the work folder.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "core/flow/flowchart.h"
#include "core/flow/triage.h"
#include "core/ir/mapped_file.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "tui/cli/triage_command.h"

namespace vn::cli {

int run_triage(TriageArgs args) {
  std::optional<std::vector<std::string>> check_argv = check_command();
  if (!args.scenario.empty()) {
    Result<flow::Scenario> scenario = flow::load_scenario(args.scenario);
    if (!scenario.ok()) return report_error(scenario.status());
    apply_scenario(*scenario, args, check_argv);
    fmt::print("[I] Scenario {}: {}\n", scenario->name, scenario->title);
  }
  if (args.model.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "triage needs a MODEL or a --scenario"));
  }
  const char* lang_env = std::getenv("LANG");
  Result<std::string> lang = flow::choose_language(args.lang, lang_env ? lang_env : "");
  if (!lang.ok()) return report_error(lang.status());
  Result<flow::Flowchart> chart = flow::load_flowchart(assets_dir() / "flowchart" / (*lang + ".json"));
  if (!chart.ok()) return report_error(chart.status());
  const std::filesystem::path workdir = args.workdir;
  if (std::filesystem::exists(workdir / "report.json") && !args.force) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "{} holds an earlier triage (report.json); choose another --workdir or pass --force",
                                   workdir.string()));
  }
  if (!args.headless && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
    fmt::print("[I] The full-screen triage UI is not available yet; walking the flowchart headless\n");
  }

  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  flow::TriageConfig config;
  if (!args.data.load_inputs.empty()) {
    Result<std::vector<TensorMap>> real = args.data.make_feeds(model->graph);
    if (!real.ok()) return report_error(real.status());
    config.real_feeds = std::move(*real);
  }
  DataOptions synthetic = args.data;
  synthetic.load_inputs.clear();
  synthetic.save_inputs.clear();
  Result<std::vector<TensorMap>> feeds = synthetic.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
  config.synthetic_feeds = std::move(*feeds);
  Result<engine::EngineOptions> engine = args.engine.engine_options(args.data.input_shapes);
  if (!engine.ok()) return report_error(engine.status());
  if (engine->plan) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--load-engine: triage rebuilds the engine as it goes; give the build flags instead"));
  }
  config.build = std::move(engine->build);
  Result<CompareConfig> compare = args.compare.config();
  if (!compare.ok()) return report_error(compare.status());
  config.compare = std::move(*compare);
  apply_tolerance_preset(loosest_allowed(config.build.allowed), config.compare);
  config.threads = args.threads;
  config.builds = args.builds;
  config.workdir = workdir;
  config.model = std::move(*model);
  Result<std::optional<debug::ExternalChecker>> check = args.check.checker(check_argv, workdir);
  if (!check.ok()) return report_error(check.status());
  config.check = std::move(*check);
  // A check (a scenario's especially) runs Vernier itself as $VERNIER: this program unless set.
  if (config.check && !std::getenv("VERNIER")) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) setenv("VERNIER", self.c_str(), 0);
  }

  fmt::print("[I] Triage of {} ({}), every check at atol={} rtol={}; work folder {}\n", args.model, chart->title,
             format_number(config.compare.tolerance_for("").atol), format_number(config.compare.tolerance_for("").rtol),
             workdir.string());
  const flow::Flowchart& flowchart = *chart;
  auto observe = [](const flow::TriageStep& step, const flow::FlowNode& node) {
    const std::string cost = node.kind == flow::NodeKind::kEnd
                                 ? ""
                                 : fmt::format("         ({:.2f} s, {} engine build(s), {} check(s))\n", step.seconds,
                                               step.builds, step.checks);
    if (node.kind == flow::NodeKind::kQuestion && step.answer) {
      fmt::print("[triage] {} -> {}\n         {}\n{}", node.question, *step.answer ? node.yes.label : node.no.label,
                 step.summary, cost);
    } else if (node.kind == flow::NodeKind::kEnd) {
      fmt::print("[triage] {}\n         {}\n", node.title, node.text);
    } else {
      fmt::print("[triage] {}\n         {}\n{}", node.title, step.summary, cost);
    }
    std::fflush(stdout);
  };
  const auto start = std::chrono::steady_clock::now();
  Result<flow::TriageResult> result = flow::triage_headless(flowchart, std::move(config), observe);
  if (!result.ok()) return report_error(result.status());
  const nlohmann::ordered_json report = flow::triage_report(*result, flowchart);
  if (Status s = file_write_atomic(workdir / "report.json", report.dump(2) + "\n"); !s.ok()) return report_error(s);
  std::string path;
  for (const flow::TriageStep& step : result->path) {
    path += fmt::format("{}{}{}", path.empty() ? "" : " > ", step.node,
                        step.answer ? (*step.answer ? " (yes)" : " (no)") : "");
  }
  fmt::print("[I] Path: {}\n", path);
  fmt::print("[I] Outcome: {}{}{}\n", result->outcome, result->culprit.empty() ? "" : " | culprit: " + result->culprit,
             result->bundle.empty() ? "" : " | bug-report bundle: " + result->bundle.string());
  int64_t builds = 0, checks = 0;
  for (const flow::TriageStep& step : result->path) {
    builds += step.builds;
    checks += step.checks;
  }
  fmt::print("[I] Triage took {:.2f} s: {} engine build(s), {} check(s)\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), builds, checks);
  fmt::print("[I] Wrote {}\n", (workdir / "report.json").string());
  const bool failing = result->outcome == "localized" || result->outcome == "not_localized";
  return failing ? kExitFailed : kExitOk;
}

void add_triage_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = app.add_subcommand("triage", "Walk the accuracy-debugging flowchart, measuring every answer");
  cmd->add_option("model", args->model, "ONNX model (default: the scenario's)");
  cmd->add_option("--scenario", args->scenario,
                  "Scenario file (assets/scenarios/*.json): model and options; those given here win");
  cmd->add_flag("--headless", args->headless, "Walk the chart automatically and print the path (the default for now)");
  cmd->add_option("--workdir", args->workdir, "Work folder: report.json, build replays, the minimal model")
      ->capture_default_str();
  cmd->add_option("--lang", args->lang, "Language of the chart: en or zh (default: from LANG)");
  cmd->add_flag("--force", args->force, "Reuse a work folder that holds an earlier triage");
  cmd->add_option("--builds", args->builds, "Engine builds of the intermittency probe")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads for the backends (default: all cores)")->check(CLI::Range(0, 1024));
  args->data.add_to(*cmd);
  args->compare.add_to(*cmd);
  args->engine.add_to(*cmd);
  args->check.add_to(*cmd);
  accept_check_command(*cmd);
  cmd->callback([args, cmd, &action] {
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->count() == 0) continue;
      for (const std::string& name : option->get_lnames()) args->given.insert("--" + name);
      if (option->get_positional()) args->given.insert(option->get_name(true));
    }
    action = [args] { return run_triage(*args); };
  });
}

}  // namespace vn::cli
