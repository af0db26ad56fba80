// SPDX-License-Identifier: Apache-2.0
// `vernier browse REPORT.json`: the full-screen browser over a layer-wise comparison saved in a
// report (`vernier run ... --mark-all --report-json`, or a triage work folder's report.json), on
// the model the report names (or --model).
#include <filesystem>

#include "core/common/json_file.h"
#include "core/compare/compare_json.h"
#include "core/flow/scenario.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/browser.h"
#include "tui/cli/commands.h"
#include "tui/cli/ui_options.h"
#include "tui/i18n.h"
#include "views/report/compare_report.h"

namespace vn::cli {
namespace {

using Json = nlohmann::ordered_json;

// `j[key]` when it is a string (never throws, whatever the file holds), else `fallback`.
std::string string_or(const Json& j, const char* key, std::string fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

struct BrowseArgs {
  std::string report;
  std::string model;
  int comparison = 0;  ///< 1-based; 0: the first that failed, else the first
};

// A layer-wise comparison found in a report, with the model it names and a title for the Log.
struct Found {
  LayerwiseComparison comparison;
  std::string model;  ///< as the report names it; "" when it does not
  std::string title;
};

// `vernier run --report-json`: {"model", "comparisons": [{"test", "reference", "iteration",
// "comparison"}]}; the layer-wise ones have "layers".
Result<Found> from_run_report(const Json& report, const BrowseArgs& args) {
  std::vector<const Json*> layerwise;
  for (const Json& entry : report["comparisons"]) {
    if (entry.is_object() && entry.contains("comparison") && entry["comparison"].is_object() &&
        entry["comparison"].contains("layers")) {
      layerwise.push_back(&entry);
    }
  }
  VN_RETURN_IF_NOT(!layerwise.empty(), StatusCode::kInvalidArgument,
                   "{}: no layer-wise comparison in the report (write one with `vernier run MODEL --ref --engine "
                   "--mark-all --report-json FILE`)",
                   args.report);
  VN_RETURN_IF_NOT(args.comparison <= static_cast<int>(layerwise.size()), StatusCode::kInvalidArgument,
                   "--comparison {}: the report holds {} layer-wise comparison(s)", args.comparison, layerwise.size());
  size_t pick = 0;
  if (args.comparison > 0) {
    pick = static_cast<size_t>(args.comparison - 1);
  } else {
    for (size_t i = 0; i < layerwise.size(); ++i) {
      const Json& comparison = (*layerwise[i])["comparison"];
      if (comparison.contains("passed") && comparison["passed"].is_boolean() && !comparison["passed"].get<bool>()) {
        pick = i;
        break;
      }
    }
  }
  const Json& entry = *layerwise[pick];
  Found found;
  VN_ASSIGN_OR_RETURN(found.comparison, layerwise_comparison_from_json(entry["comparison"], args.report));
  found.model = string_or(report, "model", "");
  const auto iteration = entry.find("iteration");
  found.title = fmt::format("{}: comparison {} of {} ({} vs. {}, iteration {})", args.report, pick + 1, layerwise.size(),
                            string_or(entry, "test", "?"), string_or(entry, "reference", "?"),
                            iteration != entry.end() && iteration->is_number_integer() ? iteration->dump() : "?");
  return found;
}

// A triage work folder's report.json: the layer-wise step keeps counts in the report, and the
// comparison's layers (their errors and culprit ranks, no tensor statistics) in the session
// state beside it, with the (sanitized) model the comparison ran on.
Result<Found> from_triage_report(const BrowseArgs& args) {
  const std::filesystem::path dir = std::filesystem::path(args.report).parent_path();
  VN_ASSIGN_OR_RETURN(const Json state, read_json_file(dir / "session.json", "triage session"));
  const Json* walk = state.is_object() && state.contains("walk") ? &state["walk"] : nullptr;
  Json layerwise;
  if (walk != nullptr && walk->is_object() && walk->contains("layerwise")) {
    // A file of the session folder (inline in sessions of earlier Vernier versions).
    const Json& kept = (*walk)["layerwise"];
    if (kept.is_string()) {
      VN_ASSIGN_OR_RETURN(layerwise, read_json_file(dir / kept.get<std::string>(), "layer-wise comparison"));
    } else {
      layerwise = kept;
    }
  }
  VN_RETURN_IF_NOT(layerwise.is_object(), StatusCode::kInvalidArgument,
                   "{}: this triage did not compare layer-wise (its path has no layer-wise step); browse a "
                   "`vernier run MODEL --ref --engine --mark-all --report-json FILE` report instead",
                   args.report);
  // The session keeps the culprits by index and no tensors: the comparison format keeps them by name.
  Json comparison = {{"tensors", Json::array()}, {"layers", layerwise.value("layers", Json::array())}};
  if (layerwise.contains("local_errors")) comparison["local_errors"] = layerwise["local_errors"];
  Found found;
  VN_ASSIGN_OR_RETURN(found.comparison, layerwise_comparison_from_json(comparison, (dir / "session.json").string()));
  for (const auto& [key, field] : {std::pair{"first_culprit", &found.comparison.first_culprit},
                                   std::pair{"first_nonfinite", &found.comparison.first_nonfinite}}) {
    const auto it = layerwise.find(key);
    if (it != layerwise.end() && it->is_number_unsigned() && it->get<size_t>() < found.comparison.layers.size()) {
      *field = it->get<size_t>();
    }
  }
  // The model the comparison ran on: the sanitized one the session kept, or (sanitizing changed
  // nothing) the one the triage was started on, named on its command line or by its scenario.
  if (walk->contains("model") && (*walk)["model"].is_string()) {
    found.model = (dir / (*walk)["model"].get<std::string>()).string();
  } else if (state.contains("command") && state["command"].is_object()) {
    const Json& command = state["command"];
    const std::filesystem::path cwd = string_or(command, "cwd", "");
    const Json args = command.value("args", Json::array());
    for (size_t i = 0; args.is_array() && i < args.size() && found.model.empty(); ++i) {
      if (!args[i].is_string()) continue;
      const std::string arg = args[i].get<std::string>();
      if (arg.ends_with(".onnx")) found.model = (cwd / arg).string();
      if (arg == "--scenario" && i + 1 < args.size() && args[i + 1].is_string()) {
        Result<flow::Scenario> scenario = flow::load_scenario(cwd / args[i + 1].get<std::string>());
        if (scenario.ok()) found.model = scenario->model.string();
      }
    }
  }
  found.title = fmt::format("{}: the triage's layer-wise comparison (errors and ranks; no tensor statistics)", args.report);
  return found;
}

// Refuses a model whose nodes are not those the comparison's layers name.
Status check_model(const LayerwiseComparison& c, const Graph& graph, const std::string& model) {
  for (const LayerComparison& l : c.layers) {
    if (l.layer.node < 0) continue;
    VN_RETURN_IF_NOT(static_cast<size_t>(l.layer.node) < graph.nodes.size(), StatusCode::kInvalidArgument,
                     "{}: the report's layer '{}' is node {}, but the model has {} node(s): give the model the report "
                     "was written for (--model)",
                     model, l.layer.name, l.layer.node, graph.nodes.size());
    const std::string label = node_label(graph, l.layer.node);
    const std::string first = l.layer.name.substr(0, l.layer.name.find(" + "));
    VN_RETURN_IF_NOT(label == first || graph.nodes[static_cast<size_t>(l.layer.node)].name == first,
                     StatusCode::kInvalidArgument,
                     "{}: the report's layer '{}' is node {}, which is '{}' in this model: give the model the report "
                     "was written for (--model)",
                     model, l.layer.name, l.layer.node, label);
  }
  return Status::OK();
}

int browse_report(const BrowseArgs& args) {
  if (Status s = set_ui_language(ui_options().lang); !s.ok()) return report_error(s);
  Result<Json> report = read_json_file(args.report, "comparison report");
  if (!report.ok()) return report_error(report.status());
  Result<Found> found = make_error(StatusCode::kInvalidArgument,
                                   "{}: neither a `vernier run --report-json` report nor a triage report.json",
                                   args.report);
  if (report->is_object() && report->contains("comparisons") && (*report)["comparisons"].is_array()) {
    found = from_run_report(*report, args);
  } else if (report->is_object() && report->contains("path") && report->contains("outcome")) {
    found = from_triage_report(args);
  }
  if (!found.ok()) return report_error(found.status());
  const std::string model_path = !args.model.empty() ? args.model : found->model;
  if (model_path.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "{}: the report does not name its model; give it with --model", args.report));
  }
  Result<Model> model = load_model(model_path);
  if (!model.ok()) return report_error(model.status());
  if (Status s = check_model(found->comparison, model->graph, model_path); !s.ok()) return report_error(s);

