// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/convert_qdq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/engine/quantize.h"
#include "core/ir/onnx_signature.h"
#include "core/ir/topo.h"
#include "core/surgeon/graph_edit.h"

namespace vn::surgeon {
namespace {

// Weights' largest |value| under reduce_range: 7 bits.
constexpr int32_t kReducedWeightMax = 63;
// The first opset whose DequantizeLinear takes one scale per channel (the `axis` attribute).
constexpr int64_t kPerAxisOpset = 13;
// ONNX's IR version of opset 13.
constexpr int64_t kPerAxisIrVersion = 7;

Attribute int_attr(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

int64_t attr_int(const Node& n, std::string_view name, int64_t fallback) {
  const Attribute* a = n.attr(name);
  return a ? a->i : fallback;
}

float attr_float(const Node& n, std::string_view name, float fallback) {
  const Attribute* a = n.attr(name);
  return a ? a->f : fallback;
}

// Why a node of `graph` (or of its subgraphs) would change meaning from opset `from` to 13.
std::optional<std::string> upgrade_blocker(const Graph& graph, int64_t from,
                                           const std::unordered_map<std::string, ValueInfo>* types) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const std::string where = fmt::format("node '{}'", node_label(graph, static_cast<int64_t>(i)));
    if (is_default_domain(n.domain)) {
      if (std::optional<std::string> why = onnx_opset_upgrade_blocker(n, from, kPerAxisOpset)) {
        return fmt::format("{}: {}", where, *why);
      }
      // Before opset 13 these normalize over the input flattened to 2-D at `axis`; from 13 on, over
      // `axis` alone: the same only for the last axis.
      if (from < kPerAxisOpset && (n.op_type == "Softmax" || n.op_type == "LogSoftmax" || n.op_type == "Hardmax")) {
        std::optional<size_t> rank;
        if (types && !n.inputs.empty()) {
          const auto it = types->find(n.inputs[0]);
          if (it != types->end() && it->second.shape) rank = it->second.shape->size();
        }
        int64_t axis = attr_int(n, "axis", 1);
        if (rank && axis < 0) axis += static_cast<int64_t>(*rank);
        if (!rank || axis != static_cast<int64_t>(*rank) - 1) {
          return fmt::format("{}: {} over axis {} of a flattened input means another thing in opset 13", where,
                             n.op_type, attr_int(n, "axis", 1));
        }
      }
    }
    for (const Attribute& a : n.attributes) {
      std::vector<const Graph*> bodies;
      if (a.g) bodies.push_back(a.g.get());
      for (const auto& g : a.graphs) bodies.push_back(g.get());
      for (const Graph* body : bodies) {
        if (std::optional<std::string> why = upgrade_blocker(*body, from, nullptr)) return where + " body: " + *why;
      }
    }
  }
  return std::nullopt;
}

// The node kinds this converter quantizes: which input holds the weight, the weight's channel
// axis, and whether the output gets a Q/DQ pair.
struct Plan {
  size_t node = 0;
  std::string input;
  std::string weight;
  const Tensor* weight_values = nullptr;
  int64_t axis = 0;                      // -1: a single scale
  std::string bias;                      // the 1-D bias quantized to int32, or ""
  const Tensor* bias_values = nullptr;
  std::string output;                    // the output quantized after the node, or ""
};

class Quantizer {
 public:
  Quantizer(const Model& model, const engine::ScaleTable& scales, std::unordered_map<std::string, ValueInfo> types,
            bool reduce_range)
      : model_(model),
        g_(model.graph),
        index_(model.graph),
        scales_(scales),
        types_(std::move(types)),
        names_(model),
        weight_max_(reduce_range ? kReducedWeightMax : engine::kInt8Max) {}

