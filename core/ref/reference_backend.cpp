// SPDX-License-Identifier: Apache-2.0
#include "core/ref/reference_backend.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <unordered_set>
#include <utility>

#include "core/common/threads.h"
#include "core/ir/topo.h"
#include "core/ops/kernel_context.h"
#include "core/ref/fp64.h"
#include "core/ref/reference_plan.h"

namespace vn::ref {

/// One execution of a plan: the live tensors of a scope. It runs the subgraphs of its nodes in
/// child frames that resolve outer names against it.
class ReferenceBackend::Frame final : public ops::SubgraphRunner {
 public:
  Frame(const ReferenceBackend& backend, const Plan& plan, const RunOptions& options)
      : backend_(backend), plan_(plan), options_(options), values_(plan.slot_names.size()) {
    for (size_t s = 0; s < plan.constants.size(); ++s) values_[s] = plan.constants[s];
  }

  void bind(int slot, Tensor t) { values_[static_cast<size_t>(slot)] = std::move(t); }
  const Tensor& value(int slot) const { return values_[static_cast<size_t>(slot)]; }

  /// The live tensor this scope holds for `name`, or nullptr.
  const Tensor* find(const std::string& name) const {
    auto it = plan_.slot_of.find(name);
    if (it == plan_.slot_of.end()) return nullptr;
    const Tensor& t = values_[static_cast<size_t>(it->second)];
    return t.defined() ? &t : nullptr;
  }

  /// Runs every step; `observe` is true for the main graph only.
  Status execute(bool observe);

  Result<std::vector<Tensor>> run(const Graph& body, std::span<const Tensor> inputs) override;

  /// Runs chain `c` at its last link `step`: its output written over the source when the source
  /// dies there and nothing else holds it.
  Status run_chain(const Step& step, const Chain& c);

  Status poll_cancel() const override {
    if (options_.cancel && options_.cancel->load()) return Status(StatusCode::kCancelled, "run cancelled");
    return Status::OK();
  }

 private:
  const ReferenceBackend& backend_;
  const Plan& plan_;
  const RunOptions& options_;
  std::vector<Tensor> values_;
};

Status ReferenceBackend::Frame::execute(bool observe) {
  const Graph& g = *plan_.graph;
  const int num_threads = backend_.num_threads_;
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> narrowed;
  std::vector<Tensor> outputs;
  std::vector<char> constant;
  // A fused chain has its nodes' bits but leaves their outputs unmade: not where they are watched.
  const bool fuse = !(observe && (options_.observer || options_.stream));
  // Per chain: 0 off (its nodes run), 1 on (run at its end), 2 run by its Conv (ChainEpilogue).
  std::vector<char> chain_on(plan_.chains.size(), 0);
  std::vector<const Tensor*> others;
  using Clock = std::chrono::steady_clock;
  const bool timed = observe && options_.profile;
  const auto record = [&](const Step& step, const Node& node, Clock::time_point start) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    options_.profile->push_back(LayerTime{node.name, node.op_type, step.node_index, ms});
  };
  for (const Step& step : plan_.steps) {
    VN_RETURN_IF_ERROR(poll_cancel());
    const Node& node = g.nodes[static_cast<size_t>(step.node_index)];
    if (step.chain >= 0) {
      const Chain& c = plan_.chains[static_cast<size_t>(step.chain)];
      char& on = chain_on[static_cast<size_t>(step.chain)];
      if (step.chain_head && on != 2) {
        others.clear();
        for (int s : c.others) others.push_back(&value(s));
        on = fuse && c.ops.applies(value(c.source), others);
      }
      if (on) {
        if (step.chain_end) {
          if (on == 2) {
            // The Conv's output holds the chain's values, and the Conv's time its work.
            bind(step.outputs[0], value(c.source));
          } else {
            const auto start = timed ? Clock::now() : Clock::time_point();
            if (Status st = run_chain(step, c); !st.ok()) return st.with_node(node.ref(step.node_index));
            if (timed) record(step, node, start);
          }
          for (int s : step.release) bind(s, Tensor());
          for (int s : c.release) bind(s, Tensor());
        }
        continue;
      }
    }
    inputs.assign(step.inputs.size(), nullptr);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int s = step.inputs[i];
      if (s < 0) continue;
      const Tensor& t = value(s);
      if (!t.defined()) {
        return Status(StatusCode::kInvalidModel,
                      fmt::format("input '{}' has no value: no node, graph input or initializer defines it",
                                  plan_.slot_names[static_cast<size_t>(s)]),
                      node.ref(step.node_index));
      }
      inputs[i] = &t;
    }
    narrowed.assign(step.narrow_inputs.size(), Tensor());
    for (size_t k = 0; k < step.narrow_inputs.size(); ++k) {
      const size_t i = step.narrow_inputs[k];
      if (i >= inputs.size() || !inputs[i] || inputs[i]->dtype() != DType::kFloat64) continue;
      Result<Tensor> t = tensor_cast(*inputs[i], DType::kFloat32);
      if (!t.ok()) return t.status().with_node(node.ref(step.node_index));
      narrowed[k] = std::move(t).value();
      inputs[i] = &narrowed[k];
    }

