// SPDX-License-Identifier: Apache-2.0
// Activation patterns of the fuser: single-node activations, SiLU (x * Sigmoid(x)) and PyTorch's
// erf GELU, alone or as the epilogue of a product.
#include <cmath>

#include "core/engine/fuser.h"

namespace vn::engine {

std::optional<Activation> Fuser::single_activation(const Node& n, bool epilogue) const {
  if (!is_op(n, n.op_type) || n.inputs.empty()) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu") return Activation{ActivationFn::kRelu};
  if (op == "Sigmoid") return Activation{ActivationFn::kSigmoid};
  if (op == "Tanh") return Activation{ActivationFn::kTanh};
  if (!epilogue) {
    if (op == "Exp") return Activation{ActivationFn::kExp};
    if (op == "Erf") return Activation{ActivationFn::kErf};
    return std::nullopt;
  }
  if (op == "LeakyRelu") return Activation{ActivationFn::kLeakyRelu, attr_float(n, "alpha", 0.01f)};
  if (op == "HardSigmoid") {
    return Activation{ActivationFn::kHardSigmoid, attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)};
  }
  if (op == "HardSwish") return Activation{ActivationFn::kHardSwish};
  if (op == "Clip") {
    float lo = -INFINITY, hi = INFINITY;
    if (model_.opset() < 11) {
      lo = attr_float(n, "min", lo);
      hi = attr_float(n, "max", hi);
    } else {
      for (size_t k = 1; k <= 2 && k < n.inputs.size(); ++k) {
        if (n.inputs[k].empty()) continue;
        std::optional<double> v = scalar(n.inputs[k]);
        if (!v) return std::nullopt;
        (k == 1 ? lo : hi) = static_cast<float>(*v);
      }
    }
    return Activation{ActivationFn::kClip, lo, hi};
  }
  return std::nullopt;
}

std::optional<ActivationMatch> Fuser::match_silu(int64_t sig, const std::string& x) const {
  const Node& s = node(sig);
  if (!is_op(s, "Sigmoid") || s.inputs.size() != 1 || s.inputs[0] != x || s.outputs.empty()) return std::nullopt;
  const int64_t mul = sole_consumer(s.outputs[0]);
  if (mul < 0 || !is_op(node(mul), "Mul") || other_input(node(mul), s.outputs[0]) != x) return std::nullopt;
  return ActivationMatch{{ActivationFn::kSiLU}, {sig, mul}, node(mul).outputs[0], {s.outputs[0]}};
}

std::optional<ActivationMatch> Fuser::match_gelu(int64_t first, const std::string& x) const {
  const Node& d = node(first);
  if (d.inputs.size() != 2 || d.inputs[0] != x || d.outputs.empty()) return std::nullopt;
  const std::optional<double> k = scalar(d.inputs[1]);
  if (!k) return std::nullopt;
  const bool div = is_op(d, "Div") && std::abs(*k - std::sqrt(2.0)) < 1e-3;
  const bool mul = is_op(d, "Mul") && std::abs(*k - std::sqrt(0.5)) < 1e-3;
  if (!div && !mul) return std::nullopt;
  ActivationMatch m{{ActivationFn::kGelu}, {first}, {}, {}};
  std::string t = d.outputs[0];
  auto step = [&](std::string_view op, auto&& accept) -> bool {
    const int64_t c = sole_consumer(t);
    if (c < 0 || !is_op(node(c), op) || node(c).outputs.empty() || !accept(node(c))) return false;
    m.hidden.push_back(t);
    m.nodes.push_back(c);
    t = node(c).outputs[0];
    return true;
  };
  const bool ok = step("Erf", [](const Node&) { return true; }) &&
                  step("Add",
                       [&](const Node& n) {
                         const std::optional<double> one = scalar(other_input(n, t));
                         return one && *one == 1.0;
                       }) &&
                  step("Mul", [&](const Node& n) { return other_input(n, t) == x; }) &&
                  step("Mul", [&](const Node& n) {
                    const std::optional<double> half = scalar(other_input(n, t));
                    return half && *half == 0.5;
                  });
  if (!ok) return std::nullopt;
  m.output = t;
  return m;
}

std::optional<ActivationMatch> Fuser::match_epilogue_activation(const std::string& x) const {
  const std::vector<int64_t>& readers = consumers(x);
  for (int64_t r : readers) {
    if (assigned_[static_cast<size_t>(r)]) return std::nullopt;
  }
  if (readers.size() == 1) {
    const Node& n = node(readers[0]);
    if (n.inputs.empty() || n.inputs[0] != x || n.outputs.empty()) return std::nullopt;
    if (std::optional<Activation> a = single_activation(n, true)) {
      return ActivationMatch{*a, {readers[0]}, n.outputs[0], {}};
    }
    return std::nullopt;
  }
  if (readers.size() != 2) return std::nullopt;
  for (int64_t r : readers) {
    std::optional<ActivationMatch> m = match_silu(r, x);
    if (!m) m = match_gelu(r, x);
    if (m && readers_within(x, m->nodes)) return m;
  }
  return std::nullopt;
}

}  // namespace vn::engine
