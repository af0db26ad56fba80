// SPDX-License-Identifier: Apache-2.0
#include "core/ir/graph.h"

namespace vn {

bool ValueInfo::has_static_shape() const {
  if (!shape) return false;
  for (const Dim& d : *shape) {
    if (!d.known()) return false;
  }
  return true;
}

Shape ValueInfo::static_shape() const {
  Shape s;
  if (!shape) return s;
  for (const Dim& d : *shape) s.push_back(d.value);
  return s;
}

std::string ValueInfo::type_string() const {
  std::string s = dtype ? std::string(dtype_name(*dtype)) : std::string("?");
  s += " ";
  if (!shape) return s + "?";
  s += "(";
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i) s += ", ";
    const Dim& d = (*shape)[i];
    s += d.known() ? std::to_string(d.value) : (d.param.empty() ? std::string("?") : d.param);
  }
  if (shape->size() == 1) s += ",";
  return s + ")";
}

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kUndefined: return "undefined";
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
  }
  return "unknown";
}

const Attribute* Node::attr(std::string_view attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const Initializer* Graph::find_initializer(std::string_view tensor_name) const {
  for (const Initializer& i : initializers) {
    if (i.name == tensor_name) return &i;
  }
  return nullptr;
}

std::optional<ValueInfo> Graph::find_value_info(std::string_view tensor_name) const {
  for (const auto* list : {&inputs, &outputs, &value_info}) {
    for (const ValueInfo& v : *list) {
      if (v.name == tensor_name && (v.dtype || v.shape)) return v;
    }
  }
  if (const Initializer* init = find_initializer(tensor_name)) {
    ValueInfo v;
    v.name = init->name;
    v.dtype = init->tensor.dtype();
    std::vector<Dim> dims;
    for (int64_t d : init->tensor.shape()) dims.push_back(Dim::of(d));
    v.shape = std::move(dims);
    return v;
  }
  return std::nullopt;
}

std::vector<const ValueInfo*> Graph::runtime_inputs() const {
  std::vector<const ValueInfo*> out;
  for (const ValueInfo& v : inputs) {
    if (!find_initializer(v.name)) out.push_back(&v);
  }
  return out;
}

int64_t Graph::producer_of(std::string_view tensor_name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& o : nodes[i].outputs) {
      if (o == tensor_name) return static_cast<int64_t>(i);
    }
  }
  return -1;
}

int64_t Model::opset(std::string_view domain_name) const {
  const bool want_default = is_default_domain(domain_name);
  for (const OpsetId& o : opset_imports) {
    if (want_default ? is_default_domain(o.domain) : o.domain == domain_name) return o.version;
  }
  return -1;
}

GraphIndex::GraphIndex(const Graph& graph) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (const std::string& o : n.outputs) {
      if (!o.empty()) producer_.emplace(o, static_cast<int64_t>(i));
    }
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      auto& list = consumers_[in];
      if (list.empty() || list.back() != static_cast<int64_t>(i)) list.push_back(static_cast<int64_t>(i));
    }
  }
  for (const Initializer& init : graph.initializers) initializer_[init.name] = true;
  for (const ValueInfo& v : graph.inputs) input_[v.name] = true;
  for (const ValueInfo& v : graph.outputs) output_[v.name] = true;
}

int64_t GraphIndex::producer(std::string_view tensor_name) const {
  auto it = producer_.find(std::string(tensor_name));
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int64_t>& GraphIndex::consumers(std::string_view tensor_name) const {
  static const std::vector<int64_t> kNone;
  auto it = consumers_.find(std::string(tensor_name));
  return it == consumers_.end() ? kNone : it->second;
}

bool GraphIndex::is_initializer(std::string_view tensor_name) const {
  return initializer_.count(std::string(tensor_name)) > 0;
}
bool GraphIndex::is_graph_input(std::string_view tensor_name) const { return input_.count(std::string(tensor_name)) > 0; }
bool GraphIndex::is_graph_output(std::string_view tensor_name) const {
  return output_.count(std::string(tensor_name)) > 0;
}

std::string node_label(const Graph& graph, int64_t index) {
  const Node& n = graph.nodes[static_cast<size_t>(index)];
  return n.name.empty() ? fmt::format("{}_{}", n.op_type, index) : n.name;
}

}  // namespace vn
