// SPDX-License-Identifier: Apache-2.0
// `vernier inspect model|data|tactics|diff-tactics`: what a model, an engine plan, a data file or a tactic
// replay holds.
#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include "core/compare/tensor_stats.h"
#include "core/debug/diff_tactics.h"
#include "core/engine/plan.h"
#include "core/engine/tactic_replay.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/io/tensor_proto.h"
#include "core/io/test_folder.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "views/report/model_report.h"
#include "views/report/tensor_report.h"
#include "views/report/text_table.h"

namespace vn::cli {
namespace {

struct InspectModelArgs {
  std::string model;
  std::vector<std::string> show;
};

struct DiffTacticsArgs {
  std::string dir;
  std::string good;
  std::string bad;
};

struct InspectDataArgs {
  std::string path;
  bool all = false;
  bool show_values = false;
  bool no_histogram = false;
  int64_t num_items = 20;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string tensor_info_list(const std::vector<engine::ReplayTensor>& tensors) {
  std::string out;
  for (const engine::ReplayTensor& t : tensors) {
    std::string strides;
    for (int64_t s : t.strides) strides += (strides.empty() ? "" : ", ") + std::to_string(s);
    if (t.strides.size() == 1) strides += ",";
    out += fmt::format("TensorInfo({}, ({}), -1, 1),", t.dtype, strides);
  }
  return "(" + out + ")";
}

// The plan report: how it was built, one row per layer (fused members, precision, tactic), the
// tensors fused away, int8 calibration and the layers that stayed in float, prevented fusions and
// injected faults.
int inspect_plan(const std::string& path, bool timings) {
  Result<engine::Plan> loaded = engine::load_plan(path);
  if (!loaded.ok()) return report_error(loaded.status());
  const engine::Plan& plan = *loaded;
  const engine::BuildSettings& s = plan.settings;
  fmt::print("[I] ==== Engine plan {} ====\n", path);
  fmt::print("    Model: {} (hash {})\n", plan.model_name.empty() ? "(unnamed graph)" : plan.model_name,
             plan.model_hash);
  fmt::print("    Build: precisions {} | constraints {} | {} | builder seed {} | timing margin {:g}{}\n",
             engine::mask_to_string(s.allowed), engine::constraints_name(s.constraints),
             s.replayed ? "tactics replayed" : (s.deterministic ? "deterministic" : "timed"), s.builder_seed,
             s.timing_margin,
             s.layer_precisions.empty() ? "" : fmt::format(" | {} layer precision(s)", s.layer_precisions.size()));
  for (const auto& [name, shape] : s.input_shapes) fmt::print("    Input: {} {}\n", name, shape_to_string(shape));
  fmt::print("    Outputs: {}\n", join(plan.outputs));
  if (!plan.folded.empty()) fmt::print("    Folded constants: {} node(s): {}\n", plan.folded.size(), join(plan.folded));
  fmt::print("    {}\n", plan_summary(plan));

  views::TextTable table({"#", "Layer", "Kind", "Precision", "Tactic", "Choice"}, {views::TextTable::Align::kRight});
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const engine::PlanLayer& l = plan.layers[i];
    table.add_row({std::to_string(i), l.name, std::string(engine::layer_kind_name(l.kind)),
                   std::string(engine::precision_name(l.precision)), std::string(engine::tactic_info(l.tactic).name),
                   l.choice});
  }
  fmt::print("\n[I] ---- {} Layer(s) ----\n{}", plan.layers.size(), table.render("    "));

