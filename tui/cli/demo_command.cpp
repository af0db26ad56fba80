// SPDX-License-Identifier: Apache-2.0
// `vernier demo`: the bundled demo model on the reference backend. The guided triage of the
// demo scenario replaces this once the triage flow exists (issue 8).
#include <system_error>

#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"
#include "views/report/model_report.h"
#include "views/report/tensor_report.h"

namespace vn::cli {
namespace {

int demo() {
  const std::filesystem::path model_path = assets_dir() / "models" / "demo.onnx";
  std::error_code ec;
  if (!std::filesystem::exists(model_path, ec)) {
    return report_error(make_error(StatusCode::kIoError,
                                   "{}: demo model not found; set VERNIER_ASSETS to the assets/ folder of Vernier",
                                   model_path.string()));
  }
  Result<Model> model = load_model(model_path);
  if (!model.ok()) return report_error(model.status());
  views::ModelReportOptions opts;
  opts.show_layers = false;
  fmt::print("{}\n", views::format_model_report(*model, opts));

  DataOptions data;
  Result<std::vector<TensorMap>> feeds = data.make_feeds(model->graph);
  if (!feeds.ok()) return report_error(feeds.status());
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
  CLI::App* cmd = app.add_subcommand("demo", "Run the bundled demo model on the reference backend");
  cmd->callback([&action] { action = demo; });
}

}  // namespace vn::cli
