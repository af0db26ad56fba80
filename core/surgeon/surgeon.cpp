// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/surgeon.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_set>

#include "core/common/logging.h"
#include "core/engine/folding.h"
#include "core/ir/onnx_export.h"
#include "core/ir/subgraph.h"
#include "core/ir/topo.h"
#include "core/ops/op_registry.h"

namespace vn::surgeon {
namespace {

// "[1,3,?,batch]" -> dims; nullopt when `text` is not a bracketed list.
std::optional<std::vector<Dim>> parse_dims(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<Dim> dims;
  std::string_view body = text.substr(1, text.size() - 2);
  if (body.find_first_not_of(' ') == std::string_view::npos) return dims;
  while (true) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) return std::nullopt;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec == std::errc() && end == item.data() + item.size()) {
      if (v < -1) return std::nullopt;
      dims.push_back(v >= 0 ? Dim::of(v) : Dim{});
    } else if (item == "?") {
      dims.push_back(Dim{});
    } else if (std::isalpha(static_cast<unsigned char>(item.front())) || item.front() == '_') {
      dims.push_back(Dim::named(std::string(item)));
    } else {
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return dims;
}

std::string dims_string(const std::vector<Dim>& dims) {
  std::string out;
  for (const Dim& d : dims)
    out += (out.empty() ? "" : ", ") + (d.known() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
  return "(" + out + ")";
}

std::string type_string(const ValueInfo& v) {
  return fmt::format("{} {}", v.dtype ? std::string(dtype_name(*v.dtype)) : "?",
                     v.shape ? dims_string(*v.shape) : "(unknown rank)");
}

std::vector<Dim> dims_of(const Shape& shape) {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::of(d));
  return dims;
}

std::vector<std::string> labels(const Graph& graph, const std::vector<int64_t>& indices) {
  std::vector<std::string> out;
  for (int64_t i : indices) out.push_back(node_label(graph, i));
  return out;
}

// Names a node reads, subgraph dependencies included.
std::vector<std::string> reads(const Node& node) {
  std::vector<std::string> names = node.inputs;
  for (std::string& n : node_implicit_inputs(node)) names.push_back(std::move(n));
  return names;
}

}  // namespace

Result<BoundaryTensor> parse_boundary(const std::string& text, bool with_shape) {
  BoundaryTensor out;
  std::string rest = text;
  // The part after the last colon, when there is a name before it.
  auto last_part = [&]() -> std::optional<std::string> {
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    return rest.substr(colon + 1);
  };
  auto drop_last = [&] { rest.erase(rest.rfind(':')); };
  const char* flag = with_shape ? "--inputs" : "--outputs";
  const char* form = with_shape ? "NAME[:SHAPE[:DTYPE]]" : "NAME[:DTYPE]";
  auto bad = [&](const std::string& part, const char* what) {
    return make_error(StatusCode::kInvalidArgument, "{} '{}': '{}' is not a {} (expected {})", flag, text, part, what,
                      form);
  };

  if (std::optional<std::string> part = last_part()) {
    if (*part == "auto" || dtype_from_name(*part)) {
      if (*part != "auto") out.dtype = dtype_from_name(*part);
      drop_last();
    } else if (part->find('[') != std::string::npos && (!with_shape || !parse_dims(*part))) {
      return bad(*part, with_shape ? "shape like [1,3,224,224]" : "dtype");
    } else if (with_shape && !parse_dims(*part)) {
      // "x:[1,2]:floot32": a shape before it means this was meant as a dtype.
      std::string before = rest.substr(0, rest.rfind(':'));
      const size_t colon = before.rfind(':');
      if (colon != std::string::npos && colon > 0 && parse_dims(before.substr(colon + 1))) return bad(*part, "dtype");
    }
  }
  if (with_shape) {
    if (std::optional<std::string> part = last_part()) {
      if (*part == "auto") {
        drop_last();
      } else if (std::optional<std::vector<Dim>> dims = parse_dims(*part)) {
        out.shape = std::move(dims);
        drop_last();
      } else if (part->find('[') != std::string::npos) {
        return bad(*part, "shape like [1,3,224,224]");
      }
    }
  }
  VN_RETURN_IF_NOT(!rest.empty(), StatusCode::kInvalidArgument, "{} '{}': no tensor name (expected {})", flag, text,
                   form);
  out.name = std::move(rest);
  return out;
}

