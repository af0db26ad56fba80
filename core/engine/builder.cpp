// SPDX-License-Identifier: Apache-2.0
#include "core/engine/builder.h"

#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <unordered_map>

#include "core/common/hash.h"
#include "core/common/logging.h"
#include "core/data/synthetic.h"

namespace vn::engine {
namespace {

/// A (tactic, precision) pair the builder may choose for a layer.
struct Candidate {
  TacticId tactic;
  PrecisionId precision;
};

/// The precisions the builder prefers, narrowest storage first: reduced precision is what the
/// flags ask for and what is fast on the devices the engine models, so the builder picks the first
/// class some tactic can run, and times the candidates within it.
const std::vector<std::vector<PrecisionId>> kPrecisionClasses = {
    {PrecisionId::kInt8},
    {PrecisionId::kFp16, PrecisionId::kFp16Strict, PrecisionId::kBf16},
    {PrecisionId::kTf32},
    {PrecisionId::kFp32},
};

std::vector<std::string> member_labels(const Model& model, const LayerSpec& spec) {
  std::vector<std::string> out;
  for (int64_t n : spec.nodes) out.push_back(node_label(model.graph, n));
  return out;
}

/// True when `name` is the layer's name or one of its nodes'.
bool names_layer(const std::string& name, const LayerSpec& spec, const std::vector<std::string>& labels) {
  return name == spec.name || std::find(labels.begin(), labels.end(), name) != labels.end();
}

/// True when the layer adds a bias the bias-drop fault can leave out.
bool has_bias(const Model& model, const LayerSpec& spec) {
  const Node& anchor = model.graph.nodes[static_cast<size_t>(spec.nodes.front())];
  switch (spec.kind) {
    case LayerKind::kConv:
    case LayerKind::kGemm:
      return (anchor.inputs.size() > 2 && !anchor.inputs[2].empty()) || spec.epilogue.batch_norm >= 0 ||
             !spec.epilogue.biases.empty();
    case LayerKind::kLayerNorm:
      return !spec.norm.bias.empty();
    default:
      return false;
  }
}

/// Compiles a layer: kernel plus rounding and faults. bias-drop faults act inside the kernel. An
/// int8 layer leaves the tensors in `returned` (the engine's outputs) in float32.
Result<std::unique_ptr<CompiledLayer>> compile(KernelArgs args, std::vector<DType> formats,
                                               const std::vector<FaultSpec>& faults,
                                               const std::vector<std::string>& returned) {
  std::vector<FaultSpec> value_faults;
  for (const FaultSpec& f : faults) {
    if (f.kind == FaultKind::kBiasDrop) {
      args.drop_bias = true;
    } else {
      value_faults.push_back(f);
    }
  }
  const DType storage = precision_of(args.precision).storage;
  // A float16 or bfloat16 layer of ops that only move and select values leaves its (rounded)
  // inputs' values: rounding its outputs again would be a pass over them that changes nothing
  // (DenseNet-121's Concat, BatchNormalization + Relu chains: 13 ms of 100 at one thread).
  bool keeps_format = storage == DType::kFloat16 || storage == DType::kBFloat16;
  for (int64_t index : args.spec->nodes) {
    const Node& n = args.model->graph.nodes[static_cast<size_t>(index)];
    keeps_format = keeps_format && keeps_values(n.domain, n.op_type);
  }
  args.outputs_modified = (storage != DType::kFloat32 && !keeps_format) || !value_faults.empty();
  LayerScales scales;
  if (args.precision == PrecisionId::kInt8) {
    if (!args.scales)
      return make_error(StatusCode::kInvalidArgument, "layer '{}' is int8 but has no scales", args.spec->name);
    VN_ASSIGN_OR_RETURN(scales, layer_scales(*args.spec, *args.scales));
    for (size_t o = 0; o < scales.outputs.size(); ++o) {
      if (std::find(returned.begin(), returned.end(), args.spec->outputs[o]) != returned.end()) scales.outputs[o] = 0;
    }
  }
  args.round_outputs = storage != DType::kFloat32 && value_faults.empty() && args.spec->outputs.size() == 1;
  args.output_scale = args.precision == PrecisionId::kInt8 && !scales.outputs.empty() ? scales.outputs[0] : 0.0f;
  VN_ASSIGN_OR_RETURN(std::unique_ptr<LayerKernel> kernel, make_layer_kernel(args));
  return std::make_unique<CompiledLayer>(*args.spec, args.tactic, args.precision, std::move(kernel), std::move(formats),
                                         std::move(value_faults), std::move(scales), keeps_format);
}

/// The format in which a layer of `precision` leaves its output `name`: the precision's storage,
/// except that an int8 layer leaves a tensor the engine returns in float32 (compile gives it no
/// scale).
DType output_format(PrecisionId precision, const std::string& name, const std::vector<std::string>& returned) {
  if (precision == PrecisionId::kInt8 && std::find(returned.begin(), returned.end(), name) != returned.end()) {
    return DType::kFloat32;
  }
  return precision_of(precision).storage;
}

std::vector<TensorDesc> describe(const std::vector<const Tensor*>& tensors) {
  std::vector<TensorDesc> out;
  for (const Tensor* t : tensors) out.push_back({t->dtype(), t->shape()});
  return out;
}

std::vector<TensorDesc> describe(const std::vector<Tensor>& tensors) {
  std::vector<TensorDesc> out;
  for (const Tensor& t : tensors) out.push_back({t.dtype(), t.shape()});
  return out;
}

void fill_plan_layer(const Model& model, const LayerSpec& spec, PlanLayer& l) {
  l.name = spec.name;
  l.kind = spec.kind;
  l.nodes = member_labels(model, spec);
  l.inputs = spec.inputs;
  l.outputs = spec.outputs;
  l.hidden = spec.hidden;
}

/// Runs the model's layers once on synthetic inputs and decides each layer's precision and tactic.
class Builder {
 public:
  Builder(const Model& model, const BuildOptions& options, const ops::OpRegistry& registry, int num_threads,
          BuiltEngine& engine)
      : model_(model), options_(options), registry_(registry), num_threads_(num_threads), engine_(engine) {}