  Result<QdqResult> run() {
    QdqReport& report = result_.report;
    report.opset_before = report.opset_after = model_.opset("");
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (is_default_domain(n.domain) && (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear")) {
        return make_error(StatusCode::kInvalidArgument,
                          "the model is already quantized (node '{}' is a {}); convert its float32 original",
                          node_label(g_, static_cast<int64_t>(i)), n.op_type);
      }
    }
    if (report.opset_before < kPerAxisOpset) {
      if (std::optional<std::string> why = upgrade_blocker(g_, report.opset_before, &types_)) {
        return make_error(StatusCode::kInvalidArgument,
                          "per-channel QDQ needs opset {}, and this model imports opset {}: {}; export it at opset {} "
                          "or later",
                          kPerAxisOpset, report.opset_before, *why, kPerAxisOpset);
      }
      report.opset_after = kPerAxisOpset;
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) plan_node(i);
    emit();
    VN_RETURN_IF_ERROR(finish());
    return std::move(result_);
  }

 private:
  // The float32 constant `name` holds: an initializer, or a Constant's value, through Identity
  // nodes (exporters share a weight by an Identity of it); when there is one, the nodes passed are
  // added to `via`.
  const Tensor* float_constant(const std::string& name, std::vector<int64_t>* via = nullptr) const {
    std::string current = name;
    std::vector<int64_t> passed;
    const Tensor* found = nullptr;
    while (found == nullptr) {
      if (const Initializer* init = g_.find_initializer(current)) {
        found = &init->tensor;
        break;
      }
      const int64_t p = index_.producer(current);
      if (p < 0 || !is_default_domain(g_.nodes[static_cast<size_t>(p)].domain)) return nullptr;
      const Node& n = g_.nodes[static_cast<size_t>(p)];
      passed.push_back(p);
      if (n.op_type == "Constant") {
        const Attribute* value = n.attr("value");
        if (!value) return nullptr;
        found = &value->t;
      } else if (n.op_type == "Identity" && !n.inputs.empty()) {
        current = n.inputs[0];  // a sorted graph has no cycle: this walk ends
      } else {
        return nullptr;
      }
    }
    if (found->dtype() != DType::kFloat32) return nullptr;
    if (via) via->insert(via->end(), passed.begin(), passed.end());
    return found;
  }

  // Calibration observes float32 tensors only, so a scale also says the type.
  bool maybe_f32(const std::string& name) const {
    const auto it = types_.find(name);
    return it == types_.end() || !it->second.dtype || it->second.dtype == DType::kFloat32;
  }

  void skip(size_t i, std::string reason) {
    result_.report.skipped.push_back({node_label(g_, static_cast<int64_t>(i)), g_.nodes[i].op_type, std::move(reason)});
  }

  void plan_node(size_t i) {
    const Node& n = g_.nodes[i];
    if (!is_default_domain(n.domain) || (n.op_type != "Conv" && n.op_type != "MatMul" && n.op_type != "Gemm")) return;
    if (n.inputs.size() < 2 || !maybe_f32(n.inputs[0])) return skip(i, "its input is not float32");
    std::vector<int64_t> via;
    const Tensor* w = float_constant(n.inputs[1], &via);
    if (!w) return skip(i, "its weight (input 1) is not a float32 constant: both operands are computed");
    if (float_constant(n.inputs[0])) return skip(i, "its input is a constant too");
    if (scales_.count(n.inputs[0]) == 0) {
      return skip(i, fmt::format("no calibrated scale for its input '{}'", n.inputs[0]));
    }
    Plan p{i, n.inputs[0], n.inputs[1], w, 0, "", nullptr, ""};
    const Shape& ws = w->shape();
    if (n.op_type == "Conv") {
      if (ws.size() < 3) return skip(i, "its weight has rank below 3");
    } else if (n.op_type == "Gemm") {
      if (ws.size() != 2) return skip(i, "its weight is not a matrix");
      p.axis = attr_int(n, "transB", 0) != 0 ? 0 : 1;
    } else {
      p.axis = ws.size() >= 2 ? static_cast<int64_t>(ws.size()) - 1 : -1;
    }
    const int64_t channels = p.axis >= 0 ? ws[static_cast<size_t>(p.axis)] : 1;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Tensor* b = float_constant(n.inputs[2], &via);
      const bool unit = n.op_type != "Gemm" || (attr_float(n, "alpha", 1) == 1 && attr_float(n, "beta", 1) == 1);
      if (b && unit && b->rank() == 1 && b->dim(0) == channels) {
        p.bias = n.inputs[2];
        p.bias_values = b;
      }
    }
    if (n.op_type != "MatMul" && !n.outputs.empty() && scales_.count(n.outputs[0]) > 0 &&
        !index_.is_graph_output(n.outputs[0])) {
      p.output = n.outputs[0];
    }
    bypassed_.insert(via.begin(), via.end());
    quantized_tensors_.insert(p.input);
    if (!p.output.empty()) quantized_tensors_.insert(p.output);
    plans_.push_back(std::move(p));
  }

