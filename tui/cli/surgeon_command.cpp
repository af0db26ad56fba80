// SPDX-License-Identifier: Apache-2.0
// `vernier surgeon extract|sanitize`: cut a subgraph out of a model by tensor names; fold
// constants, clean up, override input shapes and sort a model.
#include <memory>

#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/surgeon.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"

namespace vn::cli {
namespace {

struct ExtractArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string output;
  int threads = 0;
  DataOptions data;
};

struct SanitizeArgs {
  std::string model;
  std::string output;
  bool fold_constants = false;
  bool cleanup = false;
  bool toposort = false;
  std::vector<std::string> override_input_shapes;
};

Status save(const Model& model, const std::string& path) {
  VN_RETURN_IF_ERROR(save_model(model, path));
  fmt::print("[I] Saving ONNX model to: {}\n", path);
  return Status::OK();
}

int extract(const ExtractArgs& args) {
  std::vector<surgeon::BoundaryTensor> inputs, outputs;
  for (const std::string& text : args.inputs) {
    Result<surgeon::BoundaryTensor> b = surgeon::parse_boundary(text, true);
    if (!b.ok()) return report_error(b.status());
    inputs.push_back(std::move(*b));
  }
  for (const std::string& text : args.outputs) {
    Result<surgeon::BoundaryTensor> b = surgeon::parse_boundary(text, false);
    if (!b.ok()) return report_error(b.status());
    outputs.push_back(std::move(*b));
  }
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  // Fallback inference: the reference backend runs the whole model on the data options' first
  // feed with the tensors whose metadata is missing marked as outputs.
  surgeon::FallbackRun fallback = [&](const std::vector<std::string>& tensors) -> Result<TensorMap> {
    fmt::print("[I] Running fallback inference (reference backend) for: {}\n", fmt::join(tensors, ", "));
    VN_ASSIGN_OR_RETURN(std::vector<TensorMap> feeds, args.data.make_feeds(model->graph));
    ref::ReferenceBackend reference;
    PrepareOptions prep;
    prep.outputs = tensors;
    prep.num_threads = args.threads;
    VN_RETURN_IF_ERROR(reference.prepare(*model, prep));
    return reference.run(feeds.front());
  };
  Result<surgeon::Rewrite> rw = surgeon::extract(*model, inputs, outputs, fallback);
  if (!rw.ok()) return report_error(rw.status().with_context(args.model));
  for (const std::string& line : rw->changes) fmt::print("[I]     {}\n", line);
  if (Status s = save(rw->model, args.output); !s.ok()) return report_error(s);
  return kExitOk;
}

int sanitize(const SanitizeArgs& args) {
  surgeon::SanitizeOptions options;
  options.fold_constants = args.fold_constants;
  options.cleanup = args.cleanup;
  options.toposort = args.toposort;
  for (const std::string& text : args.override_input_shapes) {
    Result<surgeon::BoundaryTensor> b = surgeon::parse_boundary(text, true);
    if (!b.ok() || !b->shape || b->dtype) {
      return report_error(make_error(StatusCode::kInvalidArgument,
                                     "--override-input-shapes '{}': expected NAME:[D0,D1,...] (a dim may be a name)",
                                     text));
    }
    options.override_input_shapes[b->name] = *b->shape;
  }
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  surgeon::FoldCounts counts;
  Result<surgeon::Rewrite> rw = surgeon::sanitize(*model, options, &counts);
  if (!rw.ok()) return report_error(rw.status().with_context(args.model));
  if (args.fold_constants) {
    fmt::print("[I] Folding Constants | Pass 1\n");
    fmt::print("[I]     Total Nodes | Original: {}, After Folding: {} | {} Nodes Folded\n", counts.original,
               counts.after, counts.folded.size());
  }
  for (const std::string& line : rw->changes) fmt::print("[I]     {}\n", line);
  if (Status s = save(rw->model, args.output); !s.ok()) return report_error(s);
  return kExitOk;
}

}  // namespace

void add_surgeon_command(CLI::App& app, Action& action) {
  CLI::App* surgeon = app.add_subcommand("surgeon", "Rewrite ONNX models: extract subgraphs, sanitize");
  surgeon->require_subcommand(1);

  auto e = std::make_shared<ExtractArgs>();
  CLI::App* extract_cmd = surgeon->add_subcommand("extract", "Cut out the subgraph between tensors");
  extract_cmd->add_option("model", e->model, "ONNX model")->required();
  extract_cmd->add_option("--inputs", e->inputs,
                          "NAME[:SHAPE[:DTYPE]] per input of the subgraph, e.g. x:[1,3,224,224]:float32 or x:auto:auto "
                          "(default: the model's inputs)");
  extract_cmd->add_option("--outputs", e->outputs,
                          "NAME[:DTYPE] per output of the subgraph, e.g. y:auto (default: the model's outputs)");
  extract_cmd->add_option("-o,--output", e->output, "Where to write the subgraph (overwritten)")->required();
  extract_cmd->add_option("--threads", e->threads, "Threads for fallback inference (default: all cores)")
      ->check(CLI::Range(0, 1024));
  e->data.add_to(*extract_cmd);
  extract_cmd->footer(
      "Shapes and dtypes not given come from the model (ONNX shape inference), else from one reference run of the "
      "full model on the data options' first feed (fallback inference).");
  extract_cmd->callback([e, &action] { action = [e] { return extract(*e); }; });

  auto s = std::make_shared<SanitizeArgs>();
  CLI::App* sanitize_cmd = surgeon->add_subcommand("sanitize", "Fold constants, clean up, fix input shapes, sort");
  sanitize_cmd->add_option("model", s->model, "ONNX model")->required();
  sanitize_cmd->add_option("-o,--output", s->output, "Where to write the result (overwritten)")->required();
  sanitize_cmd->add_flag("--fold-constants", s->fold_constants,
                         "Evaluate nodes whose inputs are all constants (reference kernels) into initializers");
  sanitize_cmd->add_flag("--cleanup", s->cleanup, "Remove nodes no output depends on, and unused initializers");
  sanitize_cmd->add_flag("--toposort", s->toposort, "Sort the nodes topologically");
  sanitize_cmd->add_option("--override-input-shapes,--override-inputs", s->override_input_shapes,
                           "NAME:[D0,D1,...] new input shapes (then shape inference runs again)");
  sanitize_cmd->callback([s, &action] { action = [s] { return sanitize(*s); }; });
}

}  // namespace vn::cli
