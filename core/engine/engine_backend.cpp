// SPDX-License-Identifier: Apache-2.0
#include "core/engine/engine_backend.h"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "core/common/threads.h"

namespace vn::engine {

struct EngineBackend::Step {
  size_t layer = 0;
  int64_t node = 0;          // reported to the observer: the node that produces the layer's outputs
  std::vector<int> inputs;   // slot per spec input
  std::vector<int> outputs;  // slot per spec output
  std::vector<int> release;  // slots whose last reader is this step
  std::vector<int> release_streamed;  // the same when outputs are streamed (RunOptions::stream)
  std::vector<char> dying;            // per input: its slot is in release (CompiledLayer::run)
  std::vector<char> dying_streamed;   // the same for release_streamed
};

EngineBackend::EngineBackend(EngineOptions options, const ops::OpRegistry& registry)
    : options_(std::move(options)), registry_(registry) {}

EngineBackend::~EngineBackend() = default;

Support EngineBackend::supports(const Node& node, int64_t opset) const {
  for (const Attribute& a : node.attributes) {
    if (a.type == AttrType::kGraph || a.type == AttrType::kGraphs) {
      return {false, fmt::format("the engine does not run {} (a node with a subgraph); compare it on the reference "
                                 "backend",
                                 node.op_type)};
    }
  }
  ops::KernelLookup found = registry_.lookup(node.domain, node.op_type, opset);
  if (found.def) return {};
  return {false, std::move(found.reason)};
}

const Plan* EngineBackend::plan() const { return engine_ ? &engine_->plan : nullptr; }

Status EngineBackend::prepare_impl(const Model& model, const PrepareOptions& options) {
  engine_.reset();
  steps_.clear();
  layer_infos_.clear();
  slot_names_.clear();
  input_slots_.clear();
  output_slots_.clear();
  constants_by_node_.clear();
  num_threads_ = options.num_threads > 0 ? options.num_threads : available_cores();

  std::vector<std::string> problems;
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    const Node& n = model.graph.nodes[i];
    const Support s = supports(n, model.opset(n.domain));
    if (!s.supported)
      problems.push_back(Status(StatusCode::kUnsupportedOp, s.reason, n.ref(static_cast<int64_t>(i))).to_string());
  }
  if (!problems.empty()) {
    return Status(StatusCode::kUnsupportedOp,
                  problems.size() == 1
                      ? problems[0]
                      : fmt::format("{} nodes cannot run on the engine; first: {}", problems.size(), problems[0]));
  }

  if (options_.plan) {
    VN_ASSIGN_OR_RETURN(engine_, load_engine(model, *options_.plan, output_names_, registry_, num_threads_));
  } else {
    VN_ASSIGN_OR_RETURN(engine_, build_engine(model, output_names_, options_.build, registry_, num_threads_));
  }
  // Building allocates and frees far more than the engine keeps (folding, the candidate tactics'
  // timing runs); glibc keeps freed heap pages resident, so they go back to the system here
  // instead of sitting beside the runs that follow (24 of ResNet-18's 45 MiB when fully marked).
  malloc_trim(0);

  std::unordered_map<std::string, int> slots;
  auto slot = [&](const std::string& name) {
    auto [it, added] = slots.emplace(name, static_cast<int>(slot_names_.size()));
    if (added) slot_names_.push_back(name);
    return it->second;
  };
  for (const ValueInfo* in : model.graph.runtime_inputs()) input_slots_.push_back(slot(in->name));
  for (size_t i = 0; i < engine_->graph.layers.size(); ++i) {
    const LayerSpec& spec = engine_->graph.layers[i];
    Step step;
    step.layer = i;
    step.node = spec.nodes.back();
    for (const std::string& in : spec.inputs) step.inputs.push_back(slot(in));
    for (const std::string& out : spec.outputs) step.outputs.push_back(slot(out));
    steps_.push_back(std::move(step));
    layer_infos_.push_back(LayerInfo{spec.name, model.graph.nodes[static_cast<size_t>(spec.nodes.front())].op_type,
                                     spec.nodes.back(), spec.inputs, spec.outputs});
  }
  for (const std::string& name : output_names_) {
    const bool constant = slots.count(name) == 0 && engine_->folded.constants.count(name) > 0;
    output_slots_.push_back(constant ? -1 : slot(name));
  }
  reported_first_.assign(output_names_.size(), false);
  std::unordered_map<std::string, int64_t> producer;
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    for (const std::string& out : model.graph.nodes[i].outputs) producer.emplace(out, static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < output_names_.size(); ++i) {
    auto p = producer.find(output_names_[i]);
    if (output_slots_[i] >= 0 || p == producer.end()) continue;
    auto group = std::find_if(constants_by_node_.begin(), constants_by_node_.end(),
                              [&](const auto& g) { return g.first == p->second; });
    if (group == constants_by_node_.end()) group = constants_by_node_.insert(group, {p->second, {}});
    group->second.push_back(i);
    reported_first_[i] = true;
  }
  // Each slot is released by the last layer that reads it, unless it is an output kept for the
  // result; when outputs are streamed nothing is kept.
  std::vector<int> last_reader(slot_names_.size(), -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    for (int s : steps_[i].inputs) last_reader[static_cast<size_t>(s)] = static_cast<int>(i);
  }
  const std::vector<bool> keep_streamed(slot_names_.size(), false);
  std::vector<bool> keep = keep_streamed;
  for (int s : output_slots_) {
    if (s >= 0) keep[static_cast<size_t>(s)] = true;
  }
  const auto plan_releases = [&](const std::vector<bool>& kept, std::vector<int> Step::*release) {
    for (size_t s = 0; s < last_reader.size(); ++s) {
      if (!kept[s] && last_reader[s] >= 0) (steps_[static_cast<size_t>(last_reader[s])].*release).push_back(static_cast<int>(s));
    }
    for (Step& step : steps_) {
      for (int s : step.outputs) {
        if (last_reader[static_cast<size_t>(s)] < 0 && !kept[static_cast<size_t>(s)]) (step.*release).push_back(s);
      }
    }
  };
  plan_releases(keep, &Step::release);
  plan_releases(keep_streamed, &Step::release_streamed);
  // An input read twice by its layer is not marked: the kernel would write over what it reads.
  const auto mark_dying = [](const std::vector<int>& inputs, const std::vector<int>& released) {
    std::vector<char> dying(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      dying[i] = std::count(inputs.begin(), inputs.end(), inputs[i]) == 1 &&
                 std::find(released.begin(), released.end(), inputs[i]) != released.end();
    }
    return dying;
  };
  for (Step& step : steps_) {
    step.dying = mark_dying(step.inputs, step.release);
    step.dying_streamed = mark_dying(step.inputs, step.release_streamed);
  }
  return Status::OK();
}