Result<Rewrite> extract(const Model& model, const std::vector<BoundaryTensor>& inputs,
                        const std::vector<BoundaryTensor>& outputs, const FallbackRun& fallback) {
  const Graph& full = model.graph;
  std::vector<BoundaryTensor> in = inputs, out = outputs;
  if (in.empty()) {
    for (const ValueInfo* v : full.runtime_inputs()) in.push_back({v->name, std::nullopt, std::nullopt});
  }
  if (out.empty()) {
    for (const ValueInfo& v : full.outputs) out.push_back({v.name, std::nullopt, std::nullopt});
  }
  std::vector<std::string> in_names, out_names;
  for (const BoundaryTensor& b : in) in_names.push_back(b.name);
  for (const BoundaryTensor& b : out) out_names.push_back(b.name);

  Rewrite rw;
  // Everything but the graph, without copying the full graph's weights.
  rw.model.ir_version = model.ir_version;
  rw.model.opset_imports = model.opset_imports;
  rw.model.producer_name = model.producer_name;
  rw.model.producer_version = model.producer_version;
  rw.model.domain = model.domain;
  rw.model.model_version = model.model_version;
  rw.model.doc_string = model.doc_string;
  rw.model.metadata = model.metadata;
  rw.model.base_dir = model.base_dir;
  VN_ASSIGN_OR_RETURN(rw.model.graph, extract_subgraph(full, in_names, out_names));
  Graph& g = rw.model.graph;

  // Declared types: given ones win; the model's known ones stay; the rest come from a fallback run.
  std::vector<std::string> missing;
  std::map<std::string, std::string> origin;
  auto apply = [&](ValueInfo& v, const BoundaryTensor& b, bool needs_shape) {
    if (b.dtype) v.dtype = b.dtype;
    if (b.shape) v.shape = b.shape;
    origin[v.name] = (b.dtype || b.shape) ? "as given" : "from the model";
    // A runtime input needs every dim, or a name for it: an anonymous unknown dim cannot be fed.
    const bool shape_missing = !v.shape || std::any_of(v.shape->begin(), v.shape->end(),
                                                       [](const Dim& d) { return !d.known() && d.param.empty(); });
    if (!v.dtype || (needs_shape && shape_missing)) missing.push_back(v.name);
  };
  for (size_t i = 0; i < g.inputs.size(); ++i) apply(g.inputs[i], in[i], true);
  for (size_t i = 0; i < g.outputs.size(); ++i) apply(g.outputs[i], out[i], false);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& n : missing) names += (names.empty() ? "'" : ", '") + n + "'";
    VN_RETURN_IF_NOT(fallback != nullptr, StatusCode::kInvalidArgument,
                     "shape inference found no dtype or shape for {}; give them as NAME:SHAPE:DTYPE", names);
    Result<TensorMap> values = fallback(missing);
    if (!values.ok()) {
      return values.status().with_context(
          fmt::format("fallback inference for {} (give NAME:SHAPE:DTYPE instead)", names));
    }
    auto fill = [&](ValueInfo& v) {
      if (std::find(missing.begin(), missing.end(), v.name) == missing.end()) return;
      const Tensor* t = values->find(v.name);
      if (!t) return;
      if (!v.dtype) v.dtype = t->dtype();
      if (!v.shape || v.shape->size() != t->shape().size()) {
        v.shape = dims_of(t->shape());
      } else {
        for (size_t d = 0; d < v.shape->size(); ++d) {
          if (!(*v.shape)[d].known() && (*v.shape)[d].param.empty()) (*v.shape)[d] = Dim::of(t->shape()[d]);
        }
      }
      origin[v.name] = "from fallback inference";
    };
    for (ValueInfo& v : g.inputs) fill(v);
    for (ValueInfo& v : g.outputs) fill(v);
  }

  // Intermediate types are recomputed for the subgraph; a failure keeps what was found.
  g.value_info.clear();
  if (Status s = infer_shapes(rw.model); !s.ok()) {
    VN_LOG_WARNING("shape inference of the extracted model: {}", s.to_string());
  }

  rw.changes.push_back(fmt::format("Kept {} of {} node(s)", g.nodes.size(), full.nodes.size()));
  for (const ValueInfo& v : g.inputs) {
    rw.changes.push_back(fmt::format("Input  {}: {} ({})", v.name, type_string(v), origin[v.name]));
  }
  for (const ValueInfo& v : g.outputs) {
    rw.changes.push_back(fmt::format("Output {}: {} ({})", v.name, type_string(v), origin[v.name]));
  }
  return rw;
}

std::vector<std::string> cleanup_graph(Graph& graph) {
  std::unordered_set<std::string> live;
  for (const ValueInfo& v : graph.outputs) live.insert(v.name);
  std::vector<bool> keep(graph.nodes.size(), false);
  // Walk backwards: a node is live when it produces a live tensor; its inputs become live.
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& n = graph.nodes[i];
    keep[i] = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return live.count(o) > 0; });
    if (!keep[i]) continue;
    for (const std::string& name : reads(n)) live.insert(name);
  }
  std::vector<std::string> removed;
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i]) {
      nodes.push_back(std::move(graph.nodes[i]));
    } else {
      removed.push_back(node_label(graph, static_cast<int64_t>(i)));
    }
  }
  graph.nodes = std::move(nodes);
  std::unordered_set<std::string> produced;
  for (const Node& n : graph.nodes) produced.insert(n.outputs.begin(), n.outputs.end());
  std::erase_if(graph.initializers, [&](const Initializer& init) {
    const bool is_input =
        std::any_of(graph.inputs.begin(), graph.inputs.end(), [&](const ValueInfo& v) { return v.name == init.name; });
    return live.count(init.name) == 0 && !is_input;
  });
  std::erase_if(graph.value_info, [&](const ValueInfo& v) { return produced.count(v.name) == 0; });
  return removed;
}

