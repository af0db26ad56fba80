// SPDX-License-Identifier: Apache-2.0
#include "core/engine/fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/engine/native_ops.h"
#include "core/ir/topo.h"

namespace vn::engine {
namespace {

bool is_op(const Node& node, std::string_view op) { return is_default_domain(node.domain) && node.op_type == op; }

/// A matched activation: the nodes it spans, its output and the tensors it hides besides its input.
struct ActivationMatch {
  Activation activation;
  std::vector<int64_t> nodes;
  std::string output;
  std::vector<std::string> hidden;
};

/// The fusion state over one graph.
class Fuser {
 public:
  Fuser(const Model& model, const FoldedGraph& folded, const std::vector<std::string>& marked)
      : model_(model),
        g_(model.graph),
        folded_(folded),
        marked_(marked.begin(), marked.end()),
        assigned_(g_.nodes.size(), false),
        native_(g_.nodes.size(), false) {
    for (const ValueInfo& v : g_.inputs) infos_.emplace(v.name, &v);
    for (const ValueInfo& v : g_.value_info) infos_.emplace(v.name, &v);
    for (const ValueInfo& v : g_.outputs) infos_.emplace(v.name, &v);
    for (size_t i = 0; i < g_.nodes.size(); ++i) native_[i] = runs_natively(g_.nodes[i], model.opset());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (folded_.is_folded[i]) continue;
      const Node& n = g_.nodes[i];
      for (const std::string& in : n.inputs) {
        if (!in.empty()) add_consumer(in, static_cast<int64_t>(i));
      }
      for (const std::string& in : node_implicit_inputs(n)) add_consumer(in, static_cast<int64_t>(i));
    }
  }

  Result<LayerGraph> run() {
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(g_));
    for (int64_t index : order) {
      if (folded_.is_folded[static_cast<size_t>(index)] || assigned_[static_cast<size_t>(index)]) continue;
      visit(index);
    }
    return finish(order);
  }

 private:
  // ---- Graph queries ---------------------------------------------------------------------------

  void add_consumer(const std::string& name, int64_t node) {
    std::vector<int64_t>& c = consumers_[name];
    if (std::find(c.begin(), c.end(), node) == c.end()) c.push_back(node);
  }

  const Node& node(int64_t i) const { return g_.nodes[static_cast<size_t>(i)]; }

  /// A node of op type `op` that the engine's layers may run (native_ops.h); every pattern
  /// matches through this, so a node they cannot run stays out of every fused layer.
  bool is_op(const Node& n, std::string_view op) const {
    return engine::is_op(n, op) && native_[static_cast<size_t>(&n - g_.nodes.data())];
  }

  const std::vector<int64_t>& consumers(const std::string& name) const {
    static const std::vector<int64_t> kNone;
    auto it = consumers_.find(name);
    return it == consumers_.end() ? kNone : it->second;
  }

  bool is_constant(const std::string& name) const { return !name.empty() && folded_.constants.count(name) > 0; }
  const Tensor* constant(const std::string& name) const {
    auto it = folded_.constants.find(name);
    return it == folded_.constants.end() ? nullptr : &it->second;
  }
  bool is_marked(const std::string& name) const { return marked_.count(name) > 0; }

  /// The single live, unassigned reader of `name`, or -1.
  int64_t sole_consumer(const std::string& name) const {
    const std::vector<int64_t>& c = consumers(name);
    if (c.size() != 1 || assigned_[static_cast<size_t>(c[0])]) return -1;
    return c[0];
  }

  /// True when every reader of `name` is in `nodes` (so hiding it inside the layer is possible).
  bool readers_within(const std::string& name, const std::vector<int64_t>& nodes) const {
    for (int64_t c : consumers(name)) {
      if (std::find(nodes.begin(), nodes.end(), c) == nodes.end()) return false;
    }
    return true;
  }

  std::optional<Shape> static_shape(const std::string& name) const {
    if (const Tensor* t = constant(name)) return t->shape();
    auto it = infos_.find(name);
    if (it == infos_.end() || !it->second->has_static_shape()) return std::nullopt;
    return it->second->static_shape();
  }

  std::optional<size_t> known_rank(const std::string& name) const {
    if (const Tensor* t = constant(name)) return t->shape().size();
    auto it = infos_.find(name);
    if (it == infos_.end() || !it->second->shape) return std::nullopt;
    return it->second->shape->size();
  }

  /// The value of a constant scalar (any shape of one element), or nullopt.
  std::optional<double> scalar(const std::string& name) const {
    const Tensor* t = constant(name);
    if (!t || t->numel() != 1 || !dtype_is_float(t->dtype())) return std::nullopt;
    Result<std::vector<double>> v = tensor_to_doubles(*t);
    if (!v.ok()) return std::nullopt;
    return (*v)[0];
  }

