// SPDX-License-Identifier: Apache-2.0
// `vernier convert`: builds the engine for a model and saves its plan (-o), or converts the model to
// a float16 or QDQ ONNX model for engines that run ONNX files (--to-onnx).
#include <chrono>
#include <map>
#include <memory>

#include <fmt/ranges.h>

#include "core/engine/engine_backend.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/convert_fp16.h"
#include "core/surgeon/convert_qdq.h"
#include "tui/cli/commands.h"
#include "tui/cli/options.h"

namespace vn::cli {
namespace {

struct ConvertArgs {
  std::string model;
  std::string output;
  std::string to_onnx;
  bool fp16_io = false;
  bool reduce_range = false;
  std::vector<std::string> keep_fp32;
  std::vector<std::string> outputs;
  bool mark_all = false;
  int threads = 0;
  DataOptions data;
  EngineOptions engine;
};

int convert_plan(const ConvertArgs& args) {
  if (!args.engine.load_engine.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument,
                                   "--load-engine: convert builds a plan from the model; run a saved plan with "
                                   "`vernier run MODEL --engine --load-engine PLAN`"));
  }
  if (args.fp16_io || !args.keep_fp32.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "{} is for --to-onnx --fp16",
                                   args.fp16_io ? "--fp16-io" : "--keep-fp32"));
  }
  if (args.reduce_range) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--reduce-range is for --to-onnx --int8"));
  }
  if (!args.data.save_inputs.empty()) {
    return report_error(make_error(StatusCode::kInvalidArgument, "--save-inputs: convert writes no inputs"));
  }
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  Result<data::SyntheticOptions> synthetic = args.data.synthetic_options();
  if (!synthetic.ok()) return report_error(synthetic.status());
  Result<engine::EngineOptions> options = args.engine.engine_options(args.data.input_shapes, *synthetic);
  if (!options.ok()) return report_error(options.status());
  if (!args.data.load_inputs.empty()) {
    // --load-inputs are the calibration feeds when --calibration-data names none.
    if (!args.engine.int8 || !args.engine.calibration_data.empty()) {
      return report_error(make_error(StatusCode::kInvalidArgument,
                                     "--load-inputs: convert reads inputs only to calibrate --int8 (when "
                                     "--calibration-data is not given)"));
    }
    options->build.int8.data.assign(args.data.load_inputs.begin(), args.data.load_inputs.end());
  }
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

// Flags of an engine build that mean nothing to a converted ONNX model.
Status check_to_onnx_flags(const ConvertArgs& args) {
  const EngineOptions& e = args.engine;
  const std::vector<std::pair<bool, const char*>> engine_only = {
      {!args.output.empty(), "-o"},
      {e.bf16, "--bf16"},
      {e.tf32, "--tf32"},
      {!e.layer_precisions.empty(), "--layer-precisions"},
      {e.precision_constraints != "none", "--precision-constraints"},
      {!e.save_tactics.empty(), "--save-tactics"},
      {!e.load_tactics.empty(), "--load-tactics"},
      {e.deterministic, "--deterministic"},
      {e.builder_seed.has_value(), "--builder-seed"},
      {!e.timing_cache.empty(), "--timing-cache"},
      {!e.save_engine.empty(), "--save-engine"},
      {!e.load_engine.empty(), "--load-engine"},
      {!e.inject_faults.empty(), "--inject-fault"},
      {!args.outputs.empty(), "--outputs"},
      {args.mark_all, "--mark-all"},
      {!args.data.save_inputs.empty(), "--save-inputs"},
  };
  for (const auto& [given, flag] : engine_only) {
    VN_RETURN_IF_NOT(!given, StatusCode::kInvalidArgument,
                     "{} is for engine plans; --to-onnx writes an ONNX model for another engine", flag);
  }
  VN_RETURN_IF_NOT(e.fp16 || e.int8, StatusCode::kInvalidArgument,
                   "--to-onnx needs --fp16 (a float16 model) or --int8 (a QDQ model)");
  VN_RETURN_IF_NOT(!(e.fp16 && e.int8), StatusCode::kInvalidArgument,
                   "--to-onnx takes --fp16 or --int8, not both: the QDQ model keeps float32 between its Q/DQ pairs");
  VN_RETURN_IF_NOT(e.fp16 || (!args.fp16_io && args.keep_fp32.empty()), StatusCode::kInvalidArgument,
                   "{} is for --fp16", args.fp16_io ? "--fp16-io" : "--keep-fp32");
  VN_RETURN_IF_NOT(e.int8 || !args.reduce_range, StatusCode::kInvalidArgument, "--reduce-range is for --int8");
  const bool calibration = !e.calibration_data.empty() || !e.calibration_method.empty() || !e.calibration_cache.empty();
  VN_RETURN_IF_NOT(e.int8 || !calibration, StatusCode::kInvalidArgument,
                   "calibration flags are for --int8 (--fp16 needs no data)");
  return Status::OK();
}

