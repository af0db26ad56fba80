// SPDX-License-Identifier: Apache-2.0
#include "views/report/model_report.h"

#include <unordered_map>

#include <fmt/format.h>

#include "views/report/tensor_report.h"

namespace vn::views {
namespace {

std::string typed(const std::string& name, const std::unordered_map<std::string, const ValueInfo*>& types,
                  const Graph& graph) {
  if (name.empty()) return "<omitted>";
  if (auto it = types.find(name); it != types.end()) {
    const ValueInfo& v = *it->second;
    const std::string t = v.type_string();
    const size_t space = t.find(' ');
    return fmt::format("{} [dtype={}, shape={}]", name, t.substr(0, space), t.substr(space + 1));
  }
  if (const Initializer* init = graph.find_initializer(name)) {
    return fmt::format("{} [dtype={}, shape={}] (initializer)", name, dtype_name(init->tensor.dtype()),
                       shape_to_string(init->tensor.shape()));
  }
  return name + " [dtype=?, shape=?]";
}

std::string attr_value(const Attribute& a) {
  auto list = [](const auto& v, auto fmt_one) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt_one(v[i]);
    return s + "]";
  };
  switch (a.type) {
    case AttrType::kUndefined: return "<undefined>";
    case AttrType::kFloat: return fmt::format("{:g}", a.f);
    case AttrType::kInt: return std::to_string(a.i);
    case AttrType::kString: return "'" + a.s + "'";
    case AttrType::kTensor:
      return fmt::format("Tensor [dtype={}, shape={}]", dtype_name(a.t.dtype()), shape_to_string(a.t.shape()));
    case AttrType::kGraph: return fmt::format("Graph '{}' ({} nodes)", a.g ? a.g->name : "", a.g ? a.g->nodes.size() : 0);
    case AttrType::kFloats: return list(a.floats, [](float f) { return fmt::format("{:g}", f); });
    case AttrType::kInts: return list(a.ints, [](int64_t i) { return std::to_string(i); });
    case AttrType::kStrings: return list(a.strings, [](const std::string& s) { return "'" + s + "'"; });
    case AttrType::kTensors: return fmt::format("{} tensors", a.tensors.size());
    case AttrType::kGraphs: return fmt::format("{} graphs", a.graphs.size());
  }
  return "?";
}

}  // namespace

std::string format_model_report(const Model& model, const ModelReportOptions& options) {
  const Graph& g = model.graph;
  std::unordered_map<std::string, const ValueInfo*> types;
  for (const auto* list : {&g.value_info, &g.outputs, &g.inputs}) {
    for (const ValueInfo& v : *list) {
      if (v.dtype || v.shape) types[v.name] = &v;
    }
  }
  std::string out = "==== ONNX Model ====\n";
  std::string opsets;
  for (const OpsetId& o : model.opset_imports) {
    opsets += fmt::format("{}{}:{}", opsets.empty() ? "" : ", ", o.domain.empty() ? "ai.onnx" : o.domain, o.version);
  }
  out += fmt::format("    Name: {} | Opsets: {} | IR version: {} | Producer: {} {}\n", g.name, opsets,
                     model.ir_version, model.producer_name, model.producer_version);

  const auto runtime_inputs = g.runtime_inputs();
  out += fmt::format("\n    ---- {} Graph Input(s) ----\n", runtime_inputs.size());
  for (const ValueInfo* v : runtime_inputs) out += "    " + typed(v->name, types, g) + "\n";
  out += fmt::format("\n    ---- {} Graph Output(s) ----\n", g.outputs.size());
  for (const ValueInfo& v : g.outputs) out += "    " + typed(v.name, types, g) + "\n";

  size_t bytes = 0;
  for (const Initializer& i : g.initializers) bytes += i.tensor.nbytes();
  out += fmt::format("\n    ---- {} Initializer(s), {:.2f} MiB ----\n", g.initializers.size(),
                     static_cast<double>(bytes) / (1024.0 * 1024.0));
  if (options.show_weights) {
    for (const Initializer& i : g.initializers) out += "    " + format_tensor_summary(i.name, i.tensor) + "\n";
  }

  out += fmt::format("\n    ---- {} Node(s) ----\n", g.nodes.size());
  if (options.show_layers || options.show_attrs) {
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      const std::string domain = is_default_domain(node.domain) ? "" : node.domain + ".";
      out += fmt::format("    Node {} | {} [Op: {}{}]\n", n, node.name, domain, node.op_type);
      std::string ins, outs;
      for (const std::string& i : node.inputs) ins += (ins.empty() ? "" : ",\n         ") + typed(i, types, g);
      for (const std::string& o : node.outputs) outs += (outs.empty() ? "" : ",\n         ") + typed(o, types, g);
      out += fmt::format("        {{{}}}\n         -> {{{}}}\n", ins, outs);
      if (options.show_attrs && !node.attributes.empty()) {
        out += "        ---- Attributes ----\n";
        for (const Attribute& a : node.attributes) out += fmt::format("        {} = {}\n", a.name, attr_value(a));
      }
    }
  }
  return out;
}

}  // namespace vn::views
