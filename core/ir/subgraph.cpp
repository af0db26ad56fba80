// SPDX-License-Identifier: Apache-2.0
#include "core/ir/subgraph.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/ir/topo.h"

namespace vn {
namespace {

ValueInfo typed_boundary(const Graph& graph, const std::string& name) {
  std::optional<ValueInfo> known = graph.find_value_info(name);
  ValueInfo v = known ? std::move(*known) : ValueInfo{};
  v.name = name;
  return v;
}

Status check_names(const std::vector<std::string>& names, const char* kind,
                   const std::unordered_set<std::string>& known) {
  std::unordered_set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty()) return make_error(StatusCode::kInvalidArgument, "an empty {} name was given", kind);
    if (!seen.insert(name).second) {
      return make_error(StatusCode::kInvalidArgument, "{} '{}' is listed twice", kind, name);
    }
    if (!known.count(name))
      return make_error(StatusCode::kNotFound, "unknown tensor '{}' (given as an {})", name, kind);
  }
  return Status::OK();
}

}  // namespace

Result<Graph> extract_subgraph(const Graph& graph, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs) {
  if (outputs.empty()) return make_error(StatusCode::kInvalidArgument, "no outputs given to extract");

  std::unordered_map<std::string, int64_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& o : graph.nodes[i].outputs) {
      if (!o.empty()) producer.emplace(o, static_cast<int64_t>(i));
    }
  }
  std::unordered_set<std::string> graph_inputs;
  for (const ValueInfo& v : graph.inputs) graph_inputs.insert(v.name);
  std::unordered_set<std::string> initializers;
  for (const Initializer& i : graph.initializers) initializers.insert(i.name);

  std::unordered_set<std::string> known = graph_inputs;
  known.insert(initializers.begin(), initializers.end());
  for (const auto& [name, index] : producer) known.insert(name);
  VN_RETURN_IF_ERROR(check_names(inputs, "input", known));
  VN_RETURN_IF_ERROR(check_names(outputs, "output", known));

  const std::unordered_set<std::string> boundary(inputs.begin(), inputs.end());
  std::vector<bool> keep(graph.nodes.size(), false);
  std::unordered_set<std::string> used_initializers;
  std::unordered_set<std::string> resolved;
  for (const std::string& output : outputs) {
    std::vector<std::string> stack{output};
    while (!stack.empty()) {
      std::string name = std::move(stack.back());
      stack.pop_back();
      if (name.empty() || !resolved.insert(name).second) continue;
      if (boundary.count(name)) continue;
      if (auto it = producer.find(name); it != producer.end()) {
        const size_t index = static_cast<size_t>(it->second);
        if (keep[index]) continue;
        keep[index] = true;
        const Node& node = graph.nodes[index];
        stack.insert(stack.end(), node.inputs.begin(), node.inputs.end());
        for (std::string& implicit : node_implicit_inputs(node)) stack.push_back(std::move(implicit));
        continue;
      }
      if (initializers.count(name)) {
        used_initializers.insert(name);
        continue;
      }
      if (graph_inputs.count(name)) {
        return make_error(StatusCode::kInvalidArgument,
                          "output '{}' cannot be computed from the given inputs: it needs graph input '{}'", output,
                          name);
      }
      return make_error(StatusCode::kInvalidArgument,
                        "output '{}' cannot be computed from the given inputs: it needs '{}', which nothing in the "
                        "graph produces",
                        output, name);
    }
  }

  Graph sub;
  sub.name = graph.name;
  sub.doc_string = graph.doc_string;
  std::unordered_set<std::string> produced;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!keep[i]) continue;
    sub.nodes.push_back(graph.nodes[i]);
    for (const std::string& o : graph.nodes[i].outputs) {
      if (!o.empty()) produced.insert(o);
    }
  }
  for (const std::string& name : inputs) sub.inputs.push_back(typed_boundary(graph, name));
  for (const std::string& name : outputs) sub.outputs.push_back(typed_boundary(graph, name));
  for (const Initializer& init : graph.initializers) {
    if (used_initializers.count(init.name)) sub.initializers.push_back(init);
  }
  const std::unordered_set<std::string> ends(outputs.begin(), outputs.end());
  for (const ValueInfo& v : graph.value_info) {
    if (produced.count(v.name) && !boundary.count(v.name) && !ends.count(v.name)) sub.value_info.push_back(v);
  }
  return sub;
}

}  // namespace vn
