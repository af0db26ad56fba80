// SPDX-License-Identifier: Apache-2.0
// Layer fusion: the dispatch of each node to its pattern family, and the layers' boundaries and
// order.
#include "core/engine/fusion.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/engine/fuser.h"

namespace vn::engine {
namespace {

constexpr FusionInfo kFusions[] = {
#define VN_FUSION(id, name, help) {Fusion::id, name, help},
#include "core/engine/fusions.inc"
#undef VN_FUSION
};

}  // namespace

std::span<const FusionInfo> fusion_table() { return kFusions; }

const FusionInfo& fusion_info(Fusion fusion) { return kFusions[static_cast<size_t>(fusion)]; }

Result<LayerGraph> Fuser::run() {
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g_));
  for (int64_t index : order) {
    if (folded_.is_folded[static_cast<size_t>(index)] || assigned_[static_cast<size_t>(index)]) continue;
    visit(index);
  }
  return finish(order);
}

void Fuser::single(int64_t index, LayerKind kind) {
  LayerSpec spec;
  spec.kind = kind;
  spec.nodes = {index};
  add_layer(std::move(spec));
}

void Fuser::activation_layer(int64_t index, std::optional<ActivationMatch> m) {
  if (m) {
    for (const std::string& h : m->hidden) {
      if (is_marked(h)) {
        prevent(m->activation.fn == ActivationFn::kSiLU ? Fusion::kSiLU : Fusion::kGelu, m->nodes, h);
        m.reset();
        break;
      }
    }
  }
  if (!m) {
    const std::optional<Activation> a = single_activation(node(index), false);
    if (!a) return single(index, LayerKind::kGeneric);
    LayerSpec spec;
    spec.kind = LayerKind::kActivation;
    spec.nodes = {index};
    spec.activation = *a;
    return add_layer(std::move(spec));
  }
  LayerSpec spec;
  spec.kind = LayerKind::kActivation;
  spec.nodes = m->nodes;
  spec.hidden = m->hidden;
  spec.activation = m->activation;
  add_layer(std::move(spec));
}

void Fuser::visit(int64_t index) {
  const Node& n = node(index);
  if (!native_[static_cast<size_t>(index)] || n.outputs.empty() || n.outputs[0].empty())
    return single(index, LayerKind::kGeneric);
  const std::string& op = n.op_type;
  if (op == "Conv" && n.inputs.size() >= 2 && is_constant(n.inputs[1]) && constant(n.inputs[1])->rank() >= 3 &&
      (n.inputs.size() < 3 || n.inputs[2].empty() || is_constant(n.inputs[2]))) {
    return fuse_product(index);
  }
  if (op == "Gemm" && n.inputs.size() >= 2 &&
      (n.inputs.size() < 3 || n.inputs[2].empty() || is_constant(n.inputs[2]))) {
    return fuse_product(index);
  }
  if (op == "MatMul" && n.inputs.size() == 2) return fuse_product(index);
  if (op == "ReduceMean" && fuse_layernorm_pattern(index)) return;
  if (op == "ReduceMean" || op == "ReduceSum") return single(index, LayerKind::kReduce);
  if (op == "LayerNormalization" && n.inputs.size() >= 2 && is_constant(n.inputs[1]) &&
      (n.inputs.size() < 3 || n.inputs[2].empty() || is_constant(n.inputs[2])) &&
      std::all_of(n.outputs.begin() + 1, n.outputs.end(), [](const std::string& o) { return o.empty(); })) {
    LayerSpec spec;
    spec.kind = LayerKind::kLayerNorm;
    spec.nodes = {index};
    spec.norm.axis = attr_int(n, "axis", -1);
    spec.norm.epsilon = attr_float(n, "epsilon", 1e-5f);
    spec.norm.scale = n.inputs[1];
    spec.norm.bias = n.inputs.size() > 2 ? n.inputs[2] : "";
    return add_layer(std::move(spec));
  }
  if (op == "Softmax") return single(index, LayerKind::kSoftmax);
  if (op == "AveragePool" || op == "GlobalAveragePool") return single(index, LayerKind::kPool);
  if (op == "Add" && n.inputs.size() == 2 && !is_constant(n.inputs[0]) && !is_constant(n.inputs[1])) {
    const std::optional<Shape> a = static_shape(n.inputs[0]);
    const std::optional<Shape> b = static_shape(n.inputs[1]);
    const int64_t relu = sole_consumer(n.outputs[0]);
    if (a && b && *a == *b && relu >= 0 && is_op(node(relu), "Relu") && !node(relu).outputs.empty()) {
      if (is_marked(n.outputs[0])) {
        prevent(Fusion::kAddRelu, {index, relu}, n.outputs[0]);
      } else {
        LayerSpec spec;
        spec.kind = LayerKind::kEltwise;
        spec.nodes = {index, relu};
        spec.hidden = {n.outputs[0]};
        return add_layer(std::move(spec));
      }
    }
    return single(index, LayerKind::kGeneric);
  }
  if (op == "Sigmoid" && n.inputs.size() == 1) return activation_layer(index, match_silu(index, n.inputs[0]));
  if ((op == "Div" || op == "Mul") && n.inputs.size() == 2) {
    if (std::optional<ActivationMatch> m = match_gelu(index, n.inputs[0])) return activation_layer(index, m);
    return single(index, LayerKind::kGeneric);
  }
  if (op == "Tanh" || op == "Exp" || op == "Erf") return activation_layer(index, std::nullopt);
  single(index, LayerKind::kGeneric);
}

