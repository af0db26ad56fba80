// SPDX-License-Identifier: Apache-2.0
#include "core/backend/backend.h"

#include <unordered_set>

namespace vn {

Status Backend::prepare(const Model& model, const PrepareOptions& options) {
  model_ = nullptr;
  output_names_.clear();
  VN_ASSIGN_OR_RETURN(output_names_, resolve_output_names(model.graph, options));
  VN_RETURN_IF_ERROR(prepare_impl(model, options));
  model_ = &model;
  return Status::OK();
}

Result<TensorMap> Backend::run(const TensorMap& feeds, const RunOptions& options) {
  if (!model_) return make_error(StatusCode::kInternal, "{} backend run before prepare", name());
  VN_RETURN_IF_ERROR(validate_feeds(model_->graph, feeds));
  return run_impl(feeds, options);
}

Result<std::vector<Tensor>> Backend::run_layer_alone(size_t, std::span<const Tensor* const>) {
  return make_error(StatusCode::kInvalidArgument, "the {} backend cannot run a layer alone (local errors need --engine)", name());
}

Result<std::vector<std::string>> resolve_output_names(const Graph& graph, const PrepareOptions& options) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& n) {
    if (!n.empty() && seen.insert(n).second) names.push_back(n);
  };
  if (!options.replace_outputs || options.outputs.empty()) {
    for (const ValueInfo& v : graph.outputs) add(v.name);
  }
  if (options.mark_all) {
    for (const Node& n : graph.nodes) {
      if (n.op_type == "Constant" && is_default_domain(n.domain)) continue;
      for (const std::string& o : n.outputs) add(o);
    }
  }
  if (!options.outputs.empty()) {
    GraphIndex index(graph);
    for (const std::string& o : options.outputs) {
      if (index.producer(o) < 0 && !index.is_graph_input(o) && !index.is_initializer(o)) {
        return make_error(StatusCode::kNotFound,
                          "output tensor '{}' is not in the model; `vernier inspect model` lists the tensor names", o);
      }
      add(o);
    }
  }
  return names;
}

Status report_in_node_order(const Graph& graph, TensorMap& result, const RunOptions& options) {
  if (!options.observer) return Status::OK();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    TensorMap at_node;
    for (const std::string& out : graph.nodes[i].outputs) {
      if (const Tensor* t = result.find(out)) at_node.set(out, *t);
    }
    if (at_node.empty()) continue;
    if (!options.observer(static_cast<int64_t>(i), graph.nodes[i], at_node)) {
      return make_error(StatusCode::kCancelled, "run stopped by the observer after node '{}'", graph.nodes[i].name);
    }
    if (options.stream) {
      for (const NamedTensor& t : at_node) result.erase(t.name);
    }
  }
  return Status::OK();
}

Status validate_feeds(const Graph& graph, const TensorMap& feeds) {
  for (const ValueInfo* in : graph.runtime_inputs()) {
    const Tensor* t = feeds.find(in->name);
    if (!t) {
      return make_error(StatusCode::kNotFound, "missing input '{}' ({}): feed it with --load-inputs or synthetic data",
                        in->name, in->type_string());
    }
    if (in->dtype && t->dtype() != *in->dtype) {
      return make_error(StatusCode::kUnsupportedDType, "input '{}' is {} but the model declares {}", in->name,
                        dtype_name(t->dtype()), dtype_name(*in->dtype));
    }
    if (in->shape) {
      const auto& dims = *in->shape;
      bool ok = dims.size() == t->shape().size();
      for (size_t i = 0; ok && i < dims.size(); ++i) {
        if (dims[i].known() && dims[i].value != t->shape()[i]) ok = false;
      }
      if (!ok) {
        return make_error(StatusCode::kShapeMismatch, "input '{}' has shape {} but the model declares {}", in->name,
                          shape_to_string(t->shape()), in->type_string());
      }
    }
  }
  return Status::OK();
}

}  // namespace vn