  auto session = std::make_shared<session::LayerwiseSession>();
  session->model = std::move(*model);
  session->comparison = std::move(found->comparison);
  session::describe_layers(nullptr, *session);
  if (!on_terminal()) {
    fmt::print("[I] Not on a terminal: the layer-wise report instead of the browser\n{}",
               views::format_layerwise(found->title, session->comparison, false));
    return kExitOk;
  }
  BrowseSource source;
  source.done = std::move(session);
  source.origin = found->title;
  source.no_rerun = std::string(
      tui::tr("a report keeps no tensors: compare again with `vernier run ... --atol X --tui`"));
  std::string error;
  if (const std::optional<int> code = browse(std::move(source), error)) return *code;
  return report_error(make_error(StatusCode::kInvalidArgument, "cannot start the browser: {}", error));
}

}  // namespace

void add_browse_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<BrowseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "browse", "Browse a saved layer-wise comparison full-screen: Graph, Layers, Tensor detail");
  cmd->add_option("report", args->report,
                  "A `vernier run ... --mark-all --report-json` report, or a triage work folder's report.json")
      ->required();
  cmd->add_option("--model", args->model, "The model the report compared (default: the one the report names)");
  cmd->add_option("--comparison", args->comparison,
                  "Which layer-wise comparison of the report, from 1 (default: the first that failed)")
      ->check(CLI::Range(1, 1 << 20));
  add_ui_flags(*cmd);
  cmd->callback([&action, args] { action = [args] { return browse_report(*args); }; });
}

}  // namespace vn::cli
