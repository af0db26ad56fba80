// SPDX-License-Identifier: Apache-2.0
// The builder's fusion state over one graph (fuse_layers, fusion.h), shared by the files of its
// pattern families: activations (fusion_activation.cpp), Conv/Gemm/MatMul epilogues
// (fusion_product.cpp), LayerNorm (fusion_layernorm.cpp), and the dispatch and layer order
// (fusion.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "core/engine/fusion.h"
#include "core/engine/fusion_list.h"
#include "core/engine/native_ops.h"
#include "core/ir/topo.h"

namespace vn::engine {

inline bool is_op(const Node& node, std::string_view op) { return is_default_domain(node.domain) && node.op_type == op; }

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

  /// Groups the graph into layers (fuse_layers).
  Result<LayerGraph> run();

 private:

  // ---- Graph queries ----------------------------------------------------------------------------

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

  // ---- Recording --------------------------------------------------------------------------------

  /// Records that `fusion` of `nodes` did not happen because `tensor` is marked; `product` and
  /// `activation` fill the `{}` of its name.
  void prevent(Fusion fusion, const std::vector<int64_t>& nodes, const std::string& tensor,
               std::string_view product = {}, std::string_view activation = {}) {
    PreventedFusion p;
    p.fusion = fmt::format(fmt::runtime(fusion_info(fusion).name), product, activation);
    for (int64_t n : nodes) p.nodes.push_back(label(n));
    p.tensor = tensor;
    prevented_.push_back(std::move(p));
  }

  void add_layer(LayerSpec spec) {
    for (int64_t n : spec.nodes) assigned_[static_cast<size_t>(n)] = true;
    specs_.push_back(std::move(spec));
  }

  // ---- Activations --------------------------------------------------------------------------

  /// A single-node activation reading `x`, or nullopt.
  std::optional<Activation> single_activation(const Node& n, bool epilogue) const;

  /// x * Sigmoid(x) starting at the Sigmoid node `sig` reading `x`.
  std::optional<ActivationMatch> match_silu(int64_t sig, const std::string& x) const;

  /// PyTorch's erf GELU starting at the Div (by sqrt 2) or Mul (by 1/sqrt 2) node `first` reading x.
  std::optional<ActivationMatch> match_gelu(int64_t first, const std::string& x) const;

  /// An activation reading `x` that can be fused after a product whose output is `x`: every
  /// reader of x must belong to the activation.
  std::optional<ActivationMatch> match_epilogue_activation(const std::string& x) const;

  // ---- Products: Conv, Gemm, MatMul ---------------------------------------------------------

  /// True when constant `bias` adds one value per output channel (Conv: axis 1 of a rank-`rank`
  /// output) or per column (Gemm/MatMul: the last axis) of `channels` entries.
  bool is_channel_bias(const std::string& bias, bool conv, size_t rank, int64_t channels) const;

  void fuse_product(int64_t anchor);

  // ---- LayerNorm ----------------------------------------------------------------------------

  /// The single reduced axis of a ReduceMean if it is the last one and keepdims is set.
  bool reduces_last_axis(const Node& n) const;

  /// ReduceMean(x) -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div (-> Mul scale -> Add bias).
  bool fuse_layernorm_pattern(int64_t mean1);

  // ---- Dispatch -----------------------------------------------------------------------------

  void single(int64_t index, LayerKind kind);

  /// A standalone activation layer for `m`, unless a hidden tensor is marked (then the first
  /// node runs alone and the fusion is recorded as prevented).
  void activation_layer(int64_t index, std::optional<ActivationMatch> m);

  void visit(int64_t index);

  // ---- Layer boundaries and order -----------------------------------------------------------

  Result<LayerGraph> finish(const std::vector<int64_t>& order);


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

}  // namespace vn::engine