Result<LayerGraph> Fuser::finish(const std::vector<int64_t>& order) {
  std::vector<size_t> position(g_.nodes.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = i;

  std::unordered_map<std::string, size_t> producer_layer;
  for (size_t li = 0; li < specs_.size(); ++li) {
    LayerSpec& s = specs_[li];
    std::unordered_set<std::string> produced, hidden(s.hidden.begin(), s.hidden.end()), seen;
    std::vector<std::string> labels;
    for (int64_t n : s.nodes) {
      labels.push_back(label(n));
      for (const std::string& out : node(n).outputs) {
        if (!out.empty()) produced.insert(out);
      }
    }
    for (int64_t n : s.nodes) {
      std::vector<std::string> reads = node(n).inputs;
      for (const std::string& in : node_implicit_inputs(node(n))) reads.push_back(in);
      for (const std::string& in : reads) {
        if (in.empty() || produced.count(in) || is_constant(in) || !seen.insert(in).second) continue;
        s.inputs.push_back(in);
      }
      for (const std::string& out : node(n).outputs) {
        if (!out.empty() && !hidden.count(out)) {
          s.outputs.push_back(out);
          producer_layer[out] = li;
        }
      }
    }
    s.name = labels[0];
    for (size_t i = 1; i < labels.size(); ++i) s.name += " + " + labels[i];
  }

  // Kahn's algorithm over layers; among ready layers the one whose anchor comes first in the
  // node order goes first, so unfused graphs keep their order.
  const size_t count = specs_.size();
  std::vector<std::vector<size_t>> users(count);
  std::vector<size_t> pending(count, 0);
  for (size_t li = 0; li < count; ++li) {
    std::unordered_set<size_t> deps;
    for (const std::string& in : specs_[li].inputs) {
      auto it = producer_layer.find(in);
      if (it != producer_layer.end() && it->second != li) deps.insert(it->second);
    }
    pending[li] = deps.size();
    for (size_t d : deps) users[d].push_back(li);
  }
  auto key = [&](size_t li) { return position[static_cast<size_t>(specs_[li].nodes[0])]; };
  auto later = [&](size_t a, size_t b) { return key(a) > key(b); };
  std::vector<size_t> ready;
  for (size_t li = 0; li < count; ++li) {
    if (pending[li] == 0) ready.push_back(li);
  }
  std::make_heap(ready.begin(), ready.end(), later);
  LayerGraph out;
  std::unordered_set<std::string> names;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    const size_t li = ready.back();
    ready.pop_back();
    LayerSpec spec = std::move(specs_[li]);
    // Duplicate node names would make duplicate layer names, and layers are addressed by name.
    if (!names.insert(spec.name).second) {
      spec.name += fmt::format(" (node {})", spec.nodes[0]);
      names.insert(spec.name);
    }
    out.layers.push_back(std::move(spec));
    for (size_t u : users[li]) {
      if (--pending[u] == 0) {
        ready.push_back(u);
        std::push_heap(ready.begin(), ready.end(), later);
      }
    }
  }
  if (out.layers.size() != count) return make_error(StatusCode::kInvalidModel, "the fused layer graph has a cycle");
  out.prevented = std::move(prevented_);
  return out;
}

std::string PreventedFusion::describe() const {
  std::string members;
  for (const std::string& n : nodes) members += (members.empty() ? "" : ", ") + n;
  return fmt::format("{} of {}: prevented by marked output {}", fusion, members, tensor);
}

Result<LayerGraph> fuse_layers(const Model& model, const FoldedGraph& folded, const std::vector<std::string>& marked) {
  return Fuser(model, folded, marked).run();
}

}  // namespace vn::engine