  Node make_node(const std::string& op, std::vector<std::string> inputs, const std::string& output,
                 std::vector<Attribute> attrs = {}) {
    Node n;
    n.name = names_.take(output.substr(0, output.rfind("_Output")));
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    n.attributes = std::move(attrs);
    return n;
  }

  void add_initializer(const std::string& name, Tensor t) { initializers_.push_back({name, std::move(t)}); }

  void add_value_info(const std::string& like, const std::string& name, DType dtype) {
    ValueInfo v;
    if (const auto it = types_.find(like); it != types_.end()) v = it->second;
    v.name = name;
    v.dtype = dtype;
    value_info_.push_back(std::move(v));
  }

  // QuantizeLinear -> DequantizeLinear after tensor `t`; consumers read the DequantizeLinear's output.
  void emit_pair(const std::string& t) {
    const float scale = scales_.at(t);
    const std::string s = names_.take(t + "_scale"), zp = names_.take(t + "_zero_point");
    add_initializer(s, Tensor::scalar<float>(scale));
    add_initializer(zp, Tensor::scalar<int8_t>(0));
    const std::string q = names_.take(t + "_QuantizeLinear_Output");
    const std::string dq = names_.take(t + "_DequantizeLinear_Output");
    nodes_.push_back(make_node("QuantizeLinear", {t, s, zp}, q));
    nodes_.push_back(make_node("DequantizeLinear", {q, s, zp}, dq));
    add_value_info(t, q, DType::kInt8);
    add_value_info(t, dq, DType::kFloat32);
    dequantized_[t] = dq;
    QdqReport& r = result_.report;
    r.activation_scale_min = r.activations == 0 ? scale : std::min(r.activation_scale_min, scale);
    r.activation_scale_max = std::max(r.activation_scale_max, scale);
    ++r.activations;
  }

  // The int8 weight, its scales and its DequantizeLinear; returns the dequantized name.
  std::string emit_weight(const Plan& p, QuantizedNode& q, std::vector<float>& scales) {
    if (const auto it = weights_.find(p.weight_values); it != weights_.end()) {
      const QuantizedNode& seen = it->second.second;
      q.axis = seen.axis;
      q.channels = seen.channels;
      q.weight_scale_min = seen.weight_scale_min;
      q.weight_scale_max = seen.weight_scale_max;
      scales = weight_scales_.at(p.weight_values);
      return it->second.first;
    }
    const Tensor& w = *p.weight_values;
    const int64_t channels = p.axis >= 0 ? w.dim(p.axis) : 1;
    int64_t inner = 1;
    for (int64_t d = p.axis + 1; p.axis >= 0 && d < w.rank(); ++d) inner *= w.dim(d);
    const std::span<const float> values = w.values<float>();
    auto channel = [&](size_t e) { return p.axis >= 0 ? (static_cast<int64_t>(e) / inner) % channels : 0; };
    std::vector<double> amax(static_cast<size_t>(channels), 0.0);
    for (size_t e = 0; e < values.size(); ++e) {
      double& m = amax[static_cast<size_t>(channel(e))];
      m = std::max(m, static_cast<double>(std::fabs(values[e])));
    }
    scales.clear();
    // Under reduce_range the largest |w| lands on weight_max_ (amax taken as 127 / 63 of itself).
    for (double a : amax) {
      scales.push_back(engine::scale_from_amax(weight_max_ == engine::kInt8Max ? a : a * engine::kInt8Max / weight_max_));
    }
    Tensor quantized(DType::kInt8, w.shape());
    int8_t* out = quantized.mutable_data<int8_t>();
    for (size_t e = 0; e < values.size(); ++e) {
      out[e] = static_cast<int8_t>(engine::quantize_value(values[e], scales[static_cast<size_t>(channel(e))]));
    }
    const std::string qw = names_.take(p.weight + "_quantized");
    const std::string s = names_.take(p.weight + "_scale"), zp = names_.take(p.weight + "_zero_point");
    const Shape scale_shape = p.axis >= 0 ? Shape{channels} : Shape{};
    add_initializer(qw, std::move(quantized));
    add_initializer(s, Tensor::from_vector<float>(scale_shape, scales));
    add_initializer(zp, Tensor(DType::kInt8, scale_shape));
    const std::string dq = names_.take(p.weight + "_DequantizeLinear_Output");
    std::vector<Attribute> attrs;
    if (p.axis >= 0) attrs.push_back(int_attr("axis", p.axis));
    nodes_.push_back(make_node("DequantizeLinear", {qw, s, zp}, dq, std::move(attrs)));
    add_value_info(p.weight, dq, DType::kFloat32);
    q.axis = p.axis;
    q.channels = channels;
    q.weight_scale_min = *std::min_element(scales.begin(), scales.end());
    q.weight_scale_max = *std::max_element(scales.begin(), scales.end());
    weights_[p.weight_values] = {dq, q};
    weight_scales_[p.weight_values] = scales;
    return dq;
  }