    outputs.assign(step.outputs.size(), Tensor());
    ops::KernelContext ctx(node, step.node_index, step.opset, inputs, outputs, num_threads, this);
    ctx.set_dying_inputs((observe && options_.stream) ? step.dying_streamed : step.dying);
    // An input is a constant while it is an initializer's own tensor (Plan::weights).
    constant.assign(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int s = step.inputs[i];
      const Tensor* c = s >= 0 ? &plan_.weights[static_cast<size_t>(s)] : nullptr;
      constant[i] = c && c->defined() && inputs[i] && inputs[i]->defined() && inputs[i]->dtype() != DType::kString &&
                    inputs[i]->raw() == c->raw();
    }
    ctx.set_constant_inputs(constant);
    std::optional<ChainEpilogue> epilogue;
    if (fuse && step.epilogue_chain >= 0) {
      const Chain& c = plan_.chains[static_cast<size_t>(step.epilogue_chain)];
      others.clear();
      for (int s : c.others) others.push_back(&value(s));
      epilogue.emplace(c.ops, others);
      ctx.set_output_epilogue(&*epilogue);
    }
    const auto start = timed ? Clock::now() : Clock::time_point();
    Status st = step.fn(ctx);
    if (epilogue && ctx.epilogue_was_applied()) chain_on[static_cast<size_t>(step.epilogue_chain)] = 2;
    if (timed) record(step, node, start);
    if (st.ok()) st = ctx.attr_error();
    if (st.ok()) st = ops::check_all_read(ctx, step.version);
    if (!st.ok()) return st.with_node(node.ref(step.node_index));

    TensorMap produced;
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int s = step.outputs[i];
      if (s < 0) continue;
      if (!outputs[i].defined()) {
        return Status(StatusCode::kInternal, fmt::format("kernel left output {} ('{}') unset", i, node.outputs[i]),
                      node.ref(step.node_index));
      }
      if (step.widen_outputs && widened_in_fp64(outputs[i].dtype())) {
        Result<Tensor> t = tensor_cast(outputs[i], DType::kFloat64);
        if (!t.ok()) return t.status().with_node(node.ref(step.node_index));
        outputs[i] = std::move(t).value();
      }
      bind(s, outputs[i]);
      if (observe && options_.observer) produced.set(node.outputs[i], outputs[i]);
    }
    if (observe && options_.observer && !options_.observer(step.node_index, node, produced)) {
      return make_error(StatusCode::kCancelled, "run stopped by the observer after node '{}'", node.name);
    }
    for (int s : (observe && options_.stream) ? step.release_streamed : step.release) bind(s, Tensor());
  }
  return Status::OK();
}

Status ReferenceBackend::Frame::run_chain(const Step& step, const Chain& c) {
  const Tensor& x = value(c.source);
  Tensor y;
  if (c.source_dies && x.writable() && x.sole_owner()) {
    y = x;
  } else {
    VN_ASSIGN_OR_RETURN(y, Tensor::create_for_overwrite(DType::kFloat32, x.shape()));
  }
  const float* others[kChainMaxOthers];
  for (size_t o = 0; o < c.others.size(); ++o) others[o] = value(c.others[o]).data<float>();
  if (x.numel() > 0) {
    c.ops.run(x.data<float>(), y.mutable_data<float>(), x.numel(), backend_.num_threads_,
              std::span<const float* const>(others, c.others.size()));
  }
  bind(step.outputs[0], std::move(y));
  return Status::OK();
}