Result<TensorMap> EngineBackend::run_impl(const TensorMap& feeds, const RunOptions& options) {
  // Eigen's products (types other than float32) follow the calling thread's OpenMP setting, and
  // the comparison that follows this thread's default: Eigen's own thread count is process-wide,
  // and two backends may run side by side on their own OS threads.
  omp_set_num_threads(capped_threads(num_threads_));
  set_default_threads(capped_threads(num_threads_));
  const Graph& g = model()->graph;
  std::vector<Tensor> values(slot_names_.size());
  for (int s : input_slots_) values[static_cast<size_t>(s)] = *feeds.find(slot_names_[static_cast<size_t>(s)]);

  // Streamed, the outputs folded at build time are reported before the first layer, each with the
  // node that produced it in the model: a caller comparing against another backend can match them
  // as soon as that backend computes them, rather than holding its copies until the run ends.
  const bool constants_first = options.stream && options.observer;
  if (constants_first) {
    for (const auto& [node, outs] : constants_by_node_) {
      TensorMap produced;
      for (size_t i : outs) produced.set(output_names_[i], engine_->folded.constants.at(output_names_[i]));
      if (!options.observer(node, g.nodes[static_cast<size_t>(node)], produced)) {
        return make_error(StatusCode::kCancelled, "run stopped by the observer at the folded outputs of '{}'",
                          g.nodes[static_cast<size_t>(node)].name);
      }
    }
  }

  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;
  for (const Step& step : steps_) {
    if (options.cancel && options.cancel->load()) return make_error(StatusCode::kCancelled, "run cancelled");
    const CompiledLayer& layer = *engine_->layers[step.layer];
    const Node& node = g.nodes[static_cast<size_t>(step.node)];
    inputs.clear();
    for (int s : step.inputs) {
      const Tensor& t = values[static_cast<size_t>(s)];
      if (!t.defined()) {
        return Status(StatusCode::kInvalidModel,
                      fmt::format("layer '{}' reads '{}', which has no value", layer.spec().name,
                                  slot_names_[static_cast<size_t>(s)]),
                      node.ref(step.node));
      }
      inputs.push_back(&t);
    }
    outputs.assign(step.outputs.size(), Tensor());
    const auto start = options.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const std::vector<char>& dying = options.stream ? step.dying_streamed : step.dying;
    if (Status st = layer.run(inputs, outputs, dying, true); !st.ok()) return st.with_node(node.ref(step.node));
    if (options.profile) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      const LayerInfo& info = layer_infos_[step.layer];
      options.profile->push_back(LayerTime{info.name, info.op, step.node, ms});
    }
    TensorMap produced;
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (options.observer) produced.set(layer.spec().outputs[i], outputs[i]);
      values[static_cast<size_t>(step.outputs[i])] = std::move(outputs[i]);
    }
    if (options.observer && !options.observer(step.node, node, produced)) {
      return make_error(StatusCode::kCancelled, "run stopped by the observer after layer '{}'", layer.spec().name);
    }
    for (int s : options.stream ? step.release_streamed : step.release) values[static_cast<size_t>(s)] = Tensor();
  }

  TensorMap result;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const std::string& name = output_names_[i];
    if (output_slots_[i] < 0) {
      if (constants_first && reported_first_[i]) continue;
      result.set(name, engine_->folded.constants.at(name));
      continue;
    }
    const Tensor& t = values[static_cast<size_t>(output_slots_[i])];
    if (!t.defined() && options.stream) continue;
    if (!t.defined()) return make_error(StatusCode::kInvalidModel, "output '{}' was not produced by any layer", name);
    result.set(name, t);
  }
  return result;
}

Result<std::vector<Tensor>> EngineBackend::run_layer_alone(size_t index, std::span<const Tensor* const> inputs) {
  if (!engine_ || index >= engine_->layers.size()) {
    return make_error(StatusCode::kInvalidArgument, "no layer {} in the engine", index);
  }
  const CompiledLayer& layer = *engine_->layers[index];
  if (inputs.size() != layer.spec().inputs.size()) {
    return make_error(StatusCode::kInvalidArgument, "layer '{}' reads {} tensors but was given {}", layer.spec().name,
                      layer.spec().inputs.size(), inputs.size());
  }
  omp_set_num_threads(capped_threads(num_threads_));
  set_default_threads(capped_threads(num_threads_));
  std::vector<Tensor> outputs(layer.spec().outputs.size());
  const int64_t node = steps_[index].node;
  if (Status st = layer.run(inputs, outputs); !st.ok()) {
    return st.with_node(model()->graph.nodes[static_cast<size_t>(node)].ref(node));
  }
  return outputs;
}

}  // namespace vn::engine