  Status build() {
    Plan& plan = engine_.plan;
    BuildSettings& s = plan.settings;
    s.allowed = options_.allowed | kFp32;
    s.constraints = options_.constraints;
    s.layer_precisions = options_.layer_precisions;
    s.builder_seed = options_.builder_seed ? *options_.builder_seed : std::random_device{}();
    s.timing_margin = options_.timing_margin;
    s.deterministic = options_.deterministic;
    s.replayed = options_.replay.has_value();
    plan.faults = options_.faults;
    VN_RETURN_IF_ERROR(check_names());
    if (!options_.layer_precisions.empty() && options_.constraints == PrecisionConstraints::kNone) {
      VN_LOG_WARNING(
          "--layer-precisions is ignored under --precision-constraints none (the default, as in "
          "TensorRT); add --precision-constraints prefer or obey");
    }

    // A tactic replay recorded from an int8 build replays int8 layers, which need scales too.
    const bool int8_replayed =
        options_.replay && std::any_of(options_.replay->entries.begin(), options_.replay->entries.end(),
                                       [](const ReplayEntry& e) { return e.precision == PrecisionId::kInt8; });
    if (mask_has(s.allowed, PrecisionId::kInt8) || int8_replayed) VN_RETURN_IF_ERROR(obtain_int8_scales());

    data::SyntheticOptions synthetic;
    synthetic.input_shapes = options_.input_shapes;
    VN_ASSIGN_OR_RETURN(std::vector<TensorMap> feeds, data::generate_feeds(model_.graph, synthetic));
    for (const NamedTensor& t : feeds.front()) {
      values_[t.name] = t.tensor;
      formats_[t.name] = DType::kFloat32;
      s.input_shapes[t.name] = t.tensor.shape();
    }
    std::unordered_map<std::string, size_t> last_use;
    for (size_t i = 0; i < engine_.graph.layers.size(); ++i) {
      for (const std::string& in : engine_.graph.layers[i].inputs) last_use[in] = i;
    }

    std::vector<bool> fault_used(options_.faults.size(), false);
    for (size_t i = 0; i < engine_.graph.layers.size(); ++i) {
      const LayerSpec& spec = engine_.graph.layers[i];
      PlanLayer layer;
      fill_plan_layer(model_, spec, layer);
      std::vector<const Tensor*> inputs;
      std::vector<DType> formats;
      for (const std::string& name : spec.inputs) {
        auto it = values_.find(name);
        if (it == values_.end()) {
          return make_error(StatusCode::kInvalidModel, "layer '{}' reads '{}', which nothing produces", spec.name,
                            name);
        }
        inputs.push_back(&it->second);
        formats.push_back(formats_.at(name));
      }
      layer.input_desc = describe(inputs);

      VN_ASSIGN_OR_RETURN(const Candidate choice, choose(spec, inputs, formats, layer));
      layer.tactic = choice.tactic;
      layer.precision = choice.precision;

      // Faults whose target and condition match, decided on this layer's build output.
      std::vector<Tensor> outputs(spec.outputs.size());
      VN_ASSIGN_OR_RETURN(std::unique_ptr<CompiledLayer> compiled,
                          compile(args(spec, choice), formats, {}, engine_.plan.outputs));
      VN_RETURN_IF_ERROR(compiled->run(inputs, outputs));
      std::vector<FaultSpec> active;
      const std::vector<std::string> labels = member_labels(model_, spec);
      for (size_t f = 0; f < options_.faults.size(); ++f) {
        const FaultSpec& fault = options_.faults[f];
        const bool targeted = fault.layer.empty() ? fault.tactic == tactic_info(choice.tactic).name
                                                  : names_layer(fault.layer, spec, labels);
        if (!targeted) continue;
        fault_used[f] = fault_used[f] || !fault.layer.empty();
        if (fault.kind == FaultKind::kBiasDrop && !has_bias(model_, spec)) {
          if (!fault.layer.empty()) {
            return make_error(StatusCode::kInvalidArgument, "--inject-fault '{}': layer '{}' adds no bias", fault.text,
                              spec.name);
          }
          continue;
        }
        const Shape shape = outputs.empty() ? Shape{} : outputs[0].shape();
        if (!fault_condition_holds(fault, shape, choice.precision, spec.nodes.size())) continue;
        active.push_back(fault);
        layer.faults.push_back(f);
      }
      if (!active.empty()) {
        VN_ASSIGN_OR_RETURN(compiled, compile(args(spec, choice), formats, active, engine_.plan.outputs));
        VN_RETURN_IF_ERROR(compiled->run(inputs, outputs));
      }
      layer.output_desc = describe(outputs);
      engine_.layers.push_back(std::move(compiled));
      plan.layers.push_back(std::move(layer));

      for (size_t k = 0; k < spec.outputs.size(); ++k) {
        values_[spec.outputs[k]] = std::move(outputs[k]);
        formats_[spec.outputs[k]] = output_format(choice.precision, spec.outputs[k], engine_.plan.outputs);
      }
      for (const std::string& in : spec.inputs) {
        if (last_use.at(in) == i) values_.erase(in);
      }
    }
    for (size_t f = 0; f < options_.faults.size(); ++f) {
      if (!options_.faults[f].layer.empty() && !fault_used[f] && !options_.faults[f].ignore_if_absent) {
        return make_error(StatusCode::kInvalidArgument,
                          "--inject-fault '{}': no layer or node is named '{}' (`vernier inspect model PLAN` "
                          "lists the layers)",
                          options_.faults[f].text, options_.faults[f].layer);
      }
    }
    return Status::OK();
  }