  /// The other input of a binary node whose input `name` is one of its two inputs.
  std::string other_input(const Node& n, const std::string& name) const {
    if (n.inputs.size() != 2) return {};
    if (n.inputs[0] == name) return n.inputs[1];
    if (n.inputs[1] == name) return n.inputs[0];
    return {};
  }

  int64_t attr_int(const Node& n, std::string_view name, int64_t fallback) const {
    const Attribute* a = n.attr(name);
    return a && a->type == AttrType::kInt ? a->i : fallback;
  }
  float attr_float(const Node& n, std::string_view name, float fallback) const {
    const Attribute* a = n.attr(name);
    return a && a->type == AttrType::kFloat ? a->f : fallback;
  }

  std::string label(int64_t i) const { return node_label(g_, i); }

  // ---- Recording -------------------------------------------------------------------------------

  void prevent(std::string fusion, const std::vector<int64_t>& nodes, const std::string& tensor) {
    PreventedFusion p;
    p.fusion = std::move(fusion);
    for (int64_t n : nodes) p.nodes.push_back(label(n));
    p.tensor = tensor;
    prevented_.push_back(std::move(p));
  }

  void add_layer(LayerSpec spec) {
    for (int64_t n : spec.nodes) assigned_[static_cast<size_t>(n)] = true;
    specs_.push_back(std::move(spec));
  }

  // ---- Activations -----------------------------------------------------------------------------

