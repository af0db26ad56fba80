// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/isolate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "core/ir/topo.h"
#include "core/surgeon/graph_edit.h"

namespace vn::surgeon {
namespace {

bool is_constant_node(const Node& n) { return n.op_type == "Constant" && is_default_domain(n.domain); }

// What the isolation of one model needs to know about the original.
class Source {
 public:
  Source(const Model& model, const std::unordered_map<std::string, ValueInfo>& known)
      : model_(model), g_(model.graph), types_(declared_types(model.graph)) {
    for (const auto& [name, info] : known) {
      ValueInfo& t = types_[name];
      t.name = name;
      if (!t.dtype) t.dtype = info.dtype;
      if (!t.has_static_shape() && info.shape) t.shape = info.shape;
    }
    for (const Initializer& init : g_.initializers) initializers_.insert(init.name);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (is_constant_node(n) && !n.outputs.empty()) constants_[n.outputs[0]] = i;
    }
  }

  const Graph& graph() const { return g_; }
  const Model& model() const { return model_; }
  bool is_initializer(const std::string& name) const { return initializers_.count(name) > 0; }
  std::optional<size_t> constant_producer(const std::string& name) const {
    const auto it = constants_.find(name);
    return it == constants_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }

  // The runtime values node `index` reads (explicitly or in its subgraphs), once each, in order.
  std::vector<std::string> feeds_of(size_t index) const {
    const Node& n = g_.nodes[index];
    std::vector<std::string> names = n.inputs;
    for (std::string& s : node_implicit_inputs(n)) names.push_back(std::move(s));
    std::vector<std::string> out;
    for (std::string& name : names) {
      if (name.empty() || is_initializer(name) || constant_producer(name)) continue;
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
    return out;
  }

  Result<ValueInfo> typed(const std::string& name, size_t reader) const {
    const auto it = types_.find(name);
    VN_RETURN_IF_NOT(it != types_.end() && it->second.dtype, StatusCode::kInvalidModel,
                     "no type known for '{}' (of node '{}'); give the types of a reference run", name,
                     node_label(g_, static_cast<int64_t>(reader)));
    return it->second;
  }

  std::optional<uint64_t> bytes(const std::string& name) const {
    const auto it = types_.find(name);
    if (it == types_.end() || !it->second.dtype || !it->second.has_static_shape()) return std::nullopt;
    return static_cast<uint64_t>(shape_numel(it->second.static_shape())) * dtype_size(*it->second.dtype);
  }

 private:
  const Model& model_;
  const Graph& g_;
  std::unordered_map<std::string, ValueInfo> types_;
  std::unordered_set<std::string> initializers_;
  std::unordered_map<std::string, size_t> constants_;
};

Result<std::vector<int64_t>> chosen_nodes(const Graph& g, const std::vector<int64_t>& nodes) {
  std::vector<int64_t> out;
  if (nodes.empty()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!is_constant_node(g.nodes[i])) out.push_back(static_cast<int64_t>(i));
    }
    return out;
  }
  out = nodes;
  std::sort(out.begin(), out.end());
  for (size_t i = 0; i < out.size(); ++i) {
    VN_RETURN_IF_NOT(out[i] >= 0 && out[i] < static_cast<int64_t>(g.nodes.size()), StatusCode::kInvalidArgument,
                     "node index {} is out of range (the graph has {} nodes)", out[i], g.nodes.size());
    VN_RETURN_IF_NOT(i == 0 || out[i] != out[i - 1], StatusCode::kInvalidArgument, "node index {} is listed twice",
                     out[i]);
  }
  return out;
}

