// SPDX-License-Identifier: Apache-2.0
// The LayerNorm pattern of the fuser: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div over the
// last axis, with an optional constant scale and bias, as one layer.
#include <cmath>

#include "core/engine/fuser.h"

namespace vn::engine {

bool Fuser::reduces_last_axis(const Node& n) const {
  if (!is_op(n, "ReduceMean") || attr_int(n, "keepdims", 1) != 1 || n.inputs.empty() || n.outputs.empty()) {
    return false;
  }
  std::vector<int64_t> axes;
  if (const Attribute* a = n.attr("axes"); a && a->type == AttrType::kInts) {
    axes = a->ints;
  } else if (n.inputs.size() > 1 && is_constant(n.inputs[1])) {
    Result<std::vector<int64_t>> v = tensor_to_int64s(*constant(n.inputs[1]));
    if (v.ok()) axes = *v;
  }
  if (axes.size() != 1) return false;
  if (axes[0] == -1) return true;
  const std::optional<size_t> rank = known_rank(n.inputs[0]);
  return rank && axes[0] == static_cast<int64_t>(*rank) - 1;
}

bool Fuser::fuse_layernorm_pattern(int64_t mean1) {
  const Node& r1 = node(mean1);
  if (!reduces_last_axis(r1)) return false;
  const std::string x = r1.inputs[0];
  std::vector<int64_t> nodes{mean1};
  std::vector<std::string> hidden;
  auto next = [&](const std::string& t, std::string_view op) -> int64_t {
    const int64_t c = sole_consumer(t);
    return c >= 0 && is_op(node(c), op) && !node(c).outputs.empty() ? c : -1;
  };
  const int64_t sub = next(r1.outputs[0], "Sub");
  if (sub < 0 || node(sub).inputs[0] != x || node(sub).inputs[1] != r1.outputs[0]) return false;
  const std::string d = node(sub).outputs[0];
  int64_t pow = -1, div = -1;
  for (int64_t c : consumers(d)) {
    const Node& n = node(c);
    if (assigned_[static_cast<size_t>(c)] || n.outputs.empty()) return false;
    if (is_op(n, "Pow") && n.inputs[0] == d && scalar(n.inputs[1]) == 2.0) {
      pow = c;
    } else if (is_op(n, "Mul") && n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d) {
      pow = c;
    } else if (is_op(n, "Div") && n.inputs[0] == d) {
      div = c;
    } else {
      return false;
    }
  }
  if (pow < 0 || div < 0 || consumers(d).size() != 2) return false;
  const int64_t r2 = next(node(pow).outputs[0], "ReduceMean");
  if (r2 < 0 || !reduces_last_axis(node(r2))) return false;
  const int64_t add = next(node(r2).outputs[0], "Add");
  if (add < 0) return false;
  const std::optional<double> eps = scalar(other_input(node(add), node(r2).outputs[0]));
  const int64_t sqrt = next(node(add).outputs[0], "Sqrt");
  if (!eps || sqrt < 0 || sole_consumer(node(sqrt).outputs[0]) != div ||
      node(div).inputs[1] != node(sqrt).outputs[0]) {
    return false;
  }
  nodes.insert(nodes.end(), {sub, pow, r2, add, sqrt, div});
  hidden = {r1.outputs[0], d, node(pow).outputs[0], node(r2).outputs[0], node(add).outputs[0], node(sqrt).outputs[0]};
  for (const std::string& h : hidden) {
    if (is_marked(h)) {
      prevent(Fusion::kLayerNorm, nodes, h);
      return false;
    }
  }
  LayerSpec spec;
  spec.kind = LayerKind::kLayerNorm;
  spec.norm.axis = -1;
  spec.norm.epsilon = static_cast<float>(*eps);
  std::string t = node(div).outputs[0];
  // The affine part: Mul by a constant scale, then Add of a constant bias.
  const int64_t mul = next(t, "Mul");
  if (mul >= 0 && is_constant(other_input(node(mul), t))) {
    if (is_marked(t)) {
      std::vector<int64_t> with = nodes;
      with.push_back(mul);
      prevent(Fusion::kLayerNormScale, with, t);
    } else {
      spec.norm.scale = other_input(node(mul), t);
      nodes.push_back(mul);
      hidden.push_back(t);
      t = node(mul).outputs[0];
      const int64_t bias = next(t, "Add");
      if (bias >= 0 && is_constant(other_input(node(bias), t))) {
        if (is_marked(t)) {
          std::vector<int64_t> with = nodes;
          with.push_back(bias);
          prevent(Fusion::kLayerNormBias, with, t);
        } else {
          spec.norm.bias = other_input(node(bias), t);
          nodes.push_back(bias);
          hidden.push_back(t);
        }
      }
    }
  }
  spec.nodes = std::move(nodes);
  spec.hidden = std::move(hidden);
  add_layer(std::move(spec));
  return true;
}

}  // namespace vn::engine