std::string node_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 12;
  std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(names.size(), kShown)));
  std::string out = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

void print_kept(const std::vector<surgeon::KeptNode>& kept, const char* what) {
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const surgeon::KeptNode& k : kept) by_reason[k.reason].push_back(fmt::format("{} ({})", k.node, k.op_type));
  for (const auto& [reason, nodes] : by_reason) {
    fmt::print("[I]     {} {} {}: {}\n", nodes.size(), what, reason, node_list(nodes));
  }
}

Status to_fp16(const ConvertArgs& args, const Model& model) {
  surgeon::Fp16Options options;
  options.keep_io_types = !args.fp16_io;
  VN_ASSIGN_OR_RETURN(options.keep_fp32, surgeon::expand_name_list(args.keep_fp32));
  // Types shape inference left unknown come from one reference run on the data options' feed.
  options.fallback = [&](const std::vector<std::string>& tensors) -> Result<TensorMap> {
    fmt::print("[I] Running the reference for the types of: {}\n", node_list(tensors));
    VN_ASSIGN_OR_RETURN(std::vector<TensorMap> feeds, args.data.make_feeds(model.graph));
    ref::ReferenceBackend reference;
    PrepareOptions prep;
    prep.outputs = tensors;
    prep.num_threads = args.threads;
    VN_RETURN_IF_ERROR(reference.prepare(model, prep));
    return reference.run(feeds.front());
  };
  VN_ASSIGN_OR_RETURN(surgeon::Fp16Result result, surgeon::convert_to_fp16(model, options));
  const surgeon::Fp16Report& r = result.report;
  fmt::print("[I] float16: {} node(s) compute in float16, {} kept in float32{}\n", r.nodes_fp16.size(), r.kept.size(),
             r.kept.empty() ? "" : ":");
  print_kept(r.kept, "kept,");
  if (!r.fixed_float32.empty()) {
    fmt::print("[I]     {} value(s) stay float32 in float16 nodes (ONNX allows no other type): {}\n",
               r.fixed_float32.size(), node_list(r.fixed_float32));
  }
  fmt::print("[I]     Weights: {} float32 initializer(s) and Constant(s) now float16, {} read only in float32 left "
             "as they were\n",
             r.initializers_fp16, r.initializers_fp32);
  for (const surgeon::ClampedTensor& c : r.clamped) {
    fmt::print("[W]     '{}': {} value(s) beyond float16's range clamped to +-65504 (largest |x| {})\n", c.name,
               c.count, format_number(c.max_abs));
  }
  if (r.flushed_to_zero > 0) {
    fmt::print("[W]     {} non-zero weight value(s) below float16's smallest subnormal became 0\n", r.flushed_to_zero);
  }
  fmt::print("[I]     Casts: {} added ({}), {} Cast(s) to float32 now cast to float16\n", r.casts_added,
             args.fp16_io ? "graph inputs and outputs are float16" : "graph inputs and outputs stay float32",
             r.casts_retargeted);
  VN_RETURN_IF_ERROR(save_model(result.model, args.to_onnx));
  fmt::print("[I] Saved the float16 model to {}\n", args.to_onnx);
  return Status::OK();
}