Result<IsolatedModel> isolate(const Source& src, const std::vector<int64_t>& chosen) {
  const Graph& g = src.graph();
  IsolatedModel out;
  out.model = model_shell(src.model());
  Graph& dst = out.model.graph;
  NameAllocator names(src.model());
  std::map<std::string, std::string> input_of;
  std::unordered_set<std::string> initializers_copied;
  std::unordered_set<size_t> constants_copied;
  const std::unordered_set<int64_t> isolated(chosen.begin(), chosen.end());
  std::vector<Node> constants, nodes;

  auto account = [&](const std::string& original) {
    const std::optional<uint64_t> b = src.bytes(original);
    out.known_bytes = out.known_bytes && b.has_value();
    out.bytes += b.value_or(0);
  };
  // The name node `reader` reads `name` under in the isolated model.
  auto feed = [&](const std::string& name, size_t reader, IsolatedNode& rec) -> Result<std::string> {
    if (name.empty()) return name;
    if (src.is_initializer(name)) {
      if (initializers_copied.insert(name).second) dst.initializers.push_back(*g.find_initializer(name));
      return name;
    }
    if (const std::optional<size_t> c = src.constant_producer(name)) {
      if (constants_copied.insert(*c).second) {
        Node copy = g.nodes[*c];
        if (isolated.count(static_cast<int64_t>(*c)) > 0) copy.name = names.take(copy.name + "__const");
        constants.push_back(std::move(copy));
      }
      return name;
    }
    auto it = input_of.find(name);
    if (it == input_of.end()) {
      VN_ASSIGN_OR_RETURN(ValueInfo v, src.typed(name, reader));
      v.name = names.take(name + "__in");
      dst.inputs.push_back(v);
      out.feeds.push_back({v.name, name});
      account(name);
      it = input_of.emplace(name, v.name).first;
    }
    const IsolatedValue value{it->second, name};
    if (std::none_of(rec.inputs.begin(), rec.inputs.end(), [&](const IsolatedValue& x) { return x.name == value.name; })) {
      rec.inputs.push_back(value);
    }
    return it->second;
  };

  for (int64_t index : chosen) {
    const size_t i = static_cast<size_t>(index);
    Node n = g.nodes[i];
    IsolatedNode rec;
    rec.node = index;
    for (std::string& in : n.inputs) {
      VN_ASSIGN_OR_RETURN(in, feed(in, i, rec));
    }
    std::map<std::string, std::string> outer;
    for (const std::string& name : node_implicit_inputs(n)) {
      VN_ASSIGN_OR_RETURN(std::string renamed, feed(name, i, rec));
      if (renamed != name) outer[name] = renamed;
    }
    n = rename_outer_references(n, outer);
    for (std::string& o : n.outputs) {
      if (o.empty()) continue;
      VN_ASSIGN_OR_RETURN(ValueInfo v, src.typed(o, i));
      v.name = names.take(o + "__local");
      dst.outputs.push_back(v);
      rec.outputs.push_back({v.name, o});
      out.outputs.push_back({v.name, o});
      account(o);
      o = v.name;
    }
    nodes.push_back(std::move(n));
    out.nodes.push_back(std::move(rec));
  }
  dst.nodes = std::move(constants);
  for (Node& n : nodes) dst.nodes.push_back(std::move(n));
  return out;
}

}  // namespace

std::unordered_map<std::string, ValueInfo> value_types_of(const TensorMap& tensors) {
  std::unordered_map<std::string, ValueInfo> out;
  for (const NamedTensor& t : tensors) {
    std::vector<Dim> dims;
    for (int64_t d : t.tensor.shape()) dims.push_back(Dim::of(d));
    out[t.name] = {t.name, t.tensor.dtype(), std::move(dims), {}};
  }
  return out;
}

Result<IsolatedModel> isolate_nodes(const Model& model, const IsolateOptions& options) {
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> chosen, chosen_nodes(model.graph, options.nodes));
  const Source src(model, options.known);
  return isolate(src, chosen);
}

Result<std::vector<IsolatedModel>> isolate_in_chunks(const Model& model, const IsolateOptions& options,
                                                     uint64_t byte_budget) {
  VN_ASSIGN_OR_RETURN(const std::vector<int64_t> chosen, chosen_nodes(model.graph, options.nodes));
  const Source src(model, options.known);
  std::vector<std::vector<int64_t>> chunks;
  std::unordered_set<std::string> chunk_feeds;
  uint64_t chunk_bytes = 0;
  auto close = [&] {
    chunk_feeds.clear();
    chunk_bytes = 0;
  };
  for (int64_t index : chosen) {
    const size_t i = static_cast<size_t>(index);
    const std::vector<std::string> feeds = src.feeds_of(i);
    std::optional<uint64_t> own = 0, added = 0;
    auto count = [&](const std::string& name, bool is_feed) {
      const std::optional<uint64_t> b = src.bytes(name);
      if (!b) {
        own = added = std::nullopt;
        return;
      }
      if (own) *own += *b;
      if (added && (!is_feed || chunk_feeds.count(name) == 0)) *added += *b;
    };
    for (const std::string& f : feeds) count(f, true);
    for (const std::string& o : model.graph.nodes[i].outputs) {
      if (!o.empty()) count(o, false);
    }
    const bool alone = !own || *own > byte_budget;
    if (alone || chunks.empty() || chunk_bytes + *added > byte_budget) {
      chunks.emplace_back();
      close();
    }
    chunks.back().push_back(index);
    if (alone) {
      chunks.emplace_back();  // nothing joins a node that has a model of its own
      continue;
    }
    chunk_bytes += *added;
    chunk_feeds.insert(feeds.begin(), feeds.end());
  }
  std::vector<IsolatedModel> out;
  for (const std::vector<int64_t>& chunk : chunks) {
    if (chunk.empty()) continue;
    VN_ASSIGN_OR_RETURN(IsolatedModel m, isolate(src, chunk));
    out.push_back(std::move(m));
  }
  return out;
}

Result<TensorMap> isolated_feeds(const IsolatedModel& isolated, const TensorMap& reference) {
  TensorMap feeds;
  for (const IsolatedValue& v : isolated.feeds) {
    const Tensor* t = reference.find(v.original);
    VN_RETURN_IF_NOT(t != nullptr, StatusCode::kNotFound,
                     "the reference results have no tensor '{}', which the isolated model reads as '{}'", v.original,
                     v.name);
    feeds.set(v.name, *t);
  }
  return feeds;
}

}  // namespace vn::surgeon