Result<std::vector<Tensor>> ReferenceBackend::Frame::run(const Graph& body, std::span<const Tensor> inputs) {
  auto it = backend_.bodies_.find(&body);
  if (it == backend_.bodies_.end()) {
    return make_error(StatusCode::kInternal, "subgraph '{}' was not prepared with the model", body.name);
  }
  const Plan& plan = *it->second;
  if (inputs.size() != plan.input_slots.size()) {
    return make_error(StatusCode::kInvalidModel, "subgraph '{}' declares {} inputs but is given {}", body.name,
                      plan.input_slots.size(), inputs.size());
  }
  Frame child(backend_, plan, options_);
  for (int s : plan.outer_slots) {
    const std::string& name = plan.slot_names[static_cast<size_t>(s)];
    const Tensor* t = find(name);
    if (!t) {
      return make_error(StatusCode::kInvalidModel, "subgraph '{}' reads '{}', which no enclosing scope defines",
                        body.name, name);
    }
    child.bind(s, *t);
  }
  for (size_t i = 0; i < inputs.size(); ++i) child.bind(plan.input_slots[i], inputs[i]);

  Status st = child.execute(false);
  if (!st.ok()) {
    // Body node indices mean nothing in the main graph: the node goes into the message, and the
    // caller tags the error with the enclosing node. A cancellation keeps its plain message.
    if (st.code() == StatusCode::kCancelled) return Status(st.code(), st.message());
    return Status(st.code(), fmt::format("in subgraph '{}': {}", body.name, st.to_string()));
  }
  std::vector<Tensor> outputs;
  outputs.reserve(plan.output_slots.size());
  for (int s : plan.output_slots) {
    const Tensor& t = child.value(s);
    if (!t.defined()) {
      return make_error(StatusCode::kInvalidModel, "subgraph '{}' does not produce its output '{}'", body.name,
                        plan.slot_names[static_cast<size_t>(s)]);
    }
    outputs.push_back(t);
  }
  return outputs;
}

ReferenceBackend::ReferenceBackend(const ops::OpRegistry& registry) : ReferenceBackend(ReferenceOptions{}, registry) {}

ReferenceBackend::ReferenceBackend(ReferenceOptions options, const ops::OpRegistry& registry)
    : registry_(registry), options_(options) {}

ReferenceBackend::~ReferenceBackend() = default;

Support ReferenceBackend::supports(const Node& node, int64_t opset) const {
  ops::KernelLookup found = registry_.lookup(node.domain, node.op_type, opset);
  if (found.def) return {true, {}};
  return {false, std::move(found.reason)};
}