 private:
  KernelArgs args(const LayerSpec& spec, Candidate c) const {
    KernelArgs a;
    a.model = &model_;
    a.spec = &spec;
    a.constants = &engine_.folded.constants;
    a.registry = &registry_;
    a.tactic = c.tactic;
    a.precision = c.precision;
    a.scales = &engine_.plan.int8_scales;
    a.num_threads = num_threads_;
    return a;
  }

  /// Fills Plan::int8_scales and Plan::calibration (see Int8Options for the order of sources).
  Status obtain_int8_scales() {
    VN_ASSIGN_OR_RETURN(
        ObtainedScales obtained,
        engine::obtain_int8_scales(model_, options_.int8, options_.input_shapes, registry_, num_threads_));
    engine_.plan.int8_scales = std::move(obtained.scales);
    engine_.plan.calibration = std::move(obtained.description);
    return Status::OK();
  }

  /// Why a layer cannot run in int8: no tactic of its kind runs int8, or the first reason an int8
  /// tactic gave.
  std::string int8_fallback(const LayerSpec& spec, const std::vector<const Tensor*>& inputs) const {
    std::vector<const TacticInfo*> tactics = tactics_for(spec.kind);
    std::string reason;
    for (const TacticInfo* t : tactics) {
      if (!t->supports(PrecisionId::kInt8)) continue;
      const Support s = tactic_applicable(args(spec, {t->id, PrecisionId::kInt8}), inputs);
      if (s.supported) return "";
      if (reason.empty()) reason = s.reason;
    }
    return reason.empty() ? fmt::format("no int8 tactic for {} layers", layer_kind_name(spec.kind)) : reason;
  }

