// SPDX-License-Identifier: Apache-2.0
// `vernier triage`: walks the accuracy-debugging flowchart, answering each question with its
// probe, and prints the path with the evidence; writes report.json into the work folder.
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
#include "tui/cli/triage_tui.h"

namespace vn::cli {
namespace {

struct TriageArgs {
  std::string model;
  bool headless = false;
  std::string workdir = "vernier_triage";
  std::string lang;
  bool force = false;
  int builds = 5;
  int threads = 0;
  DataOptions data;
  CompareOptions compare;
  EngineOptions engine;
};

int triage(const TriageArgs& args) {
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
  Result<flow::TriageResult> result = run_triage(flowchart, std::move(config), observe, args.headless);
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

}  // namespace

void add_triage_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = app.add_subcommand("triage", "Walk the accuracy-debugging flowchart, measuring every answer");
  cmd->add_option("model", args->model, "ONNX model")->required();
  cmd->add_flag("--headless", args->headless, "Walk the chart automatically and print the path (the default when not on a terminal)");
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
  cmd->callback([args, &action] { action = [args] { return triage(*args); }; });
}

}  // namespace vn::cli