Result<Rewrite> sanitize(const Model& model, const SanitizeOptions& options, FoldCounts* counts) {
  Rewrite rw;
  rw.model = model;
  Graph& g = rw.model.graph;

  if (!options.override_input_shapes.empty()) {
    for (const auto& [name, dims] : options.override_input_shapes) {
      auto it = std::find_if(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == name; });
      VN_RETURN_IF_NOT(it != g.inputs.end(), StatusCode::kNotFound,
                       "--override-input-shapes names '{}', which is not an input of the model", name);
      rw.changes.push_back(fmt::format("Input {}: shape {} -> {}", name,
                                       it->shape ? dims_string(*it->shape) : "(unknown rank)", dims_string(dims)));
      it->shape = dims;
    }
    // Declared output and intermediate shapes follow from the old input shapes; inference
    // recomputes them from the new ones.
    g.value_info.clear();
    for (ValueInfo& v : g.outputs) v.shape.reset();
    VN_RETURN_IF_ERROR(infer_shapes(rw.model));
  }

  if (options.fold_constants) {
    VN_ASSIGN_OR_RETURN(engine::FoldedGraph folded, engine::fold_constants(rw.model, ops::reference_registry()));
    const size_t original = g.nodes.size();
    const std::vector<std::string> folded_labels = labels(g, folded.folded);
    // Outputs of folded nodes that something still reads (a kept node, a subgraph, a graph
    // output) become initializers; the folded nodes go.
    std::unordered_set<std::string> needed;
    for (const ValueInfo& v : g.outputs) needed.insert(v.name);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (folded.is_folded[i]) continue;
      for (const std::string& name : reads(g.nodes[i])) needed.insert(name);
    }
    std::vector<Node> kept;
    std::vector<Initializer> added;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!folded.is_folded[i]) {
        kept.push_back(std::move(g.nodes[i]));
        continue;
      }
      for (const std::string& o : g.nodes[i].outputs) {
        if (o.empty() || needed.count(o) == 0) continue;
        const auto c = folded.constants.find(o);
        if (c != folded.constants.end()) added.push_back({o, c->second});
      }
    }
    g.nodes = std::move(kept);
    for (Initializer& init : added) g.initializers.push_back(std::move(init));
    // Weights read only by folded nodes are dead now; the folded nodes' value_info describes
    // initializers, which carry their own types.
    std::unordered_set<std::string> used;
    for (const ValueInfo& v : g.outputs) used.insert(v.name);
    for (const Node& n : g.nodes) {
      for (const std::string& name : reads(n)) used.insert(name);
    }
    const size_t before_inits = g.initializers.size();
    std::erase_if(g.initializers, [&](const Initializer& init) {
      const bool is_input =
          std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == init.name; });
      return used.count(init.name) == 0 && !is_input;
    });
    std::unordered_set<std::string> produced;
    for (const Node& n : g.nodes) produced.insert(n.outputs.begin(), n.outputs.end());
    std::erase_if(g.value_info, [&](const ValueInfo& v) { return produced.count(v.name) == 0; });
    if (counts) *counts = FoldCounts{original, g.nodes.size(), folded_labels};
    rw.changes.push_back(fmt::format("Folded {} node(s){}{}", folded_labels.size(), folded_labels.empty() ? "" : ": ",
                                     fmt::join(folded_labels, ", ")));
    if (!added.empty() || before_inits != g.initializers.size()) {
      rw.changes.push_back(fmt::format("Initializers: {} added from folding, {} no longer read removed", added.size(),
                                       before_inits - g.initializers.size()));
    }
  }

  if (options.cleanup) {
    const std::vector<std::string> removed = cleanup_graph(g);
    rw.changes.push_back(fmt::format("Cleanup removed {} node(s){}{}", removed.size(), removed.empty() ? "" : ": ",
                                     fmt::join(removed, ", ")));
  }

  if (options.toposort) {
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g));
    size_t moved = 0;
    for (size_t i = 0; i < order.size(); ++i) moved += order[i] != static_cast<int64_t>(i) ? 1 : 0;
    VN_RETURN_IF_ERROR(toposort(g));
    rw.changes.push_back(moved == 0 ? std::string("Toposort: already in topological order")
                                    : fmt::format("Toposort: {} node(s) moved", moved));
  }
  return rw;
}

}  // namespace vn::surgeon