  /// Every --layer-precisions name must name a layer or a node in one.
  Status check_names() const {
    for (const auto& [name, precision] : options_.layer_precisions) {
      bool found = false;
      for (const LayerSpec& spec : engine_.graph.layers) {
        found = found || names_layer(name, spec, member_labels(model_, spec));
      }
      if (!found) {
        return make_error(StatusCode::kInvalidArgument, "--layer-precisions {}:{}: no layer or node is named '{}'",
                          name, precision_name(precision), name);
      }
    }
    return Status::OK();
  }

  std::optional<PrecisionId> requested(const LayerSpec& spec) const {
    if (options_.constraints == PrecisionConstraints::kNone) return std::nullopt;
    const std::vector<std::string> labels = member_labels(model_, spec);
    std::optional<PrecisionId> out;
    for (const auto& [name, precision] : options_.layer_precisions) {
      if (names_layer(name, spec, labels)) out = precision;
    }
    return out;
  }

  /// The applicable candidates among `presets`, tactics of the layer's kind first; the reference
  /// tactic when none of them applies. `why` collects the reasons of the others.
  std::vector<Candidate> candidates(const LayerSpec& spec, const std::vector<PrecisionId>& presets,
                                    const std::vector<const Tensor*>& inputs, std::vector<std::string>& why) const {
    std::vector<Candidate> out;
    std::vector<const TacticInfo*> tactics = tactics_for(spec.kind);
    if (spec.kind == LayerKind::kGeneric) tactics = {&tactic_info(TacticId::kReference)};
    for (int pass = 0; pass < 2 && out.empty(); ++pass) {
      if (pass == 1) tactics = {&tactic_info(TacticId::kReference)};
      for (PrecisionId p : presets) {
        for (const TacticInfo* t : tactics) {
          if (!t->supports(p)) {
            why.push_back(
                fmt::format("{} runs in {}, not {}", t->name, mask_to_string(t->precisions), precision_name(p)));
            continue;
          }
          const Support s = tactic_applicable(args(spec, {t->id, p}), inputs);
          if (s.supported) {
            out.push_back({t->id, p});
          } else {
            why.push_back(s.reason);
          }
        }
      }
    }
    return out;
  }

  Result<Candidate> replayed(const LayerSpec& spec, const std::vector<const Tensor*>& inputs) const {
    const ReplayEntry* e = options_.replay->find(spec.name);
    if (!e) {
      return make_error(StatusCode::kInvalidArgument,
                        "the tactic replay has no layer '{}': it was recorded from a build that fused differently "
                        "(another model, --outputs or --mark-all)",
                        spec.name);
    }
    if (!e->nodes.empty() && e->nodes != member_labels(model_, spec)) {
      return make_error(StatusCode::kInvalidArgument,
                        "the tactic replay's layer '{}' fused other nodes than this build does", spec.name);
    }
    const TacticInfo& t = tactic_info(e->tactic);
    if (t.kind != spec.kind && e->tactic != TacticId::kReference) {
      return make_error(StatusCode::kInvalidArgument, "the tactic replay gives layer '{}' ({}) the {} tactic {}",
                        spec.name, layer_kind_name(spec.kind), layer_kind_name(t.kind), t.name);
    }
    const Support s = t.supports(e->precision)
                          ? tactic_applicable(args(spec, {e->tactic, e->precision}), inputs)
                          : Support{false, fmt::format("{} does not run in {}", t.name, precision_name(e->precision))};
    if (!s.supported) {
      return make_error(StatusCode::kInvalidArgument, "the tactic replay's choice for layer '{}' cannot run: {}",
                        spec.name, s.reason);
    }
    return Candidate{e->tactic, e->precision};
  }

