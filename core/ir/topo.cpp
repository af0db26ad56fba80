// SPDX-License-Identifier: Apache-2.0
#include "core/ir/topo.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/ir/onnx_schema.h"

namespace vn {
namespace {

std::string node_label(const Node& node, int64_t index) {
  if (node.name.empty()) return fmt::format("#{} ({})", index, node.op_type);
  return fmt::format("'{}' ({})", node.name, node.op_type);
}

// Appends to `out` the names `graph` uses but does not define, each once (tracked by `seen`).
void collect_outer_references(const Graph& graph, std::vector<std::string>& out,
                              std::unordered_set<std::string>& seen) {
  std::unordered_set<std::string> local;
  for (const ValueInfo& v : graph.inputs) local.insert(v.name);
  for (const Initializer& i : graph.initializers) local.insert(i.name);
  for (const Node& n : graph.nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty()) local.insert(o);
    }
  }
  const auto use = [&](const std::string& name) {
    if (!name.empty() && !local.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const Node& n : graph.nodes) {
    for (const std::string& in : n.inputs) use(in);
    for (const std::string& in : node_implicit_inputs(n)) use(in);
  }
  for (const ValueInfo& v : graph.outputs) use(v.name);
}

// Producer lists by tensor name; more than one producer is a validation error, but sorting must
// still terminate and respect all of them.
std::unordered_map<std::string, std::vector<int64_t>> producer_lists(const Graph& graph) {
  std::unordered_map<std::string, std::vector<int64_t>> producers;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& o : graph.nodes[i].outputs) {
      if (!o.empty()) producers[o].push_back(static_cast<int64_t>(i));
    }
  }
  return producers;
}

Status cycle_error(const Graph& graph, const std::vector<std::vector<int64_t>>& preds,
                   const std::vector<bool>& scheduled) {
  int64_t start = -1;
  for (size_t i = 0; i < scheduled.size(); ++i) {
    if (!scheduled[i]) {
      start = static_cast<int64_t>(i);
      break;
    }
  }
  // Every unscheduled node waits for an unscheduled predecessor, so walking predecessors from any of
  // them must come back to a node already on the walk: that closes a cycle.
  std::unordered_map<int64_t, size_t> position;
  std::vector<int64_t> walk;
  int64_t v = start;
  while (!position.count(v)) {
    position[v] = walk.size();
    walk.push_back(v);
    int64_t next = -1;
    for (int64_t p : preds[static_cast<size_t>(v)]) {
      if (!scheduled[static_cast<size_t>(p)]) {
        next = p;
        break;
      }
    }
    if (next < 0) return make_error(StatusCode::kInternal, "cycle search lost its way at node {}", v);
    v = next;
  }
  std::vector<int64_t> cycle(walk.begin() + static_cast<std::ptrdiff_t>(position[v]), walk.end());
  // The walk follows edges backwards; reverse it to read in data-flow order, starting at the
  // lowest index so that the message is deterministic.
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (int64_t c : cycle) text += node_label(graph.nodes[static_cast<size_t>(c)], c) + " -> ";
  text += node_label(graph.nodes[static_cast<size_t>(cycle.front())], cycle.front());
  const Node& first = graph.nodes[static_cast<size_t>(cycle.front())];
  return Status(StatusCode::kInvalidModel, "graph has a cycle: " + text, first.ref(cycle.front()));
}

Status node_error(const Node& node, int64_t index, std::string message) {
  return Status(StatusCode::kInvalidModel, std::move(message), node.ref(index));
}

// Input and output counts, attribute names and required attributes of a node against the version
// of its op in force at `opset`. libonnx's checker does this up to opset 17; the table covers every
// opset Vernier accepts.
Status check_schema(const Node& n, int64_t idx, const OnnxSchema& schema, int64_t opset) {
  const auto ins = static_cast<int64_t>(n.inputs.size());
  const auto outs = static_cast<int64_t>(n.outputs.size());
  if (ins < schema.min_inputs || ins > schema.max_inputs) {
    return node_error(n, idx,
                      fmt::format("has {} inputs; {} (opset {}) takes {} to {}", ins, schema.label(), opset,
                                  schema.min_inputs, schema.max_inputs));
  }
  if (outs < schema.min_outputs || outs > schema.max_outputs) {
    return node_error(n, idx,
                      fmt::format("has {} outputs; {} (opset {}) gives {} to {}", outs, schema.label(), opset,
                                  schema.min_outputs, schema.max_outputs));
  }
  for (const Attribute& a : n.attributes) {
    if (!schema.has_attribute(a.name)) {
      return node_error(n, idx,
                        fmt::format("has attribute '{}', which {} (opset {}) does not define", a.name, schema.label(),
                                    opset));
    }
  }
  for (std::string_view name : schema.required_attributes()) {
    if (!n.attr(name)) {
      return node_error(n, idx, fmt::format("lacks attribute '{}', which {} requires", name, schema.label()));
    }
  }
  return Status::OK();
}