Status to_qdq(const ConvertArgs& args, const Model& model) {
  surgeon::QdqOptions options;
  const EngineOptions& e = args.engine;
  if (!e.calibration_method.empty()) {
    options.int8.calibration.method = *engine::calibration_method_from_name(e.calibration_method);
  }
  if (!e.calibration_data.empty()) {
    VN_RETURN_IF_NOT(args.data.load_inputs.empty(), StatusCode::kInvalidArgument,
                     "--load-inputs and --calibration-data both name calibration feeds: give one");
    options.int8.data = {e.calibration_data};
  } else {
    // Without --calibration-data, the data options' feeds: --load-inputs, else synthetic ones.
    options.int8.data.assign(args.data.load_inputs.begin(), args.data.load_inputs.end());
  }
  options.int8.cache = e.calibration_cache;
  VN_ASSIGN_OR_RETURN(options.int8.synthetic, args.data.synthetic_options());
  for (const std::string& s : args.data.input_shapes) {
    VN_ASSIGN_OR_RETURN(auto parsed, parse_input_shape(s));
    options.input_shapes[parsed.first] = parsed.second;
  }
  options.num_threads = args.threads;
  options.reduce_range = args.reduce_range;
  VN_ASSIGN_OR_RETURN(surgeon::QdqResult result, surgeon::convert_to_qdq(model, options));
  const surgeon::QdqReport& r = result.report;
  fmt::print("[I] int8 scales: {}{}\n", r.calibration,
             r.synthetic ? " (synthetic data: give --calibration-data for scales that fit real inputs)" : "");
  if (r.opset_after != r.opset_before) {
    fmt::print("[I] Opset import raised from {} to {} (per-channel DequantizeLinear); every node means the same there\n",
               r.opset_before, r.opset_after);
  }
  std::map<std::string, size_t> per_op;
  size_t int32_biases = 0;
  float w_min = 0, w_max = 0;
  for (size_t i = 0; i < r.quantized.size(); ++i) {
    const surgeon::QuantizedNode& q = r.quantized[i];
    ++per_op[q.op_type];
    int32_biases += q.bias_int32 ? 1 : 0;
    w_min = i == 0 ? q.weight_scale_min : std::min(w_min, q.weight_scale_min);
    w_max = std::max(w_max, q.weight_scale_max);
  }
  std::vector<std::string> ops;
  for (const auto& [op, count] : per_op) ops.push_back(fmt::format("{} {}", count, op));
  fmt::print("[I] int8 QDQ: {} node(s) quantized ({}), {} left in float{}\n", r.quantized.size(),
             ops.empty() ? "none" : fmt::format("{}", fmt::join(ops, ", ")), r.skipped.size(),
             r.skipped.empty() ? "" : ":");
  print_kept(r.skipped, "left in float,");
  if (!r.quantized.empty()) {
    fmt::print("[I]     Activations: {} tensor(s) with a QuantizeLinear/DequantizeLinear pair (int8, zero point 0), "
               "scales {} to {}\n",
               r.activations, format_number(r.activation_scale_min), format_number(r.activation_scale_max));
    fmt::print("[I]     Weights: int8{}, one scale per output channel (Conv axis 0, MatMul/Gemm output columns), "
               "scales {} to {}; {} bias(es) int32 (scale = input scale x weight scale)\n",
               args.reduce_range ? " in 7 bits (--reduce-range: -63 to 63)" : "", format_number(w_min),
               format_number(w_max), int32_biases);
  }
  VN_RETURN_IF_ERROR(save_model(result.model, args.to_onnx));
  fmt::print("[I] Saved the QDQ model to {}\n", args.to_onnx);
  return Status::OK();
}

int convert_onnx(const ConvertArgs& args) {
  if (Status s = check_to_onnx_flags(args); !s.ok()) return report_error(s);
  Result<Model> model = load_model(args.model);
  if (!model.ok()) return report_error(model.status());
  const Status s = args.engine.fp16 ? to_fp16(args, *model) : to_qdq(args, *model);
  return s.ok() ? kExitOk : report_error(s.with_context(args.model));
}

}  // namespace

void add_convert_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Build the engine for a model and save its plan (-o), or write a float16 or QDQ ONNX model for "
                 "engines that run ONNX files (--to-onnx)");
  cmd->add_option("model", args->model, "ONNX model")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the plan (JSON)");
  cmd->add_option("--to-onnx", args->to_onnx,
                  "Write an ONNX model converted for another engine: float16 (--fp16) or QDQ int8 (--int8)");
  cmd->add_flag("--fp16-io", args->fp16_io, "--to-onnx --fp16: float16 graph inputs and outputs (default: float32)");
  cmd->add_flag("--reduce-range", args->reduce_range,
                "--to-onnx --int8: weights in 7 bits, for x86 int8 kernels without VNNI, which saturate full-range "
                "ones (ONNX Runtime's reduce_range)");
  cmd->add_option("--keep-fp32", args->keep_fp32,
                  "--to-onnx --fp16: keep these nodes in float32 (names, or @FILE with one name per line)");
  cmd->add_option("--outputs", args->outputs, "Mark these tensors as outputs (they block fusions across them)");
  cmd->add_flag("--mark-all", args->mark_all, "Mark every tensor (layer-wise mode: no fusion)");
  cmd->add_option("--threads", args->threads, "Threads for the build (default: all cores)")->check(CLI::Range(0, 1024));
  args->data.add_to(*cmd);
  args->engine.add_to(*cmd);
  cmd->callback([args, &action] {
    action = [args] {
      if (!args->to_onnx.empty()) return convert_onnx(*args);
      if (args->output.empty()) {
        return report_error(make_error(StatusCode::kInvalidArgument,
                                       "convert needs -o PLAN (an engine plan) or --to-onnx OUT.onnx"));
      }
      return convert_plan(*args);
    };
  });
}

}  // namespace vn::cli