  Result<Candidate> choose(const LayerSpec& spec, const std::vector<const Tensor*>& inputs,
                           const std::vector<DType>& formats, PlanLayer& layer) const {
    if (options_.replay) {
      layer.choice = "replayed";
      return replayed(spec, inputs);
    }
    const bool float32 =
        std::any_of(inputs.begin(), inputs.end(), [](const Tensor* t) { return t->dtype() == DType::kFloat32; });
    std::vector<Candidate> cands;
    std::vector<std::string> why;
    std::string how;
    if (!float32) {
      cands = candidates(spec, {PrecisionId::kFp32}, inputs, why);
    } else if (const std::optional<PrecisionId> req = requested(spec)) {
      std::vector<PrecisionId> presets{*req};
      if (*req == PrecisionId::kFp16) presets.push_back(PrecisionId::kFp16Strict);
      cands = candidates(spec, presets, inputs, why);
      if (cands.empty()) {
        const std::string reasons = why.empty() ? "no tactic supports it" : why.front();
        if (options_.constraints == PrecisionConstraints::kObey) {
          return make_error(StatusCode::kInvalidArgument,
                            "layer '{}' must run in {} (--precision-constraints obey), but cannot: {}", spec.name,
                            precision_name(*req), reasons);
        }
        VN_LOG_WARNING("layer '{}': {} was requested but cannot be met ({}); the builder chooses", spec.name,
                       precision_name(*req), reasons);
      } else {
        how = fmt::format("; {} requested", precision_name(*req));
      }
    }
    for (size_t c = 0; c < kPrecisionClasses.size() && cands.empty(); ++c) {
      std::vector<PrecisionId> presets;
      for (PrecisionId p : kPrecisionClasses[c]) {
        if (mask_has(engine_.plan.settings.allowed, p)) presets.push_back(p);
      }
      cands = candidates(spec, presets, inputs, why);
    }
    const bool int8 = !cands.empty() && cands.front().precision == PrecisionId::kInt8;
    if (float32 && !int8 && how.empty() && mask_has(engine_.plan.settings.allowed, PrecisionId::kInt8)) {
      layer.int8_fallback = int8_fallback(spec, inputs);
    }
    if (cands.empty()) {
      return make_error(StatusCode::kInternal, "no tactic can run layer '{}': {}", spec.name,
                        why.empty() ? "none listed" : why.front());
    }
    if (cands.size() == 1 || options_.deterministic) {
      layer.choice = (cands.size() == 1 ? "only candidate" : "deterministic") + how;
      return cands.front();
    }
    return timed(spec, cands, inputs, formats, how, layer);
  }

  /// What a layer's timings depend on besides tactic and precision: its member ops with their
  /// attributes, the shapes of their constant inputs (weights), the shapes and formats of its
  /// runtime inputs, and the thread count. The layer's name is left out so identical layers share.
  std::string layer_signature(const LayerSpec& spec, const std::vector<const Tensor*>& inputs,
                              const std::vector<DType>& formats) const {
    std::string sig = fmt::format("threads={}", num_threads_);
    for (int64_t n : spec.nodes) {
      const Node& node = model_.graph.nodes[static_cast<size_t>(n)];
      sig += fmt::format(";{}(", node.op_type);
      for (const Attribute& a : node.attributes) {
        sig += fmt::format("{}={}:{}:{}:[{}][{}],", a.name, a.i, a.f, a.s, fmt::join(a.ints, " "),
                           fmt::join(a.floats, " "));
      }
      for (const std::string& in : node.inputs) {
        const auto w = engine_.folded.constants.find(in);
        if (w != engine_.folded.constants.end()) sig += fmt::format("w{},", shape_to_string(w->second.shape()));
      }
      sig += ")";
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      sig += fmt::format(";in{}", shape_to_string(inputs[i]->shape()));
      if (i < formats.size()) sig += dtype_name(formats[i]);
    }
    return sig;
  }

