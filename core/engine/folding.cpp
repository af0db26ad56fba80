// SPDX-License-Identifier: Apache-2.0
#include "core/engine/folding.h"

#include <string_view>

#include "core/ir/topo.h"
#include "core/ops/kernel_context.h"

namespace vn::engine {
namespace {

bool draws_random_numbers(const Node& node) {
  static constexpr std::string_view kRandom[] = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                 "RandomUniformLike", "Bernoulli",     "Multinomial"};
  if (!is_default_domain(node.domain)) return false;
  for (std::string_view op : kRandom) {
    if (node.op_type == op) return true;
  }
  return false;
}

bool has_subgraph(const Node& node) {
  for (const Attribute& a : node.attributes) {
    if (a.type == AttrType::kGraph || a.type == AttrType::kGraphs) return true;
  }
  return false;
}

}  // namespace

Result<FoldedGraph> fold_constants(const Model& model, const ops::OpRegistry& registry) {
  const Graph& g = model.graph;
  FoldedGraph out;
  out.is_folded.assign(g.nodes.size(), false);
  for (const Initializer& init : g.initializers) out.constants.emplace(init.name, init.tensor);
  // Initializers are constants even when also declared as graph inputs (IR < 4): neither backend
  // takes feeds for them (Graph::runtime_inputs).
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g));

  std::vector<const Tensor*> inputs;
  std::vector<Tensor> outputs;
  for (int64_t index : order) {
    const Node& node = g.nodes[static_cast<size_t>(index)];
    if (draws_random_numbers(node) || has_subgraph(node)) continue;
    const int64_t opset = model.opset(node.domain);
    const ops::KernelDef* def = opset >= 0 ? registry.find(node.domain, node.op_type, opset) : nullptr;
    if (!def) continue;
    inputs.assign(node.inputs.size(), nullptr);
    bool constant = true;
    for (size_t i = 0; i < node.inputs.size() && constant; ++i) {
      if (node.inputs[i].empty()) continue;
      auto it = out.constants.find(node.inputs[i]);
      if (it == out.constants.end()) {
        constant = false;
      } else {
        inputs[i] = &it->second;
      }
    }
    if (!constant) continue;
    outputs.assign(node.outputs.size(), Tensor());
    ops::KernelContext ctx(node, index, opset, inputs, outputs, 1);
    Status st = def->fn(ctx);
    if (st.ok()) st = ctx.attr_error();
    // A node its kernel cannot run as the standard says is left to the layer that runs it, which
    // reports why.
    if (st.ok()) st = ops::check_all_read(ctx, def->since_version);
    if (!st.ok()) continue;
    bool complete = true;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].empty() && !outputs[i].defined()) complete = false;
    }
    if (!complete) continue;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].empty()) out.constants[node.outputs[i]] = outputs[i];
    }
    out.is_folded[static_cast<size_t>(index)] = true;
    out.folded.push_back(index);
  }
  return out;
}

}  // namespace vn::engine
