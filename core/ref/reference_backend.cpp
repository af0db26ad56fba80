// SPDX-License-Identifier: Apache-2.0
#include "core/ref/reference_backend.h"

#include <omp.h>

#include <unordered_map>

#include "core/ir/topo.h"

namespace vn::ref {

ReferenceBackend::ReferenceBackend(const ops::OpRegistry& registry) : registry_(registry) {}

Support ReferenceBackend::supports(const Node& node, int64_t opset) const {
  if (opset < 0) {
    return {false, fmt::format("the model imports no opset for domain '{}'", node.domain)};
  }
  if (registry_.find(node.domain, node.op_type, opset)) return {true, {}};
  const std::string domain = node.domain.empty() ? std::string("ai.onnx") : node.domain;
  if (registry_.knows(node.domain, node.op_type)) {
    return {false, fmt::format("the reference backend has no kernel for {} at opset {}", node.op_type, opset)};
  }
  return {false, fmt::format("unknown op {} in domain {}", node.op_type, domain)};
}

Status ReferenceBackend::prepare_impl(const Model& model, const PrepareOptions& options) {
  graph_ = &model.graph;
  const Graph& g = model.graph;
  steps_.clear();
  slot_names_.clear();
  constants_.clear();
  keep_.clear();
  input_slots_.clear();
  output_slots_.clear();
  num_threads_ = options.num_threads > 0 ? options.num_threads : omp_get_num_procs();

  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g));

  std::unordered_map<std::string, int> slots;
  auto slot = [&](const std::string& name) {
    auto it = slots.find(name);
    if (it != slots.end()) return it->second;
    slot_names_.push_back(name);
    constants_.emplace_back();
    keep_.push_back(false);
    const int s = static_cast<int>(slot_names_.size() - 1);
    slots.emplace(name, s);
    return s;
  };

  for (const Initializer& init : g.initializers) {
    const int s = slot(init.name);
    constants_[static_cast<size_t>(s)] = init.tensor;
    keep_[static_cast<size_t>(s)] = true;
  }
  for (const ValueInfo* in : g.runtime_inputs()) input_slots_.push_back(slot(in->name));

  std::vector<std::string> problems;
  for (int64_t index : order) {
    const Node& node = g.nodes[static_cast<size_t>(index)];
    Step step;
    step.node_index = index;
    step.opset = model.opset(node.domain);
    const ops::KernelDef* def = step.opset >= 0 ? registry_.find(node.domain, node.op_type, step.opset) : nullptr;
    if (!def) {
      const Support s = supports(node, step.opset);
      problems.push_back(Status(StatusCode::kUnsupportedOp, s.reason, node.ref(index)).to_string());
      continue;
    }
    step.fn = def->fn;
    for (const std::string& in : node.inputs) step.inputs.push_back(in.empty() ? -1 : slot(in));
    for (const std::string& out : node.outputs) step.outputs.push_back(out.empty() ? -1 : slot(out));
    steps_.push_back(std::move(step));
  }
  if (!problems.empty()) {
    std::string msg = problems.size() == 1 ? problems[0]
                                           : fmt::format("{} nodes cannot run on the reference backend; first: {}",
                                                         problems.size(), problems[0]);
    return Status(StatusCode::kUnsupportedOp, msg);
  }

  for (const std::string& name : output_names_) {
    const int s = slot(name);
    output_slots_.push_back(s);
    keep_[static_cast<size_t>(s)] = true;
  }

  // Each slot is released by the last step that reads it, unless it must survive the run.
  std::vector<int> last_reader(slot_names_.size(), -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    for (int s : steps_[i].inputs) {
      if (s >= 0) last_reader[static_cast<size_t>(s)] = static_cast<int>(i);
    }
  }
  for (size_t s = 0; s < last_reader.size(); ++s) {
    if (last_reader[s] >= 0 && !keep_[s]) steps_[static_cast<size_t>(last_reader[s])].release.push_back(static_cast<int>(s));
  }
  // Outputs nobody reads (dead branches) are released right after their producer.
  for (size_t i = 0; i < steps_.size(); ++i) {
    for (int s : steps_[i].outputs) {
      if (s >= 0 && last_reader[static_cast<size_t>(s)] < 0 && !keep_[static_cast<size_t>(s)]) {
        steps_[i].release.push_back(s);
      }
    }
  }
  return Status::OK();
}

Result<TensorMap> ReferenceBackend::run_impl(const TensorMap& feeds, const RunOptions& options) {
  const Graph& g = *graph_;
  omp_set_num_threads(num_threads_);
  Eigen::setNbThreads(num_threads_);

  std::vector<Tensor> values(slot_names_.size());
  for (size_t s = 0; s < constants_.size(); ++s) values[s] = constants_[s];
  for (int s : input_slots_) values[static_cast<size_t>(s)] = *feeds.find(slot_names_[static_cast<size_t>(s)]);

  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;
  for (const Step& step : steps_) {
    if (options.cancel && options.cancel->load()) return make_error(StatusCode::kCancelled, "run cancelled");
    const Node& node = g.nodes[static_cast<size_t>(step.node_index)];
    inputs.assign(step.inputs.size(), nullptr);
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int s = step.inputs[i];
      if (s < 0) continue;
      const Tensor& t = values[static_cast<size_t>(s)];
      if (!t.defined()) {
        return Status(StatusCode::kInvalidModel,
                      fmt::format("input '{}' has no value: no node, graph input or initializer defines it",
                                  slot_names_[static_cast<size_t>(s)]),
                      node.ref(step.node_index));
      }
      inputs[i] = &t;
    }
    outputs.assign(step.outputs.size(), Tensor());
    ops::KernelContext ctx(node, step.node_index, step.opset, inputs, outputs, num_threads_);
    Status st = step.fn(ctx);
    if (st.ok()) st = ctx.attr_error();
    if (!st.ok()) return st.with_node(node.ref(step.node_index));
    TensorMap produced;
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int s = step.outputs[i];
      if (s < 0) continue;
      if (!outputs[i].defined()) {
        return Status(StatusCode::kInternal, fmt::format("kernel left output {} ('{}') unset", i, node.outputs[i]),
                      node.ref(step.node_index));
      }
      values[static_cast<size_t>(s)] = outputs[i];
      if (options.observer) produced.set(node.outputs[i], outputs[i]);
    }
    if (options.observer && !options.observer(step.node_index, node, produced)) {
      return make_error(StatusCode::kCancelled, "run stopped by the observer after node '{}'", node.name);
    }
    for (int s : step.release) values[static_cast<size_t>(s)] = Tensor();
  }

  TensorMap result;
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const Tensor& t = values[static_cast<size_t>(output_slots_[i])];
    if (!t.defined()) {
      return make_error(StatusCode::kInvalidModel, "output '{}' was not produced by any node", output_names_[i]);
    }
    result.set(output_names_[i], t);
  }
  return result;
}

}  // namespace vn::ref