Status ReferenceBackend::build_plan(const Model& model, const Graph& g, const std::vector<std::string>* outputs,
                                    int depth, Plan& plan, std::vector<Status>& problems) {
  plan.graph = &g;
  const bool is_body = outputs == nullptr;
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g));

  auto slot = [&](const std::string& name) {
    auto it = plan.slot_of.find(name);
    if (it != plan.slot_of.end()) return it->second;
    plan.slot_names.push_back(name);
    plan.constants.emplace_back();
    const int s = static_cast<int>(plan.slot_names.size() - 1);
    plan.slot_of.emplace(name, s);
    return s;
  };

  std::unordered_set<std::string> defined;
  for (const Initializer& init : g.initializers) {
    const int s = slot(init.name);
    plan.constants[static_cast<size_t>(s)] = init.tensor;
    defined.insert(init.name);
  }
  if (is_body) {
    for (const ValueInfo& in : g.inputs) {
      plan.input_slots.push_back(slot(in.name));
      defined.insert(in.name);
    }
  } else {
    for (const ValueInfo* in : g.runtime_inputs()) plan.input_slots.push_back(slot(in->name));
  }

  std::vector<std::vector<int>> reads;  // per step: explicit and implicit (subgraph) inputs
  for (int64_t index : order) {
    const Node& node = g.nodes[static_cast<size_t>(index)];
    for (const std::string& out : node.outputs) {
      if (!out.empty()) defined.insert(out);
    }
    Step step;
    step.node_index = index;
    step.opset = model.opset(node.domain);
    const ops::KernelDef* def = step.opset >= 0 ? registry_.find(node.domain, node.op_type, step.opset) : nullptr;
    if (!def) {
      problems.push_back(Status(StatusCode::kUnsupportedOp, supports(node, step.opset).reason, node.ref(index)));
    }

    for (const Attribute& a : node.attributes) {
      std::vector<const Graph*> subgraphs;
      if (a.g) subgraphs.push_back(a.g.get());
      for (const auto& sub : a.graphs) {
        if (sub) subgraphs.push_back(sub.get());
      }
      for (const Graph* sub : subgraphs) {
        if (bodies_.count(sub)) continue;
        if (depth + 1 > kMaxSubgraphDepth) {
          return Status(StatusCode::kInvalidModel,
                        fmt::format("subgraphs nest deeper than {} levels", kMaxSubgraphDepth), node.ref(index));
        }
        auto body = std::make_unique<Plan>();
        std::vector<Status> body_problems;
        Status st = build_plan(model, *sub, nullptr, depth + 1, *body, body_problems);
        const auto in_body = [&](const Status& s) {
          return Status(s.code(),
                        fmt::format("in subgraph '{}' of attribute '{}': {}", sub->name, a.name, s.to_string()),
                        node.ref(index));
        };
        if (!st.ok()) return in_body(st);
        for (const Status& p : body_problems) problems.push_back(in_body(p));
        bodies_.emplace(sub, std::move(body));
      }
    }
    if (!def) continue;

    step.fn = def->fn;
    step.version = def->since_version;
    std::vector<int> step_reads;
    for (const std::string& in : node.inputs) {
      step.inputs.push_back(in.empty() ? -1 : slot(in));
      if (!in.empty()) step_reads.push_back(step.inputs.back());
    }
    for (const std::string& in : node_implicit_inputs(node)) step_reads.push_back(slot(in));
    for (const std::string& out : node.outputs) step.outputs.push_back(out.empty() ? -1 : slot(out));
    if (fp64_model_ && is_default_domain(node.domain)) {
      step.narrow_inputs = fp32_pinned_inputs(node.op_type, def->since_version);
      step.widen_outputs = fp32_pinned_outputs(node.op_type);
    }
    plan.steps.push_back(std::move(step));
    reads.push_back(std::move(step_reads));
  }

  if (is_body) {
    for (const ValueInfo& v : g.outputs) plan.output_slots.push_back(slot(v.name));
  } else {
    for (const std::string& name : *outputs) plan.output_slots.push_back(slot(name));
  }

  // A subgraph binds every name it uses but does not define from the enclosing scope on entry.
  if (is_body) {
    for (size_t s = 0; s < plan.slot_names.size(); ++s) {
      if (!defined.count(plan.slot_names[s])) plan.outer_slots.push_back(static_cast<int>(s));
    }
  }

  // Each slot is released by the last step that reads it, unless it must survive the run; when
  // outputs are streamed only constants must.
  std::vector<int> last_reader(plan.slot_names.size(), -1);
  for (size_t i = 0; i < reads.size(); ++i) {
    for (int s : reads[i]) last_reader[static_cast<size_t>(s)] = static_cast<int>(i);
  }
  // A model's weights reach products through Identity nodes where PyTorch shares a parameter
  // (BERT-like encoders: 44 of 72 products): the Identity's output is the initializer's tensor, so
  // the products read its kept packed form as they do the initializer's.
  plan.weights = plan.constants;
  for (const Step& step : plan.steps) {
    const Node& node = g.nodes[static_cast<size_t>(step.node_index)];
    if (node.op_type == "Identity" && is_default_domain(node.domain) && step.inputs.size() == 1 &&
        step.outputs.size() == 1 && step.inputs[0] >= 0 && step.outputs[0] >= 0) {
      plan.weights[static_cast<size_t>(step.outputs[0])] = plan.weights[static_cast<size_t>(step.inputs[0])];
    }
  }
  std::vector<bool> keep(plan.slot_names.size(), false);
  for (size_t s = 0; s < plan.constants.size(); ++s) keep[s] = plan.constants[s].defined();
  const std::vector<bool> keep_streamed = keep;
  for (int s : plan.output_slots) keep[static_cast<size_t>(s)] = true;
  const auto plan_releases = [&](const std::vector<bool>& kept, std::vector<int> Step::*release) {
    for (size_t s = 0; s < last_reader.size(); ++s) {
      if (last_reader[s] >= 0 && !kept[s]) {
        (plan.steps[static_cast<size_t>(last_reader[s])].*release).push_back(static_cast<int>(s));
      }
    }
    // Outputs nobody reads (dead branches) are released right after their producer.
    for (Step& step : plan.steps) {
      for (int s : step.outputs) {
        if (s >= 0 && last_reader[static_cast<size_t>(s)] < 0 && !kept[static_cast<size_t>(s)]) {
          (step.*release).push_back(s);
        }
      }
    }
  };
  plan_releases(keep, &Step::release);
  if (!is_body) plan_releases(keep_streamed, &Step::release_streamed);
  mark_chains(g, plan, reads, keep);
  // A subgraph runs only the plain release lists, whatever the caller streams.
  const auto mark_dying = [](const std::vector<int>& inputs, const std::vector<int>& released) {
    std::vector<char> dying(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      dying[i] = inputs[i] >= 0 && std::find(released.begin(), released.end(), inputs[i]) != released.end();
    }
    return dying;
  };
  for (Step& step : plan.steps) {
    step.dying = mark_dying(step.inputs, step.release);
    step.dying_streamed = is_body ? step.dying : mark_dying(step.inputs, step.release_streamed);
  }
  return Status::OK();
}