  /// A single-node activation reading `x`, or nullopt.
  std::optional<Activation> single_activation(const Node& n, bool epilogue) const {
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

  /// x * Sigmoid(x) starting at the Sigmoid node `sig` reading `x`.
  std::optional<ActivationMatch> match_silu(int64_t sig, const std::string& x) const {
    const Node& s = node(sig);
    if (!is_op(s, "Sigmoid") || s.inputs.size() != 1 || s.inputs[0] != x || s.outputs.empty()) return std::nullopt;
    const int64_t mul = sole_consumer(s.outputs[0]);
    if (mul < 0 || !is_op(node(mul), "Mul") || other_input(node(mul), s.outputs[0]) != x) return std::nullopt;
    return ActivationMatch{{ActivationFn::kSiLU}, {sig, mul}, node(mul).outputs[0], {s.outputs[0]}};
  }

  /// PyTorch's erf GELU starting at the Div (by sqrt 2) or Mul (by 1/sqrt 2) node `first` reading x.
  std::optional<ActivationMatch> match_gelu(int64_t first, const std::string& x) const {
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

  /// An activation reading `x` that can be fused after a product whose output is `x`: every
  /// reader of x must belong to the activation.
  std::optional<ActivationMatch> match_epilogue_activation(const std::string& x) const {
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

  // ---- Products: Conv, Gemm, MatMul ------------------------------------------------------------

  /// True when constant `bias` adds one value per output channel (Conv: axis 1 of a rank-`rank`
  /// output) or per column (Gemm/MatMul: the last axis) of `channels` entries.
  bool is_channel_bias(const std::string& bias, bool conv, size_t rank, int64_t channels) const {
    const Tensor* b = constant(bias);
    if (!b || b->dtype() != DType::kFloat32 || b->rank() > static_cast<int64_t>(rank)) return false;
    if (b->numel() == 1) return true;
    const Shape& s = b->shape();
    // Right-align the bias against the output: exactly one dim may differ from 1.
    const size_t lead = rank - s.size();
    const size_t axis = conv ? 1 : rank - 1;
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t out_axis = lead + i;
      if (out_axis == axis) {
        if (s[i] != channels) return false;
      } else if (s[i] != 1) {
        return false;
      }
    }
    return axis >= lead;
  }

  void fuse_product(int64_t anchor) {
    const Node& a = node(anchor);
    const bool conv = is_op(a, "Conv");
    LayerSpec spec;
    spec.kind = conv ? LayerKind::kConv : LayerKind::kGemm;
    spec.nodes = {anchor};
    const std::string anchor_op = a.op_type;

    // Output rank and channel count, for bias checks.
    std::optional<size_t> rank;
    int64_t channels = -1;
    if (conv) {
      const Tensor* w = constant(a.inputs[1]);
      rank = w->shape().size();
      channels = w->dim(0);
    } else if (is_op(a, "Gemm")) {
      rank = 2;
      if (std::optional<Shape> b = static_shape(a.inputs[1]); b && b->size() == 2) {
        channels = attr_int(a, "transB", 0) != 0 ? (*b)[0] : (*b)[1];
      }
    } else {
      rank = known_rank(a.outputs[0]);
      if (std::optional<Shape> b = static_shape(a.inputs[1]); b && b->size() >= 2) channels = b->back();
    }

    std::string t = a.outputs[0];
    int stage = 0;  // 0: BatchNormalization allowed, 1: biases, 2: residual, 3: activation, 4: done
    while (stage < 4) {
      const int64_t c = sole_consumer(t);
      std::string fusion;
      if (c >= 0 && !node(c).outputs.empty()) {
        const Node& n = node(c);
        if (stage == 0 && conv && is_op(n, "BatchNormalization") && n.inputs.size() >= 5 && n.inputs[0] == t &&
            std::count_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); }) == 1 &&
            attr_int(n, "training_mode", 0) == 0 && is_constant(n.inputs[1]) && is_constant(n.inputs[2]) &&
            is_constant(n.inputs[3]) && is_constant(n.inputs[4])) {
          fusion = "Conv+BatchNormalization";
          if (!is_marked(t)) spec.epilogue.batch_norm = c;
          stage = 1;
        } else if (stage <= 1 && is_op(n, "Add") && rank && channels > 0 &&
                   is_channel_bias(other_input(n, t), conv, *rank, channels)) {
          fusion = anchor_op + "+bias";
          if (!is_marked(t)) spec.epilogue.biases.push_back(other_input(n, t));
          stage = 1;
        } else if (stage <= 2 && is_op(n, "Add")) {
          const std::string r = other_input(n, t);
          const std::optional<Shape> rs = r.empty() || is_constant(r) ? std::nullopt : static_shape(r);
          const std::optional<Shape> ts = static_shape(t);
          if (r != t && rs && ts && *rs == *ts) {
            fusion = anchor_op + "+residual Add";
            if (!is_marked(t)) spec.epilogue.residual = r;
            stage = 3;
          }
        }
        if (!fusion.empty()) {
          if (is_marked(t)) {
            std::vector<int64_t> nodes = spec.nodes;
            nodes.push_back(c);
            prevent(fusion, nodes, t);
            break;
          }
          spec.nodes.push_back(c);
          spec.hidden.push_back(t);
          t = n.outputs[0];
          continue;
        }
      }
      if (std::optional<ActivationMatch> m = match_epilogue_activation(t)) {
        std::vector<int64_t> nodes = spec.nodes;
        nodes.insert(nodes.end(), m->nodes.begin(), m->nodes.end());
        std::string blocked = is_marked(t) ? t : "";
        for (const std::string& h : m->hidden) {
          if (blocked.empty() && is_marked(h)) blocked = h;
        }
        if (!blocked.empty()) {
          prevent(fmt::format("{}+{}", anchor_op, activation_name(m->activation.fn)), nodes, blocked);
          break;
        }
        spec.nodes = std::move(nodes);
        spec.hidden.push_back(t);
        spec.hidden.insert(spec.hidden.end(), m->hidden.begin(), m->hidden.end());
        spec.epilogue.activation = m->activation;
        t = m->output;
      }
      break;
    }
    add_layer(std::move(spec));
  }

  // ---- LayerNorm -------------------------------------------------------------------------------

  /// The single reduced axis of a ReduceMean if it is the last one and keepdims is set.
  bool reduces_last_axis(const Node& n) const {
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

  /// ReduceMean(x) -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div (-> Mul scale -> Add bias).
  bool fuse_layernorm_pattern(int64_t mean1) {
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
        prevent("LayerNorm", nodes, h);
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
        prevent("LayerNorm+scale", with, t);
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
            prevent("LayerNorm+bias", with, t);
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

  // ---- Dispatch --------------------------------------------------------------------------------

  void single(int64_t index, LayerKind kind) {
    LayerSpec spec;
    spec.kind = kind;
    spec.nodes = {index};
    add_layer(std::move(spec));
  }

  /// A standalone activation layer for `m`, unless a hidden tensor is marked (then the first
  /// node runs alone and the fusion is recorded as prevented).
  void activation_layer(int64_t index, std::optional<ActivationMatch> m) {
    if (m) {
      for (const std::string& h : m->hidden) {
        if (is_marked(h)) {
          prevent(std::string(activation_name(m->activation.fn)), m->nodes, h);
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

  void visit(int64_t index) {
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
          prevent("Add+Relu", {index, relu}, n.outputs[0]);
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

  // ---- Layer boundaries and order --------------------------------------------------------------

  Result<LayerGraph> finish(const std::vector<int64_t>& order) {
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

  const Model& model_;
  const Graph& g_;
  const FoldedGraph& folded_;
  std::unordered_set<std::string> marked_;
  std::vector<bool> assigned_;
  std::vector<bool> native_;  // per node: runs_natively
  std::unordered_map<std::string, const ValueInfo*> infos_;
  std::unordered_map<std::string, std::vector<int64_t>> consumers_;
  std::vector<LayerSpec> specs_;
  std::vector<PreventedFusion> prevented_;
};

}  // namespace

std::string PreventedFusion::describe() const {
  std::string members;
  for (const std::string& n : nodes) members += (members.empty() ? "" : ", ") + n;
  return fmt::format("{} of {}: prevented by marked output {}", fusion, members, tensor);
}

Result<LayerGraph> fuse_layers(const Model& model, const FoldedGraph& folded, const std::vector<std::string>& marked) {
  return Fuser(model, folded, marked).run();
}

}  // namespace vn::engine