  bool any_hidden = false;
  for (const engine::PlanLayer& l : plan.layers) any_hidden = any_hidden || !l.hidden.empty();
  if (any_hidden) {
    fmt::print("\n[I] ---- Tensors fused away (not available to --outputs or layer-wise comparison) ----\n");
    for (const engine::PlanLayer& l : plan.layers) {
      if (!l.hidden.empty()) fmt::print("    {}: {}\n", l.name, join(l.hidden));
    }
  }
  if (!plan.calibration.empty()) {
    size_t int8_layers = 0;
    for (const engine::PlanLayer& l : plan.layers) int8_layers += l.precision == engine::PrecisionId::kInt8 ? 1 : 0;
    fmt::print("\n[I] ---- int8 ----\n    Calibration: {}\n    {} int8 layer(s); {} tensor scale(s)\n",
               plan.calibration, int8_layers, plan.int8_scales.size());
    bool any_fallback = false;
    for (const engine::PlanLayer& l : plan.layers) {
      if (l.int8_fallback.empty()) continue;
      if (!any_fallback) fmt::print("    Layers that stay in float (no int8 tactic can run them):\n");
      any_fallback = true;
      fmt::print("      {} ({}): {}\n", l.name, engine::precision_name(l.precision), l.int8_fallback);
    }
  }
  if (timings) {
    fmt::print("\n[I] ---- Timed candidates (median ms) ----\n");
    for (const engine::PlanLayer& l : plan.layers) {
      if (l.timings.empty()) continue;
      std::string row;
      for (const engine::TacticTiming& t : l.timings) {
        row += fmt::format("{}{}/{} {:.4g}", row.empty() ? "" : ", ", engine::tactic_info(t.tactic).name,
                           engine::precision_name(t.precision), t.median_ms);
      }
      fmt::print("    {}: {}\n", l.name, row);
    }
  }
  if (!plan.prevented.empty()) {
    fmt::print("\n[I] ---- Fusions prevented by marked outputs ----\n");
    for (const engine::PreventedFusion& p : plan.prevented) fmt::print("    {}\n", p.describe());
  }
  if (!plan.faults.empty()) {
    fmt::print("\n[W] ---- Injected faults (a testing facility: this engine is broken on purpose) ----\n");
    for (size_t f = 0; f < plan.faults.size(); ++f) {
      std::vector<std::string> layers;
      for (const engine::PlanLayer& l : plan.layers) {
        if (std::find(l.faults.begin(), l.faults.end(), f) != l.faults.end()) layers.push_back(l.name);
      }
      fmt::print("    {} -> {}\n", plan.faults[f].text,
                 layers.empty() ? "no layer (condition or tactic unmet)" : join(layers));
    }
  }
  return kExitOk;
}

int inspect_model(const InspectModelArgs& args) {
  if (engine::is_plan_file(args.model)) {
    bool timings = false;
    for (const std::string& s : args.show) {
      if (s == "timings") {
        timings = true;
      } else if (s != "layers") {
        return report_error(make_error(StatusCode::kInvalidArgument, "--show {}: a plan shows layers or timings", s));
      }
    }
    return inspect_plan(args.model, timings);
  }
  views::ModelReportOptions opts;
  for (const std::string& s : args.show) {
    if (s == "layers") {
      opts.show_layers = true;
    } else if (s == "attrs") {
      opts.show_attrs = true;
    } else if (s == "weights") {
      opts.show_weights = true;
    } else {
      return report_error(make_error(StatusCode::kInvalidArgument, "--show {}: expected layers, attrs or weights", s));
    }
  }
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  fmt::print("{}", views::format_model_report(*model, opts));
  return kExitOk;
}

// One group of tensors to print: a runner's iteration, a feed, or a file's arrays.
struct Section {
  std::string title;
  TensorMap tensors;
};

Result<std::vector<Section>> load_sections(const std::filesystem::path& path, bool all) {
  std::vector<Section> sections;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    VN_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> sets, io::load_test_folder(path));
    for (const io::TestDataSet& set : sets) {
      Section in{set.dir.filename().string() + " inputs", {}}, out{set.dir.filename().string() + " outputs", {}};
      for (const NamedTensor& t : set.inputs) in.tensors.set(t.name, t.tensor);
      for (const NamedTensor& t : set.outputs) out.tensors.set(t.name, t.tensor);
      sections.push_back(std::move(in));
      if (!out.tensors.empty()) sections.push_back(std::move(out));
      if (!all) break;
    }
    return sections;
  }
  const std::string ext = path.extension().string();
  if (ext == ".npy") {
    VN_ASSIGN_OR_RETURN(Tensor t, io::npy_load(path));
    sections.push_back(Section{path.filename().string(), TensorMap{{path.stem().string(), std::move(t)}}});
  } else if (ext == ".npz") {
    VN_ASSIGN_OR_RETURN(TensorMap m, io::npz_load(path));
    sections.push_back(Section{path.filename().string(), std::move(m)});
  } else if (ext == ".pb") {
    VN_ASSIGN_OR_RETURN(NamedTensor t, io::tensor_proto_load(path));
    sections.push_back(Section{path.filename().string(), TensorMap{{t.name, std::move(t.tensor)}}});
  } else if (ext == ".json") {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(StatusCode::kIoError, "{}: cannot open", path.string());
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '[') {
      Result<std::vector<TensorMap>> feeds = io::feed_list_from_json(text);
      if (!feeds.ok()) return feeds.status().with_context(path.string());
      for (size_t i = 0; i < feeds->size() && (all || i == 0); ++i) {
        sections.push_back(Section{fmt::format("Feed {}", i), std::move((*feeds)[i])});
      }
    } else {
      Result<io::RunResults> results = io::run_results_from_json(text);
      if (!results.ok()) return results.status().with_context(path.string());
      for (io::RunnerResults& r : *results) {
        for (size_t i = 0; i < r.iterations.size() && (all || i == 0); ++i) {
          sections.push_back(
              Section{fmt::format("{} | Iteration {}", r.runner_name, i), std::move(r.iterations[i].outputs)});
        }
      }
    }
  } else {
    return make_error(
        StatusCode::kInvalidArgument,
        "{}: unknown data format '{}'; expected .json (Polygraphy), .npz, .npy, .pb or an ONNX test folder",
        path.string(), ext);
  }
  return sections;
}

