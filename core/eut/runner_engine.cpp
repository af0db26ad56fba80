// SPDX-License-Identifier: Apache-2.0
#include "core/eut/runner_engine.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "core/backend/runner_backend.h"
#include "core/data/synthetic.h"
#include "core/engine/tactic_replay.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/convert_fp16.h"
#include "core/surgeon/convert_qdq.h"

namespace vn::eut {
namespace {

using engine::PrecisionId;

bool allows(const engine::BuildOptions& build, PrecisionId id) { return engine::mask_has(build.allowed, id); }

// A model Vernier lowered for a runner, and each original node's precision in it.
struct Lowered {
  Model model;
  std::vector<BuiltLayer> layers;  // the original model's nodes in graph order
};

// The nodes of `model`, in `precision` when `lowered` names them and in fp32 otherwise.
std::vector<BuiltLayer> layers_lowered(const Model& model, const std::vector<std::string>& lowered,
                                       std::string_view precision) {
  const std::unordered_set<std::string> names(lowered.begin(), lowered.end());
  std::vector<BuiltLayer> out;
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    std::string label = node_label(model.graph, static_cast<int64_t>(i));
    const bool low = names.count(label) > 0;
    out.push_back({std::move(label), model.graph.nodes[i].op_type, std::string(low ? precision : "fp32"), ""});
  }
  return out;
}

class RunnerBuild final : public Build {
 public:
  RunnerBuild(std::unique_ptr<Lowered> lowered, std::unique_ptr<RunnerBackend> backend)
      : lowered_(std::move(lowered)), backend_(std::move(backend)) {}

  Backend& backend() override { return *backend_; }

  // The runner's own description; for a model Vernier lowered, the conversion's when the runner
  // tells none (ONNX Runtime does not): which nodes compute in the lower precision is what
  // Vernier wrote into the model.
  std::vector<BuiltLayer> layers() const override {
    std::vector<BuiltLayer> out;
    for (const RunnerLayer& l : backend_->loaded().layers) out.push_back({l.name, l.type, l.precision, l.tactic});
    if (out.empty() && lowered_) return lowered_->layers;
    return out;
  }

  std::optional<engine::TacticReplay> tactic_replay() const override {
    if (!backend_->capabilities().tactic_replays) return std::nullopt;
    // The runner lists its replay among the artifacts (Polygraphy's TacticReplayData layout).
    for (const std::filesystem::path& a : backend_->loaded().artifacts) {
      if (a.extension() != ".json") continue;
      if (Result<engine::TacticReplay> replay = engine::load_tactic_replay(a); replay.ok()) return *replay;
    }
    return std::nullopt;
  }

  std::vector<std::filesystem::path> artifacts() const override { return backend_->loaded().artifacts; }
  const Model* converted_model() const override { return lowered_ ? &lowered_->model : nullptr; }

 private:
  std::unique_ptr<Lowered> lowered_;  // what the runner loads, when Vernier lowered the precision
  std::unique_ptr<RunnerBackend> backend_;
};

class RunnerEngine final : public EngineUnderTest {
 public:
  explicit RunnerEngine(RunnerEngineOptions options)
      : options_(std::move(options)), client_(std::make_shared<RunnerClient>(options_.runner)) {}

  std::string name() const override {
    const std::string& named = client_->options().command.name;
    return named == "runner" && !client_->hello().runner.empty() ? client_->hello().runner : named;
  }

  Result<std::string> describe() override {
    VN_RETURN_IF_ERROR(client_->start());
    return fmt::format("{} {} (runner {})", client_->hello().runner, client_->hello().version, options_.spec);
  }

  Result<Capabilities> capabilities() override {
    VN_RETURN_IF_ERROR(client_->start());
    const RunnerCapabilities& r = client_->hello().capabilities;
    Capabilities c;
    c.builds_vary = r.builds_vary;
    c.intermediate_tensors = r.intermediate_tensors;
    c.lowers_precision = r.lowers_precision;
    c.per_layer_precision = r.per_layer_precision;
    c.tactic_replays = r.tactic_replays;
    c.artifacts = r.artifacts;
    return c;
  }

  Result<std::unique_ptr<Build>> build(const Model& model, const engine::BuildOptions& build,
                                       const PrepareOptions& prepare) override {
    VN_RETURN_IF_ERROR(client_->start());
    const RunnerCapabilities& caps = client_->hello().capabilities;
    const std::string who = fmt::format("runner '{}'", name());
    if (!build.faults.empty()) {
      return make_error(StatusCode::kInvalidArgument,
                        "--inject-fault breaks Vernier's built-in engine on purpose; it does not apply to {}", who);
    }
    if (build.replay && !caps.tactic_replays) {
      return make_error(StatusCode::kInvalidArgument, "--load-tactics: {} takes no tactic replays", who);
    }
    RunnerBackendOptions backend_options;
    backend_options.options = options_.options;
    backend_options.build = runner_build_flags(build, prepare.num_threads);
    std::unique_ptr<Lowered> converted;
    if (!caps.lowers_precision && backend_options.build.lowers()) {
      VN_ASSIGN_OR_RETURN(Lowered lowered, lower(model, build, who, prepare.num_threads));
      converted = std::make_unique<Lowered>(std::move(lowered));
      // The runner gets a model in the precision asked for, and no precision flags.
      backend_options.build = runner_build_flags(engine::BuildOptions{}, prepare.num_threads);
      backend_options.build.builder_seed = build.builder_seed;
    }
    auto backend = std::make_unique<RunnerBackend>(client_, std::move(backend_options));
    VN_RETURN_IF_ERROR(backend->prepare(converted ? converted->model : model, prepare));
    return std::unique_ptr<Build>(std::make_unique<RunnerBuild>(std::move(converted), std::move(backend)));
  }