  // The int32 bias (scale input scale x weight scale, as ORT's quantize_bias_static computes it).
  std::string emit_bias(const Plan& p, const std::vector<float>& weight_scales) {
    const Tensor& b = *p.bias_values;
    const float input_scale = scales_.at(p.input);
    std::vector<float> scales;
    std::vector<int32_t> values;
    for (size_t c = 0; c < weight_scales.size(); ++c) {
      const float s = input_scale * weight_scales[c];
      const double q = std::nearbyint(static_cast<double>(b.values<float>()[c]) / s);
      values.push_back(static_cast<int32_t>(std::clamp<double>(q, std::numeric_limits<int32_t>::min(),
                                                               std::numeric_limits<int32_t>::max())));
      scales.push_back(s);
    }
    const Shape shape{static_cast<int64_t>(values.size())};
    const std::string qb = names_.take(p.bias + "_quantized");
    const std::string s = names_.take(qb + "_scale"), zp = names_.take(qb + "_zero_point");
    add_initializer(qb, Tensor::from_vector<int32_t>(shape, values));
    add_initializer(s, Tensor::from_vector<float>(shape, scales));
    add_initializer(zp, Tensor(DType::kInt32, shape));
    const std::string dq = names_.take(p.bias + "_DequantizeLinear_Output");
    nodes_.push_back(make_node("DequantizeLinear", {qb, s, zp}, dq, {int_attr("axis", 0)}));
    add_value_info(p.bias, dq, DType::kFloat32);
    return dq;
  }

  void emit() {
    std::unordered_map<size_t, const Plan*> by_node;
    for (const Plan& p : plans_) by_node[p.node] = &p;
    // Pairs after graph inputs first, then after each producer: every consumer comes later.
    for (const ValueInfo* in : g_.runtime_inputs()) {
      if (quantized_tensors_.count(in->name) > 0) emit_pair(in->name);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      Node n = g_.nodes[i];
      for (std::string& in : n.inputs) {
        if (const auto it = dequantized_.find(in); it != dequantized_.end()) in = it->second;
      }
      if (const auto it = by_node.find(i); it != by_node.end()) {
        const Plan& p = *it->second;
        QuantizedNode q{node_label(g_, static_cast<int64_t>(i)), n.op_type, p.input, scales_.at(p.input),
                        p.weight, 0, 0, 0, 0, false, p.output, p.output.empty() ? 0.0f : scales_.at(p.output)};
        std::vector<float> weight_scales;
        n.inputs[1] = emit_weight(p, q, weight_scales);
        if (!p.bias.empty()) {
          n.inputs[2] = emit_bias(p, weight_scales);
          q.bias_int32 = true;
        }
        result_.report.quantized.push_back(std::move(q));
      }
      nodes_.push_back(std::move(n));
      for (const std::string& out : g_.nodes[i].outputs) {
        if (quantized_tensors_.count(out) > 0) emit_pair(out);
      }
    }
  }