int inspect_tactics(const std::string& path) {
  Result<engine::TacticReplay> replay = engine::load_tactic_replay(path);
  if (!replay.ok()) return report_error(replay.status());
  fmt::print("[I] Loaded {} layer(s) from the tactic replay {}\n", replay->entries.size(), path);
  for (const engine::ReplayEntry& e : replay->entries) {
    const engine::TacticInfo& t = engine::tactic_info(e.tactic);
    fmt::print("[I] Layer: {}\n", e.layer);
    fmt::print("        Algorithm: (Implementation: {}, Tactic: {}) | Inputs: {} | Outputs: {}\n",
               static_cast<int>(t.kind), engine::tactic_replay_id(e.tactic), tensor_info_list(e.inputs),
               tensor_info_list(e.outputs));
    fmt::print("        Tactic: {} | Precision: {}{}\n", t.name, engine::precision_name(e.precision),
               e.nodes.empty() ? "" : " | Nodes: " + join(e.nodes));
  }
  return kExitOk;
}

Result<std::vector<debug::ReplayChoices>> load_replays(const std::filesystem::path& path, const char* kind) {
  std::vector<std::filesystem::path> skipped;
  VN_ASSIGN_OR_RETURN(std::vector<debug::ReplayChoices> replays, debug::load_tactic_replays(path, &skipped));
  for (const std::filesystem::path& f : skipped) fmt::print("[V] Skipping {}: not a tactic replay\n", f.string());
  fmt::print("[I] Loaded {} {} tactic replay(s) from {}.\n", replays.size(), kind, path.string());
  return replays;
}

int diff_tactics(const DiffTacticsArgs& args) {
  if (!args.dir.empty() && (!args.good.empty() || !args.bad.empty())) {
    return report_error(make_error(StatusCode::kInvalidArgument, "give --dir, or --good and --bad, not both"));
  }
  if (args.good.empty() != args.bad.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--good and --bad go together (or give --dir)"));
  }
  const std::filesystem::path dir = args.dir.empty() ? std::filesystem::path(".") : std::filesystem::path(args.dir);
  const std::filesystem::path good = args.good.empty() ? dir / "good" : std::filesystem::path(args.good);
  const std::filesystem::path bad = args.bad.empty() ? dir / "bad" : std::filesystem::path(args.bad);
  Result<std::vector<debug::ReplayChoices>> good_replays = load_replays(good, "good");
  if (!good_replays.ok()) return report_error(good_replays.status());
  Result<std::vector<debug::ReplayChoices>> bad_replays = load_replays(bad, "bad");
  if (!bad_replays.ok()) return report_error(bad_replays.status());
  if (bad_replays->empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "{}: no tactic replays of bad builds (debug build --save-tactics F --artifacts F "
                                   "sorts them there)",
                                   bad.string()));
  }
  const debug::TacticDiff diff = debug::diff_tactics(*good_replays, *bad_replays);
  if (diff.layers.empty()) {
    fmt::print("[I] Could not determine potentially bad tactics. Try providing more tactic replay files if possible.\n");
    return kExitOk;
  }
  fmt::print("[I] Found potentially bad tactics (score = share of bad builds with the tactic - share of good builds "
             "with it; 1 separates perfectly):\n");
  for (const debug::LayerSuspects& layer : diff.layers) {
    fmt::print("[I] Layer: {}\n", layer.layer);
    for (size_t i = 0; i < layer.suspects.size(); ++i) {
      const debug::TacticSuspect& t = layer.suspects[i];
      fmt::print("        {}. {} | score {:.2f} | in {}/{} bad, {}/{} good build(s) | chance p={:.2g}{}\n", i + 1,
                 t.choice.label, t.score, t.bad, diff.bad_replays, t.good, diff.good_replays, t.p_value,
                 t.only_in_bad() ? " | only in bad builds" : "");
      if (t.choice.label != t.choice.algorithm) fmt::print("           Algorithm: {}\n", t.choice.algorithm);
    }
  }
  const debug::TacticSuspect& top = diff.layers.front().suspects.front();
  fmt::print("[I] Most suspicious: layer {} with {} (score {:.2f})\n", top.layer, top.choice.label, top.score);
  return kExitOk;
}