  std::vector<std::string> command_line() const override {
    std::vector<std::string> out{"--engine-runner", options_.spec};
    for (const auto& [key, value] : options_.options) {
      out.push_back("--runner-option");
      out.push_back(key + "=" + value);
    }
    return out;
  }

 private:
  // The model with its precision lowered as `build` asks, for a runner that runs the file it gets.
  Result<Lowered> lower(const Model& model, const engine::BuildOptions& build, const std::string& who, int threads) {
    const auto refuse = [&](std::string_view flag, std::string_view why) {
      return make_error(StatusCode::kInvalidArgument, "{}: {} runs the ONNX file it is given, and {}", flag, who,
                        why);
    };
    if (allows(build, PrecisionId::kBf16)) return refuse("--bf16", "Vernier converts models to float16 or int8 only");
    if (allows(build, PrecisionId::kTf32)) return refuse("--tf32", "ONNX has no tf32 type to convert a model to");
    const bool fp16 = allows(build, PrecisionId::kFp16) || allows(build, PrecisionId::kFp16Strict);
    const bool int8 = allows(build, PrecisionId::kInt8);
    if (fp16 && int8) return refuse("--fp16 with --int8", "Vernier converts a model to one of them");
    const bool requests = build.constraints != engine::PrecisionConstraints::kNone;
    if (int8) {
      if (requests && !build.layer_precisions.empty()) {
        return refuse("--layer-precisions with --int8", "its QDQ models quantize every Conv, MatMul and Gemm");
      }
      surgeon::QdqOptions qdq;
      qdq.int8 = build.int8;
      qdq.input_shapes = build.input_shapes;
      qdq.num_threads = threads;
      VN_ASSIGN_OR_RETURN(surgeon::QdqResult result, surgeon::convert_to_qdq(model, qdq));
      std::vector<std::string> quantized;
      for (const surgeon::QuantizedNode& q : result.report.quantized) quantized.push_back(q.node);
      std::vector<BuiltLayer> layers = layers_lowered(model, quantized, "int8");
      return Lowered{std::move(result.model), std::move(layers)};
    }
    surgeon::Fp16Options fp16_options;
    if (requests) {
      for (const auto& [layer, precision] : build.layer_precisions) {
        if (precision != PrecisionId::kFp32) {
          return refuse("--layer-precisions " + layer + ":" + std::string(engine::precision_name(precision)),
                        "a float16 model can keep layers in float32 only");
        }
        // A request for a layer the model lacks (a reduced candidate of it) has nothing to keep.
        const bool present = std::any_of(model.graph.nodes.begin(), model.graph.nodes.end(), [&](const Node& n) {
          return n.name == layer || node_label(model.graph, &n - model.graph.nodes.data()) == layer;
        });
        if (present) fp16_options.keep_fp32.push_back(layer);
      }
    }
    // Types shape inference left unknown come from one reference run on synthetic data.
    fp16_options.fallback = [&](const std::vector<std::string>& tensors) -> Result<TensorMap> {
      data::SyntheticOptions synthetic;
      synthetic.input_shapes = build.input_shapes;
      VN_ASSIGN_OR_RETURN(std::vector<TensorMap> feeds, data::generate_feeds(model.graph, synthetic));
      ref::ReferenceBackend reference;
      PrepareOptions prep;
      prep.outputs = tensors;
      prep.num_threads = threads;
      VN_RETURN_IF_ERROR(reference.prepare(model, prep));
      return reference.run(feeds.front());
    };
    VN_ASSIGN_OR_RETURN(surgeon::Fp16Result result, surgeon::convert_to_fp16(model, fp16_options));
    std::vector<BuiltLayer> layers = layers_lowered(model, result.report.nodes_fp16, "fp16");
    return Lowered{std::move(result.model), std::move(layers)};
  }

  RunnerEngineOptions options_;
  std::shared_ptr<RunnerClient> client_;
};

}  // namespace

RunnerBuildFlags runner_build_flags(const engine::BuildOptions& build, int threads) {
  RunnerBuildFlags flags;
  flags.fp16 = allows(build, PrecisionId::kFp16) || allows(build, PrecisionId::kFp16Strict);
  flags.bf16 = allows(build, PrecisionId::kBf16);
  flags.tf32 = allows(build, PrecisionId::kTf32);
  flags.int8 = allows(build, PrecisionId::kInt8);
  flags.builder_seed = build.builder_seed;
  flags.precision_constraints = std::string(engine::constraints_name(build.constraints));
  flags.threads = threads;
  for (const auto& [layer, precision] : build.layer_precisions) {
    flags.layer_precisions.emplace_back(layer, std::string(engine::precision_name(precision)));
  }
  return flags;
}

std::shared_ptr<EngineUnderTest> runner_engine(RunnerEngineOptions options) {
  return std::make_shared<RunnerEngine>(std::move(options));
}

}  // namespace vn::eut