  Status finish() {
    Model& m = result_.model;
    m = model_shell(model_);
    if (result_.report.opset_after != result_.report.opset_before) {
      bool found = false;
      for (OpsetId& o : m.opset_imports) {
        if (is_default_domain(o.domain)) {
          o.version = result_.report.opset_after;
          found = true;
        }
      }
      if (!found) m.opset_imports.push_back({"", result_.report.opset_after});
      m.ir_version = std::max(m.ir_version, kPerAxisIrVersion);
    }
    Graph& g = m.graph;
    g.nodes = std::move(nodes_);
    g.inputs = g_.inputs;
    g.outputs = g_.outputs;
    g.value_info = g_.value_info;
    for (ValueInfo& v : value_info_) g.value_info.push_back(std::move(v));
    // Float weights and biases that nothing reads any more go, with the Identity and Constant nodes
    // they came through; the others stay. Readers come later, so one backward walk finds them.
    std::unordered_set<std::string> bypassed;
    for (int64_t i : bypassed_) {
      for (const std::string& o : g_.nodes[static_cast<size_t>(i)].outputs) bypassed.insert(o);
    }
    std::unordered_set<std::string> read;
    for (const ValueInfo& v : g.outputs) read.insert(v.name);
    for (const ValueInfo& v : g.inputs) read.insert(v.name);
    std::vector<Node> kept;
    for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
      const bool unread = std::none_of(it->outputs.begin(), it->outputs.end(),
                                       [&](const std::string& o) { return read.count(o) > 0; });
      if (unread && !it->outputs.empty() && bypassed.count(it->outputs[0]) > 0) continue;
      read.insert(it->inputs.begin(), it->inputs.end());
      for (std::string& name : node_implicit_inputs(*it)) read.insert(std::move(name));
      kept.push_back(std::move(*it));
    }
    g.nodes.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
    std::erase_if(g.value_info, [&](const ValueInfo& v) { return bypassed.count(v.name) > 0 && read.count(v.name) == 0; });
    for (const Initializer& init : g_.initializers) {
      if (read.count(init.name) > 0) g.initializers.push_back(init);
    }
    for (Initializer& init : initializers_) g.initializers.push_back(std::move(init));
    if (Status s = check_model_types(m); !s.ok()) {
      return make_error(StatusCode::kInternal, "the QDQ model fails libonnx's type check (a Vernier bug): {}",
                        s.message());
    }
    return Status::OK();
  }

  const Model& model_;
  const Graph& g_;
  const GraphIndex index_;
  const engine::ScaleTable& scales_;
  std::unordered_map<std::string, ValueInfo> types_;
  NameAllocator names_;
  std::vector<Plan> plans_;
  std::unordered_set<std::string> quantized_tensors_;
  std::unordered_set<int64_t> bypassed_;  // Identity and Constant nodes a weight or bias came through
  std::unordered_map<std::string, std::string> dequantized_;
  // Weights already quantized (a weight read by several nodes is quantized once): the
  // DequantizeLinear output, and the report entry's weight fields.
  std::unordered_map<const Tensor*, std::pair<std::string, QuantizedNode>> weights_;
  std::unordered_map<const Tensor*, std::vector<float>> weight_scales_;
  int32_t weight_max_;  // the largest |quantized weight|: 127, or 63 under reduce_range
  std::vector<Node> nodes_;
  std::vector<Initializer> initializers_;
  std::vector<ValueInfo> value_info_;
  QdqResult result_;
};

}  // namespace

Result<QdqResult> insert_qdq(const Model& model, const engine::ScaleTable& scales, bool reduce_range) {
  Quantizer quantizer(model, scales, declared_types(model.graph), reduce_range);
  return quantizer.run();
}

Result<QdqResult> convert_to_qdq(const Model& model, const QdqOptions& options, const ops::OpRegistry& registry) {
  VN_ASSIGN_OR_RETURN(engine::ObtainedScales obtained,
                      engine::obtain_int8_scales(model, options.int8, options.input_shapes, registry,
                                                 options.num_threads));
  VN_ASSIGN_OR_RETURN(QdqResult result, insert_qdq(model, obtained.scales, options.reduce_range));
  result.report.calibration = std::move(obtained.description);
  result.report.synthetic = obtained.synthetic;
  return result;
}

}  // namespace vn::surgeon
