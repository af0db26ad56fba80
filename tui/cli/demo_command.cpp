// SPDX-License-Identifier: Apache-2.0
// `vernier demo`: the bundled demo model. On a terminal, a full-screen browser over its layer-wise
// comparison, reference against the engine with a planted fault; otherwise (or with --no-tui) the
// reference's plain report. The guided triage of the demo scenario comes with issue 8.
#include <system_error>

#include "core/ir/onnx_import.h"
#include "core/engine/fault.h"
#include "core/ref/reference_backend.h"
#include "tui/cli/browser.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "views/report/model_report.h"
#include "views/report/tensor_report.h"

namespace vn::cli {
namespace {

// The fault the demo plants in the engine: conv2 scales a tenth of its outputs by 1.5, so the
// layer-wise comparison has one clear culprit and errors that flow downstream from it.
constexpr const char* kDemoFault = "layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7";

// The browser's exit code, or nullopt when this terminal cannot show it.
std::optional<int> demo_tui(const Model& model, const TensorMap& feeds) {
  session::LayerwiseSessionOptions options;
  Result<engine::FaultSpec> fault = engine::parse_fault(kDemoFault);
  if (!fault.ok()) return report_error(fault.status());
  options.engine.build.faults.push_back(std::move(*fault));
  options.engine.build.builder_seed = 1;
  options.local_errors = true;
  options.threads = 1;
  std::string error;
  std::optional<int> code = browse_layerwise(model, feeds, std::move(options), error);
  if (!code) fmt::print(stderr, "[W] {}; printing the plain report instead\n", error);
  return code;
}

int demo(bool no_tui) {
  const std::filesystem::path model_path = assets_dir() / "models" / "demo.onnx";
  std::error_code ec;
  if (!std::filesystem::exists(model_path, ec)) {
    return report_error(make_error(StatusCode::kIoError,
                                   "{}: demo model not found; set VERNIER_ASSETS to the assets/ folder of Vernier",
                                   model_path.string()));
  }
  Result<Model> model = load_model(model_path);
  if (!model.ok()) return report_error(model.status());
  DataOptions data;
  Result<std::vector<TensorMap>> feeds = data.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
  if (!no_tui && on_terminal()) {
    if (const std::optional<int> code = demo_tui(*model, feeds->front())) return *code;
  }
  views::ModelReportOptions opts;
  opts.show_layers = false;
  fmt::print("{}\n", views::format_model_report(*model, opts));

  ref::ReferenceBackend backend;
  PrepareOptions prep;
  prep.mark_all = true;
  if (Status s = backend.prepare(*model, prep); !s.ok()) return report_error(s);
  Result<TensorMap> out = backend.run(feeds->front());
  if (!out.ok()) return report_error(out.status());
  fmt::print("Reference outputs of every layer (seed 1 synthetic input):\n");
  for (const NamedTensor& t : *out) fmt::print("  {}\n", views::format_tensor_summary(t.name, t.tensor));
  return kExitOk;
}

}  // namespace

void add_demo_command(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand(
      "demo", "Browse the demo model's layer-wise comparison full-screen (on a terminal), or print its report");
  auto no_tui = std::make_shared<bool>(false);
  cmd->add_flag("--no-tui", *no_tui, "Print the plain report even on a terminal");
  cmd->callback([&action, no_tui] { action = [no_tui] { return demo(*no_tui); }; });
}

}  // namespace vn::cli