  /// Times every candidate and keeps the fastest; candidates within the margin of the fastest are
  /// tied and one is drawn with the builder seed.
  Result<Candidate> timed(const LayerSpec& spec, const std::vector<Candidate>& cands,
                          const std::vector<const Tensor*>& inputs, const std::vector<DType>& formats,
                          const std::string& how, PlanLayer& layer) const {
    using Clock = std::chrono::steady_clock;
    double best = std::numeric_limits<double>::infinity();
    std::vector<Candidate> ran;
    Status first_error;
    const std::string signature = options_.timing_cache ? layer_signature(spec, inputs, formats) : std::string();
    for (const Candidate& c : cands) {
      std::string key;
      if (options_.timing_cache) {
        key = fmt::format("{}|{}|{}", signature, tactic_info(c.tactic).name, precision_name(c.precision));
        if (std::optional<double> cached = options_.timing_cache->find(key)) {
          layer.timings.push_back({c.tactic, c.precision, *cached});
          ran.push_back(c);
          best = std::min(best, *cached);
          continue;
        }
      }
      Result<std::unique_ptr<CompiledLayer>> compiled = compile(args(spec, c), formats, {}, engine_.plan.outputs);
      if (!compiled.ok()) {
        if (first_error.ok()) first_error = compiled.status();
        continue;
      }
      // The first run warms caches and threads up; when it alone is twice as slow as the best
      // median so far the candidate cannot win, and it is not timed further.
      std::vector<Tensor> outputs(spec.outputs.size());
      const auto w0 = Clock::now();
      if (Status st = (*compiled)->run(inputs, outputs); !st.ok()) {
        if (first_error.ok()) first_error = st;
        continue;
      }
      std::vector<double> ms;
      const double warm_up = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
      const double hopeless = 2 * best * (1 + options_.timing_margin);
      if (warm_up > hopeless) {
        ms.push_back(warm_up);
      } else {
        for (int r = 0; r < std::max(options_.timing_runs, 1); ++r) {
          const auto t0 = Clock::now();
          VN_RETURN_IF_ERROR((*compiled)->run(inputs, outputs));
          ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          if (ms.back() > hopeless) break;
        }
      }
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2];
      layer.timings.push_back({c.tactic, c.precision, median});
      if (options_.timing_cache) options_.timing_cache->record(key, median);
      ran.push_back(c);
      best = std::min(best, median);
    }
    if (ran.empty()) return first_error;
    std::vector<Candidate> tied;
    for (size_t i = 0; i < ran.size(); ++i) {
      if (layer.timings[i].median_ms <= best * (1 + options_.timing_margin)) tied.push_back(ran[i]);
    }
    if (tied.size() == 1) {
      layer.choice = "fastest" + how;
      return tied.front();
    }
    const uint64_t draw = splitmix64(engine_.plan.settings.builder_seed ^ fnv1a(spec.name));
    layer.choice = fmt::format("{} tied within {:g}% of the fastest, broken by the builder seed{}", tied.size(),
                               options_.timing_margin * 100, how);
    return tied[draw % tied.size()];
  }

