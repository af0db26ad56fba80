// SPDX-License-Identifier: Apache-2.0
// `vernier convert`: builds the engine for a model and saves its plan.
#include <chrono>
#include <memory>

#include "core/engine/engine_backend.h"
#include "core/ir/onnx_import.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"

namespace vn::cli {
namespace {

struct ConvertArgs {
  std::string model;
  std::string output;
  std::vector<std::string> outputs;
  bool mark_all = false;
  std::vector<std::string> input_shapes;
  int threads = 0;
  EngineOptions engine;
};

int convert(const ConvertArgs& args) {
  if (!args.engine.load_engine.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--load-engine: convert builds a plan from the model; run a saved plan with "
                                   "`vernier run MODEL --engine --load-engine PLAN`"));
  }
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  Result<engine::EngineOptions> options = args.engine.engine_options(args.input_shapes);
  if (!options.ok()) return report_error(options.status());
  engine::EngineBackend backend(std::move(*options));
  PrepareOptions prep;
  prep.outputs = args.outputs;
  prep.mark_all = args.mark_all;
  prep.num_threads = args.threads;
  const auto start = std::chrono::steady_clock::now();
  if (Status s = backend.prepare(*model, prep); !s.ok()) return report_error(s.with_context(args.model));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("[I] Built the engine for {} in {:.3g} s: {}\n", args.model, seconds, plan_summary(*backend.plan()));
  if (Status s = engine::save_plan(*backend.plan(), args.output); !s.ok()) return report_error(s);
  fmt::print("[I] Saved the engine plan to {}\n", args.output);
  if (Status s = args.engine.save_artifacts(*backend.plan()); !s.ok()) return report_error(s);
  return kExitOk;
}

}  // namespace

void add_convert_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand("convert", "Build the engine for a model and save its plan");
  cmd->add_option("model", args->model, "ONNX model")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the plan (JSON)")->required();
  cmd->add_option("--outputs", args->outputs, "Mark these tensors as outputs (they block fusions across them)");
  cmd->add_flag("--mark-all", args->mark_all, "Mark every tensor (layer-wise mode: no fusion)");
  cmd->add_option("--input-shapes", args->input_shapes, "Shapes for dynamic inputs, NAME:[D0,D1,...]");
  cmd->add_option("--threads", args->threads, "Threads for the build (default: all cores)")->check(CLI::Range(0, 1024));
  args->engine.add_to(*cmd);
  cmd->callback([args, &action] { action = [args] { return convert(*args); }; });
}

}  // namespace vn::cli