// Names visible to a subgraph from the graphs enclosing it: one set per enclosing graph, chained, so
// that nesting does not copy the names of every outer graph.
struct Scope {
  const std::unordered_set<std::string>* names = nullptr;
  const Scope* parent = nullptr;

  bool contains(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      if (s->names && s->names->count(name)) return true;
    }
    return false;
  }
};

Status validate_impl(const Graph& graph, int64_t opset, const Scope& outer) {
  enum class Source { kInput, kInitializer };
  std::unordered_map<std::string, Source> external;
  for (const ValueInfo& v : graph.inputs) {
    if (v.name.empty()) return make_error(StatusCode::kInvalidModel, "a graph input has an empty name");
    if (!external.emplace(v.name, Source::kInput).second) {
      return make_error(StatusCode::kInvalidModel, "graph input '{}' is declared twice", v.name);
    }
  }
  for (const Initializer& i : graph.initializers) {
    // An initializer listed as a graph input too is the IR < 4 style of a default value: allowed.
    auto [it, added] = external.emplace(i.name, Source::kInitializer);
    if (!added && it->second == Source::kInitializer) {
      return make_error(StatusCode::kInvalidModel, "initializer '{}' is defined twice", i.name);
    }
  }

  std::unordered_map<std::string, int64_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const int64_t idx = static_cast<int64_t>(i);
    if (n.op_type.empty()) return node_error(n, idx, "node has an empty op_type");
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (auto it = producer.find(o); it != producer.end()) {
        const Node& other = graph.nodes[static_cast<size_t>(it->second)];
        return node_error(
            n, idx,
            fmt::format("output '{}' is already produced by node {} {}", o, it->second, node_label(other, it->second)));
      }
      if (auto it = external.find(o); it != external.end()) {
        return node_error(
            n, idx,
            fmt::format("output '{}' is also a graph {}", o, it->second == Source::kInput ? "input" : "initializer"));
      }
      producer.emplace(o, idx);
    }
  }

  const auto check_defined = [&](const Node& n, int64_t idx, const std::string& name, bool implicit) -> Status {
    if (name.empty()) return Status::OK();
    const char* how = implicit ? " (used inside a subgraph)" : "";
    if (auto it = producer.find(name); it != producer.end()) {
      if (it->second == idx) return node_error(n, idx, fmt::format("reads its own output '{}'{}", name, how));
      if (it->second > idx) {
        return node_error(
            n, idx,
            fmt::format("reads '{}'{} before node {} {} produces it; the graph is not in topological "
                        "order (run toposort)",
                        name, how, it->second, node_label(graph.nodes[static_cast<size_t>(it->second)], it->second)));
      }
      return Status::OK();
    }
    if (external.count(name) || outer.contains(name)) return Status::OK();
    return node_error(n, idx,
                      fmt::format("input '{}'{} is not produced by any node, graph input or initializer", name, how));
  };

  // Everything this graph defines, for its subgraphs; built on the first node that has one.
  std::unordered_set<std::string> visible;
  bool visible_built = false;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const int64_t idx = static_cast<int64_t>(i);
    for (const std::string& in : n.inputs) VN_RETURN_IF_ERROR(check_defined(n, idx, in, false));
    for (const std::string& in : node_implicit_inputs(n)) VN_RETURN_IF_ERROR(check_defined(n, idx, in, true));

    if (is_default_domain(n.domain) && opset <= kNewestDefaultOpset) {
      if (const OnnxSchema* schema = onnx_schema("", n.op_type, opset)) {
        VN_RETURN_IF_ERROR(check_schema(n, idx, *schema, opset));
      }
    }

    bool has_subgraph = false;
    for (const Attribute& a : n.attributes) has_subgraph |= a.g != nullptr || !a.graphs.empty();
    if (!has_subgraph) continue;
    if (!visible_built) {
      for (const auto& [name, source] : external) visible.insert(name);
      for (const auto& [name, p] : producer) visible.insert(name);
      visible_built = true;
    }
    const Scope inner{&visible, &outer};
    for (const Attribute& a : n.attributes) {
      std::vector<const Graph*> subgraphs;
      if (a.g) subgraphs.push_back(a.g.get());
      for (const auto& g : a.graphs) {
        if (g) subgraphs.push_back(g.get());
      }
      for (const Graph* g : subgraphs) {
        Status st = validate_impl(*g, opset, inner);
        if (!st.ok()) {
          return Status(st.code(),
                        fmt::format("in subgraph '{}' of attribute '{}': {}", g->name, a.name, st.to_string()),
                        n.ref(idx));
        }
      }
    }
  }

  for (const ValueInfo& v : graph.outputs) {
    if (v.name.empty()) return make_error(StatusCode::kInvalidModel, "a graph output has an empty name");
    if (!producer.count(v.name) && !external.count(v.name) && !outer.contains(v.name)) {
      return make_error(StatusCode::kInvalidModel,
                        "graph output '{}' is not produced by any node, graph input or initializer", v.name);
    }
  }
  return Status::OK();
}

}  // namespace

