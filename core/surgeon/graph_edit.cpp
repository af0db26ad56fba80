// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/graph_edit.h"

#include <fmt/format.h>

#include <memory>

namespace vn::surgeon {
namespace {

void collect_names(const Graph& graph, std::unordered_set<std::string>& out) {
  out.insert(graph.name);
  for (const ValueInfo& v : graph.inputs) out.insert(v.name);
  for (const ValueInfo& v : graph.outputs) out.insert(v.name);
  for (const ValueInfo& v : graph.value_info) out.insert(v.name);
  for (const Initializer& i : graph.initializers) out.insert(i.name);
  for (const Node& n : graph.nodes) {
    out.insert(n.name);
    out.insert(n.inputs.begin(), n.inputs.end());
    out.insert(n.outputs.begin(), n.outputs.end());
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_names(*a.g, out);
      for (const auto& g : a.graphs) {
        if (g) collect_names(*g, out);
      }
    }
  }
}

std::vector<Dim> dims_of(const Shape& shape) {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::of(d));
  return dims;
}

Graph rename_in_graph(const Graph& graph, const std::map<std::string, std::string>& renames) {
  // Names the graph defines shadow nothing (ONNX's single assignment spans scopes), but a graph
  // that reuses one is still its own: leave its values alone.
  std::map<std::string, std::string> scoped = renames;
  for (const ValueInfo& v : graph.inputs) scoped.erase(v.name);
  for (const Initializer& i : graph.initializers) scoped.erase(i.name);
  for (const Node& n : graph.nodes) {
    for (const std::string& o : n.outputs) scoped.erase(o);
  }
  Graph out = graph;
  if (scoped.empty()) return out;
  auto rename = [&](std::string& name) {
    const auto it = scoped.find(name);
    if (it != scoped.end()) name = it->second;
  };
  for (Node& n : out.nodes) {
    for (std::string& in : n.inputs) rename(in);
    n = rename_outer_references(n, scoped);
  }
  for (ValueInfo& v : out.outputs) rename(v.name);
  for (ValueInfo& v : out.value_info) rename(v.name);
  return out;
}

}  // namespace

NameAllocator::NameAllocator(const Model& model) { collect_names(model.graph, used_); }

std::string NameAllocator::take(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_.count(name) > 0; ++i) name = fmt::format("{}_{}", base, i);
  used_.insert(name);
  return name;
}

Model model_shell(const Model& model) {
  Model out;
  out.ir_version = model.ir_version;
  out.opset_imports = model.opset_imports;
  out.producer_name = model.producer_name;
  out.producer_version = model.producer_version;
  out.domain = model.domain;
  out.model_version = model.model_version;
  out.doc_string = model.doc_string;
  out.metadata = model.metadata;
  out.base_dir = model.base_dir;
  out.graph.name = model.graph.name;
  out.graph.doc_string = model.graph.doc_string;
  return out;
}

Node rename_outer_references(const Node& node, const std::map<std::string, std::string>& renames) {
  Node out = node;
  if (renames.empty()) return out;
  for (Attribute& a : out.attributes) {
    if (a.g) a.g = std::make_shared<const Graph>(rename_in_graph(*a.g, renames));
    for (auto& g : a.graphs) {
      if (g) g = std::make_shared<const Graph>(rename_in_graph(*g, renames));
    }
  }
  return out;
}

std::unordered_map<std::string, ValueInfo> declared_types(const Graph& graph) {
  std::unordered_map<std::string, ValueInfo> types;
  auto add = [&](const ValueInfo& v) {
    ValueInfo& t = types[v.name];
    t.name = v.name;
    if (!t.dtype) t.dtype = v.dtype;
    if (!t.shape) t.shape = v.shape;
  };
  for (const ValueInfo& v : graph.inputs) add(v);
  for (const ValueInfo& v : graph.outputs) add(v);
  for (const ValueInfo& v : graph.value_info) add(v);
  for (const Initializer& i : graph.initializers) add({i.name, i.tensor.dtype(), dims_of(i.tensor.shape()), {}});
  for (const Node& n : graph.nodes) {
    if (n.op_type != "Constant" || !is_default_domain(n.domain) || n.outputs.empty() || n.attributes.empty()) continue;
    const Attribute& a = n.attributes.front();
    ValueInfo v{n.outputs[0], std::nullopt, std::nullopt, {}};
    if (a.name == "value" || a.name == "sparse_value") {
      v.dtype = a.t.dtype();
      v.shape = dims_of(a.t.shape());
    } else if (a.name == "value_float" || a.name == "value_int") {
      v.dtype = a.name == "value_float" ? DType::kFloat32 : DType::kInt64;
      v.shape = std::vector<Dim>{};
    } else if (a.name == "value_floats" || a.name == "value_ints") {
      const size_t count = a.name == "value_floats" ? a.floats.size() : a.ints.size();
      v.dtype = a.name == "value_floats" ? DType::kFloat32 : DType::kInt64;
      v.shape = std::vector<Dim>{Dim::of(static_cast<int64_t>(count))};
    }
    add(v);
  }
  return types;
}

Result<std::unordered_map<std::string, ValueInfo>> value_types(const Model& model,
                                                              const std::vector<std::string>& needed,
                                                              const FallbackRun& fallback) {
  std::unordered_map<std::string, ValueInfo> types = declared_types(model.graph);
  std::vector<std::string> missing;
  for (const std::string& name : needed) {
    const auto it = types.find(name);
    if (it == types.end() || !it->second.dtype) missing.push_back(name);
  }
  if (missing.empty()) return types;
  if (fallback) {
    Result<TensorMap> values = fallback(missing);
    if (!values.ok()) {
      return values.status().with_context(fmt::format("running the model to find the type of '{}'", missing.front()));
    }
    for (const std::string& name : missing) {
      if (const Tensor* t = values->find(name)) types[name] = {name, t->dtype(), dims_of(t->shape()), {}};
    }
  }
  for (const std::string& name : missing) {
    const auto it = types.find(name);
    VN_RETURN_IF_NOT(it != types.end() && it->second.dtype, StatusCode::kInvalidModel,
                     "shape inference found no type for '{}' ({} value(s) untyped){}", name, missing.size(),
                     fallback ? "" : "; a run of the model on input data would find it");
  }
  return types;
}

}  // namespace vn::surgeon