Status ReferenceBackend::prepare_impl(const Model& model, const PrepareOptions& options) {
  main_.reset();
  bodies_.clear();
  fp64_model_.reset();
  output_dtypes_.clear();
  num_threads_ = options.num_threads > 0 ? options.num_threads : available_cores();

  const Model* run_model = &model;
  if (options_.fp64) {
    VN_ASSIGN_OR_RETURN(Model widened, widen_model_to_fp64(model));
    fp64_model_ = std::make_unique<Model>(std::move(widened));
    run_model = fp64_model_.get();

    std::unordered_map<std::string, DType> declared;
    const Graph& g = model.graph;
    for (const auto* list : {&g.inputs, &g.outputs, &g.value_info}) {
      for (const ValueInfo& v : *list) {
        if (v.dtype) declared.emplace(v.name, *v.dtype);
      }
    }
    for (const Initializer& init : g.initializers) declared.emplace(init.name, init.tensor.dtype());
    for (const std::string& name : output_names_) {
      auto it = declared.find(name);
      output_dtypes_.push_back(it == declared.end() ? std::nullopt : std::optional<DType>(it->second));
    }
  }

  auto plan = std::make_unique<Plan>();
  std::vector<Status> problems;
  VN_RETURN_IF_ERROR(build_plan(*run_model, run_model->graph, &output_names_, 0, *plan, problems));
  if (!problems.empty()) {
    std::string msg = problems.size() == 1 ? problems[0].to_string()
                                           : fmt::format("{} nodes cannot run on the reference backend; first: {}",
                                                         problems.size(), problems[0].to_string());
    return Status(StatusCode::kUnsupportedOp, msg);
  }
  main_ = std::move(plan);
  return Status::OK();
}

Result<TensorMap> ReferenceBackend::run_impl(const TensorMap& feeds, const RunOptions& options) {
  if (!main_) return make_error(StatusCode::kInternal, "reference backend run without a successful prepare");
  // Eigen's products (types other than float32) follow the calling thread's OpenMP setting, and
  // the comparison that follows this thread's default: Eigen's own thread count is process-wide,
  // and two backends may run side by side on their own OS threads.
  omp_set_num_threads(capped_threads(num_threads_));
  set_default_threads(capped_threads(num_threads_));

  Frame frame(*this, *main_, options);
  for (int s : main_->input_slots) {
    const Tensor& fed = *feeds.find(main_->slot_names[static_cast<size_t>(s)]);
    if (fp64_model_ && widened_in_fp64(fed.dtype())) {
      VN_ASSIGN_OR_RETURN(Tensor wide, tensor_cast(fed, DType::kFloat64));
      frame.bind(s, std::move(wide));
    } else {
      frame.bind(s, fed);
    }
  }
  VN_RETURN_IF_ERROR(frame.execute(true));

  TensorMap result;
  for (size_t i = 0; i < main_->output_slots.size(); ++i) {
    const Tensor& t = frame.value(main_->output_slots[i]);
    if (!t.defined() && options.stream) continue;
    if (!t.defined()) {
      return make_error(StatusCode::kInvalidModel, "output '{}' was not produced by any node", output_names_[i]);
    }
    if (fp64_model_ && output_dtypes_[i] && t.dtype() == DType::kFloat64 && widened_in_fp64(*output_dtypes_[i])) {
      VN_ASSIGN_OR_RETURN(Tensor narrow, tensor_cast(t, *output_dtypes_[i]));
      result.set(output_names_[i], std::move(narrow));
    } else {
      result.set(output_names_[i], t);
    }
  }
  return result;
}

}  // namespace vn::ref