int inspect_data(const InspectDataArgs& args) {
  Result<std::vector<Section>> sections = load_sections(args.path, args.all);
  if (!sections.ok()) return report_error(sections.status());
  for (const Section& s : *sections) {
    fmt::print("==== {} ({} tensor(s)) ====\n", s.title, s.tensors.size());
    for (const NamedTensor& t : s.tensors) {
      fmt::print("{}\n", views::format_tensor_summary(t.name, t.tensor));
      if (args.show_values) fmt::print("    {}\n", views::format_values(t.tensor, args.num_items));
      if (!args.no_histogram && t.tensor.dtype() != DType::kString && t.tensor.numel() > 0) {
        Result<Histogram> h = compute_histogram(t.tensor, 10);
        if (h.ok()) fmt::print("{}", views::format_histogram(*h, "    "));
      }
    }
  }
  return kExitOk;
}

}  // namespace

void add_inspect_command(CLI::App& app, Action& action) {
  CLI::App* inspect = app.add_subcommand("inspect", "Show what a model or data file holds");
  inspect->require_subcommand(1);

  auto margs = std::make_shared<InspectModelArgs>();
  CLI::App* model = inspect->add_subcommand("model", "Inputs, outputs, initializers and nodes of a model");
  model->add_option("model", margs->model, "ONNX model, or an engine plan (vernier convert -o)")->required();
  model
      ->add_option("--show", margs->show, "Extra detail: layers (default), attrs, weights; for a plan: layers, timings")
      ->expected(1, 3);
  model->callback([margs, &action] { action = [margs] { return inspect_model(*margs); }; });

  auto dargs = std::make_shared<InspectDataArgs>();
  CLI::App* data = inspect->add_subcommand(
      "data", "Statistics of tensors in Polygraphy JSON (results or feeds), .npz, .npy, .pb or an ONNX test folder");
  data->add_option("file", dargs->path, "Data file or test folder")->required();
  data->add_flag("-a,--all", dargs->all, "Show every iteration, not only the first");
  data->add_flag("-s,--show-values", dargs->show_values, "Print the values");
  data->add_option("-n,--num-items", dargs->num_items, "Values to print per tensor with --show-values")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  data->add_flag("--no-histogram", dargs->no_histogram, "Leave out the histograms");
  data->callback([dargs, &action] { action = [dargs] { return inspect_data(*dargs); }; });

  auto tactics_path = std::make_shared<std::string>();
  CLI::App* tactics = inspect->add_subcommand("tactics", "Layers, tactics and precisions of a tactic replay");
  tactics->add_option("file", *tactics_path, "Tactic replay (--save-tactics)")->required();
  tactics->callback([tactics_path, &action] { action = [tactics_path] { return inspect_tactics(*tactics_path); }; });

  auto diff_args = std::make_shared<DiffTacticsArgs>();
  CLI::App* diff = inspect->add_subcommand(
      "diff-tactics", "Rank the tactics that separate bad engine builds from good ones (debug build's replays)");
  diff->add_option("--dir", diff_args->dir, "A folder with good/ and bad/ subfolders (default: the current folder)");
  diff->add_option("--good", diff_args->good, "A tactic replay or a folder of them from good builds");
  diff->add_option("--bad", diff_args->bad, "A tactic replay or a folder of them from bad builds");
  diff->footer(
      "Each layer's tactics seen in bad builds are scored by (bad builds with it / bad builds) - (good builds with it / "
      "good builds): 1 when every bad build and no good build chose it. Tactics with a positive score are listed, the "
      "best first, with the one-sided Fisher exact p-value of the split happening by chance. Polygraphy's rule (seen "
      "only in bad builds) is marked.");
  diff->callback([diff_args, &action] { action = [diff_args] { return diff_tactics(*diff_args); }; });
}

}  // namespace vn::cli