  const Model& model_;
  const BuildOptions& options_;
  const ops::OpRegistry& registry_;
  int num_threads_;
  BuiltEngine& engine_;
  std::unordered_map<std::string, Tensor> values_;
  std::unordered_map<std::string, DType> formats_;
};

Status prepare_graph(const Model& model, const std::vector<std::string>& outputs, const ops::OpRegistry& registry,
                     BuiltEngine& engine) {
  VN_ASSIGN_OR_RETURN(engine.folded, fold_constants(model, registry));
  VN_ASSIGN_OR_RETURN(engine.graph, fuse_layers(model, engine.folded, outputs));
  Plan& plan = engine.plan;
  plan.model_hash = model_hash(model);
  plan.model_name = model.graph.name;
  plan.outputs = outputs;
  for (int64_t n : engine.folded.folded) plan.folded.push_back(node_label(model.graph, n));
  plan.prevented = engine.graph.prevented;
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<BuiltEngine>> build_engine(const Model& model, const std::vector<std::string>& outputs,
                                                  const BuildOptions& options, const ops::OpRegistry& registry,
                                                  int num_threads) {
  if (!(options.timing_margin >= 0)) {
    return make_error(StatusCode::kInvalidArgument, "--timing-margin {} must not be negative", options.timing_margin);
  }
  omp_set_num_threads(num_threads);
  auto engine = std::make_unique<BuiltEngine>();
  VN_RETURN_IF_ERROR(prepare_graph(model, outputs, registry, *engine));
  VN_RETURN_IF_ERROR(Builder(model, options, registry, num_threads, *engine).build());
  return engine;
}

Result<std::unique_ptr<BuiltEngine>> load_engine(const Model& model, const Plan& plan,
                                                 const std::vector<std::string>& outputs,
                                                 const ops::OpRegistry& registry, int num_threads) {
  VN_RETURN_IF_ERROR(check_plan_model(plan, model));
  if (outputs != plan.outputs) {
    return make_error(StatusCode::kInvalidArgument,
                      "the plan returns {} tensor(s) ({}{}), not the {} asked for: marking outputs changes the "
                      "layers, so rebuild the plan with the same --outputs/--mark-all",
                      plan.outputs.size(), plan.outputs.empty() ? "" : plan.outputs.front(),
                      plan.outputs.size() > 1 ? ", ..." : "", outputs.size());
  }
  auto engine = std::make_unique<BuiltEngine>();
  VN_RETURN_IF_ERROR(prepare_graph(model, outputs, registry, *engine));
  if (engine->graph.layers.size() != plan.layers.size()) {
    return make_error(StatusCode::kInvalidArgument,
                      "the plan has {} layers where this Vernier fuses the model into {}: rebuild the plan",
                      plan.layers.size(), engine->graph.layers.size());
  }
  engine->plan.settings = plan.settings;
  engine->plan.faults = plan.faults;
  engine->plan.int8_scales = plan.int8_scales;
  engine->plan.calibration = plan.calibration;
  std::unordered_map<std::string, DType> formats;
  for (const ValueInfo* in : model.graph.runtime_inputs()) formats[in->name] = DType::kFloat32;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerSpec& spec = engine->graph.layers[i];
    const PlanLayer& recorded = plan.layers[i];
    if (recorded.name != spec.name || recorded.nodes != member_labels(model, spec)) {
      return make_error(StatusCode::kInvalidArgument,
                        "plan layer {} is '{}' where this Vernier builds '{}': rebuild the plan", i, recorded.name,
                        spec.name);
    }
    const TacticInfo& t = tactic_info(recorded.tactic);
    KernelArgs a;
    a.model = &model;
    a.spec = &spec;
    a.constants = &engine->folded.constants;
    a.registry = &registry;
    a.tactic = recorded.tactic;
    a.precision = recorded.precision;
    a.scales = &engine->plan.int8_scales;
    a.num_threads = num_threads;
    const Support s = (t.kind == spec.kind || t.id == TacticId::kReference) ? tactic_applicable(a, {})
                                                                            : Support{false, "wrong layer kind"};
    if (!s.supported) {
      return make_error(StatusCode::kInvalidArgument, "plan layer '{}' cannot run tactic {} in {}: {}", spec.name,
                        t.name, precision_name(recorded.precision), s.reason);
    }
    std::vector<DType> input_formats;
    for (const std::string& in : spec.inputs) {
      auto it = formats.find(in);
      input_formats.push_back(it == formats.end() ? DType::kFloat32 : it->second);
    }
    std::vector<FaultSpec> faults;
    for (size_t f : recorded.faults) faults.push_back(plan.faults[f]);
    VN_ASSIGN_OR_RETURN(std::unique_ptr<CompiledLayer> compiled, compile(a, std::move(input_formats), faults, outputs));
    engine->layers.push_back(std::move(compiled));
    engine->plan.layers.push_back(recorded);
    for (const std::string& out : spec.outputs) formats[out] = output_format(recorded.precision, out, outputs);
  }
  return engine;
}

}  // namespace vn::engine
