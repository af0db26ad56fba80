// SPDX-License-Identifier: Apache-2.0
// `vernier inspect model|data`: what a model or a data file holds.
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include "core/compare/tensor_stats.h"
#include "core/io/npy.h"
#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/io/tensor_proto.h"
#include "core/io/test_folder.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "views/report/model_report.h"
#include "views/report/tensor_report.h"

namespace vn::cli {
namespace {

struct InspectModelArgs {
  std::string model;
  std::vector<std::string> show;
};

struct InspectDataArgs {
  std::string path;
  bool all = false;
  bool show_values = false;
  bool no_histogram = false;
  int64_t num_items = 20;
};

int inspect_model(const InspectModelArgs& args) {
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
          sections.push_back(Section{fmt::format("{} | Iteration {}", r.runner_name, i), std::move(r.iterations[i].outputs)});
        }
      }
    }
  } else {
    return make_error(StatusCode::kInvalidArgument,
                      "{}: unknown data format '{}'; expected .json (Polygraphy), .npz, .npy, .pb or an ONNX test folder",
                      path.string(), ext);
  }
  return sections;
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
  model->add_option("model", margs->model, "ONNX model")->required();
  model->add_option("--show", margs->show, "Extra detail: layers (default), attrs, weights")->expected(1, 3);
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
}

}  // namespace vn::cli