std::vector<std::string> node_implicit_inputs(const Node& node) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const Attribute& a : node.attributes) {
    if (a.g) collect_outer_references(*a.g, out, seen);
    for (const auto& g : a.graphs) {
      if (g) collect_outer_references(*g, out, seen);
    }
  }
  return out;
}

Result<std::vector<int64_t>> topological_order(const Graph& graph) {
  const size_t n = graph.nodes.size();
  const auto producers = producer_lists(graph);
  std::vector<std::vector<int64_t>> succs(n);
  std::vector<std::vector<int64_t>> preds(n);
  std::vector<size_t> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    std::vector<std::string> reads(node.inputs.begin(), node.inputs.end());
    for (std::string& name : node_implicit_inputs(node)) reads.push_back(std::move(name));
    for (const std::string& name : reads) {
      if (name.empty()) continue;
      auto it = producers.find(name);
      if (it == producers.end()) continue;
      for (int64_t p : it->second) {
        // Duplicate edges (a node reading one tensor twice) are kept: each is released once.
        succs[static_cast<size_t>(p)].push_back(static_cast<int64_t>(i));
        preds[i].push_back(p);
        ++waiting[i];
      }
    }
  }
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(static_cast<int64_t>(i));
  }
  std::vector<int64_t> order;
  order.reserve(n);
  std::vector<bool> scheduled(n, false);
  while (!ready.empty()) {
    const int64_t v = ready.top();
    ready.pop();
    order.push_back(v);
    scheduled[static_cast<size_t>(v)] = true;
    for (int64_t s : succs[static_cast<size_t>(v)]) {
      if (--waiting[static_cast<size_t>(s)] == 0) ready.push(s);
    }
  }
  if (order.size() < n) return cycle_error(graph, preds, scheduled);
  return order;
}

Status toposort(Graph& graph) {
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(graph));
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int64_t>(i);
  if (identity) return Status::OK();
  std::vector<Node> sorted;
  sorted.reserve(order.size());
  for (int64_t i : order) sorted.push_back(std::move(graph.nodes[static_cast<size_t>(i)]));
  graph.nodes = std::move(sorted);
  return Status::OK();
}

Status validate_graph(const Graph& graph, int64_t opset) {
  if (opset < 1) return make_error(StatusCode::kInvalidArgument, "opset {} is not valid (must be at least 1)", opset);
  return validate_impl(graph, opset, Scope{});
}

std::vector<std::string> all_tensor_names(const Graph& graph) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const Node& n : graph.nodes) {
    if (n.op_type == "Constant" && is_default_domain(n.domain)) continue;
    for (const std::string& o : n.outputs) {
      if (!o.empty() && seen.insert(o).second) names.push_back(o);
    }
  }
  return names;
}

}  // namespace vn
