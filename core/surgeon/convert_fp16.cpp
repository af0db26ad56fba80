// SPDX-License-Identifier: Apache-2.0
#include "core/surgeon/convert_fp16.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <Eigen/Core>

#include "core/ir/onnx_signature.h"
#include "core/ir/topo.h"
#include "core/surgeon/fp16_rules.h"
#include "core/surgeon/graph_edit.h"

namespace vn::surgeon {
namespace {

constexpr float kFloat16Max = 65504.0f;

// How a node reads or writes one float32 value after conversion.
enum class Use : uint8_t {
  kAny,   // the position takes any float type alone (Shape's input, Cast's input): no Cast needed
  kFp16,
  kFp32,
};

struct NodeState {
  bool has_f32 = false;  // reads or writes a float32 value
  bool neutral = false;  // only reads float32 values at kAny positions: no float computation
  bool kept = false;
  std::string reason;
  std::optional<OpSignature> sig;
};

class Converter {
 public:
  Converter(const Model& model, const Fp16Options& options, std::unordered_map<std::string, ValueInfo> types)
      : model_(model), g_(model.graph), options_(options), types_(std::move(types)), names_(model) {}

  Result<Fp16Result> run() {
    VN_RETURN_IF_ERROR(classify_nodes());
    find_static_values();
    keep_static_shape_arithmetic();
    choose_homes();
    rewrite();
    VN_RETURN_IF_ERROR(finish());
    return std::move(result_);
  }

 private:
  bool is_f32(const std::string& name) const {
    if (name.empty()) return false;
    const auto it = types_.find(name);
    return it != types_.end() && it->second.dtype == DType::kFloat32;
  }

  int64_t opset() const { return std::max<int64_t>(model_.opset(""), 1); }

  // --- Which nodes compute in float16 ---------------------------------------------------------

  Status classify_nodes() {
    std::set<std::string> keep(options_.keep_fp32.begin(), options_.keep_fp32.end());
    std::set<std::string> found;
    state_.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      NodeState& s = state_[i];
      const std::string label = node_label(g_, static_cast<int64_t>(i));
      for (const std::string& name : {n.name, label}) {
        if (keep.count(name) > 0) found.insert(name);
      }
      for (const std::string& in : reads(n)) s.has_f32 = s.has_f32 || is_f32(in);
      for (const std::string& out : n.outputs) s.has_f32 = s.has_f32 || is_f32(out);
      if (is_default_domain(n.domain)) s.sig = onnx_op_signature(n.op_type, opset(), "");
      if (!s.has_f32) continue;
      const bool user_kept = keep.count(n.name) > 0 || keep.count(label) > 0;
      if (user_kept) {
        keep_node(i, "--keep-fp32");
      } else if (has_subgraph(n)) {
        keep_node(i, "has subgraphs: kept in float32 whole");
      } else if (!is_default_domain(n.domain)) {
        keep_node(i, fmt::format("custom domain '{}': its types are unknown", n.domain));
      } else if (const std::string_view why = fp16_block_reason(n.op_type); !why.empty()) {
        keep_node(i, std::string(why));
      } else if (!s.sig) {
        keep_node(i, fmt::format("libonnx knows no {} schema at opset {}", n.op_type, opset()));
      } else if (std::string why = no_float16_reason(i); !why.empty()) {
        keep_node(i, std::move(why));
      } else {
        s.neutral = is_neutral(i);
      }
    }
    for (const std::string& name : options_.keep_fp32) {
      VN_RETURN_IF_NOT(found.count(name) > 0, StatusCode::kNotFound,
                       "--keep-fp32 names '{}', which is no node of the model", name);
    }
    return Status::OK();
  }

  static bool has_subgraph(const Node& n) {
    return std::any_of(n.attributes.begin(), n.attributes.end(),
                       [](const Attribute& a) { return a.g != nullptr || !a.graphs.empty(); });
  }

  static std::vector<std::string> reads(const Node& n) {
    std::vector<std::string> names = n.inputs;
    for (std::string& s : node_implicit_inputs(n)) names.push_back(std::move(s));
    return names;
  }

  void keep_node(size_t i, std::string reason) {
    state_[i].kept = true;
    state_[i].reason = std::move(reason);
  }

  // The formal of a position, and how many of the node's values share its type constraint.
  const OpFormal* formal(size_t node, bool input, size_t pos) const {
    const NodeState& s = state_[node];
    if (!s.sig) return nullptr;
    return input ? s.sig->input(pos) : s.sig->output(pos);
  }

  size_t constraint_uses(size_t node, const std::string& type_str) const {
    const Node& n = g_.nodes[node];
    size_t count = 0;
    for (size_t p = 0; p < n.inputs.size(); ++p) {
      const OpFormal* f = formal(node, true, p);
      count += !n.inputs[p].empty() && f && f->type_str == type_str ? 1 : 0;
    }
    for (size_t p = 0; p < n.outputs.size(); ++p) {
      const OpFormal* f = formal(node, false, p);
      count += !n.outputs[p].empty() && f && f->type_str == type_str ? 1 : 0;
    }
    return count;
  }

  bool any_position(size_t node, size_t pos) const {
    const OpFormal* f = formal(node, true, pos);
    return f && f->allows_float16 && f->allows_float32 && constraint_uses(node, f->type_str) == 1;
  }

  // "" when some float32 value of the node may become float16; else why none can.
  std::string no_float16_reason(size_t node) const {
    const Node& n = g_.nodes[node];
    std::string fixed;
    auto visit = [&](bool input, size_t p, const std::string& name) {
      if (!is_f32(name)) return false;
      const OpFormal* f = formal(node, input, p);
      if (f && f->allows_float16) return true;
      if (fixed.empty()) fixed = f ? f->name : fmt::format("{} {}", input ? "input" : "output", p);
      return false;
    };
    bool convertible = false;
    for (size_t p = 0; p < n.inputs.size(); ++p) convertible = visit(true, p, n.inputs[p]) || convertible;
    for (size_t p = 0; p < n.outputs.size(); ++p) convertible = visit(false, p, n.outputs[p]) || convertible;
    if (convertible) return "";
    return fmt::format("ONNX's {}-{} has no float16 type for '{}'", n.op_type, state_[node].sig->since_version, fixed);
  }

  bool is_neutral(size_t node) const {
    const Node& n = g_.nodes[node];
    for (const std::string& out : n.outputs) {
      if (is_f32(out)) return false;
    }
    for (size_t p = 0; p < n.inputs.size(); ++p) {
      if (is_f32(n.inputs[p]) && !any_position(node, p)) return false;
    }
    return true;
  }

  // How node `node` reads its input `pos` (a float32 value) after conversion.
  Use input_use(size_t node, size_t pos) const {
    const NodeState& s = state_[node];
    if (s.neutral) return Use::kAny;
    if (s.kept) return s.sig && any_position(node, pos) ? Use::kAny : Use::kFp32;
    const OpFormal* f = formal(node, true, pos);
    if (!f || !f->allows_float16) return Use::kFp32;
    return any_position(node, pos) ? Use::kAny : Use::kFp16;
  }

  DType output_type(size_t node, size_t pos) const {
    const NodeState& s = state_[node];
    if (s.kept || s.neutral) return DType::kFloat32;
    const OpFormal* f = formal(node, false, pos);
    return f && f->allows_float16 ? DType::kFloat16 : DType::kFloat32;
  }

  // --- Static shape arithmetic ----------------------------------------------------------------

  // A value is static when it does not depend on the values fed at run time: initializers,
  // Constants, shapes, and what is computed from them alone.
  void find_static_values() {
    for (const Initializer& init : g_.initializers) static_.insert(init.name);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      bool is_static = !has_subgraph(n) && !fp16_random_op(n.op_type);
      if (n.op_type != "Shape" && n.op_type != "Size") {
        for (const std::string& in : n.inputs) is_static = is_static && (in.empty() || static_.count(in) > 0);
      }
      if (!is_static) continue;
      node_static_.insert(i);
      for (const std::string& out : n.outputs) static_.insert(out);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for (size_t p = 0; p < n.inputs.size(); ++p) consumers_[n.inputs[p]].push_back({i, p});
      for (const std::string& name : node_implicit_inputs(n)) consumers_[name].push_back({i, SIZE_MAX});
    }
  }

  // How value `name` is read: in float16, in float32, or to compute a shape or an integer (a
  // reader without float computation: Shape, a Cast to an integer type).
  struct Uses {
    bool fp16 = false;
    bool fp32 = false;
    bool shape = false;
  };

  Uses uses(const std::string& name) const {
    Uses u;
    if (const auto it = consumers_.find(name); it != consumers_.end()) {
      for (const auto& [node, pos] : it->second) {
        const Use use = pos == SIZE_MAX ? Use::kFp32 : input_use(node, pos);
        u.fp16 = u.fp16 || use == Use::kFp16;
        u.fp32 = u.fp32 || use == Use::kFp32;
        u.shape = u.shape || state_[node].neutral;
      }
    }
    for (const ValueInfo& out : g_.outputs) {
      if (out.name != name) continue;
      u.fp16 = u.fp16 || !options_.keep_io_types;
      u.fp32 = u.fp32 || options_.keep_io_types;
    }
    return u;
  }

  // Static nodes whose float32 values nothing reads in float16 compute shapes or indices, or feed
  // positions that take any float type; a static value read both ways stays float32 for its exact
  // readers, the others get a Cast. Consumers come later in a sorted graph, so walking backwards
  // decides them first.
  void keep_static_shape_arithmetic() {
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      NodeState& s = state_[i];
      if (!s.has_f32 || s.kept || s.neutral || node_static_.count(i) == 0) continue;
      Uses all;
      for (const std::string& out : g_.nodes[i].outputs) {
        if (!is_f32(out)) continue;
        const Uses u = uses(out);
        all.fp16 = all.fp16 || u.fp16;
        all.fp32 = all.fp32 || u.fp32;
        all.shape = all.shape || u.shape;
      }
      if (!all.fp16 && (all.fp32 || all.shape)) {
        keep_node(i, "static shape or index arithmetic (its values do not depend on the inputs)");
      } else if (!all.fp16) {
        keep_node(i, "static value read only where ONNX takes any float type (an exponent, Resize's roi): kept exact");
      } else if (all.fp32) {
        keep_node(i, "static value read in float32 too: kept exact, its float16 readers get a Cast");
      }
    }
  }

  // --- Where each float32 value lives after conversion ----------------------------------------

  void choose_homes() {
    for (const Initializer& init : g_.initializers) {
      if (init.tensor.dtype() != DType::kFloat32) continue;
      const Uses u = uses(init.name);
      home_[init.name] = u.fp16 && !u.fp32 ? DType::kFloat16 : DType::kFloat32;
    }
    for (const ValueInfo* in : g_.runtime_inputs()) {
      if (is_f32(in->name)) home_[in->name] = options_.keep_io_types ? DType::kFloat32 : DType::kFloat16;
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for (size_t p = 0; p < n.outputs.size(); ++p) {
        if (is_f32(n.outputs[p])) home_[n.outputs[p]] = output_type(i, p);
      }
    }
  }

  DType home(const std::string& name) const { return home_.at(name); }

  // The name holding `name` as `dtype`, adding a Cast when there is none yet.
  std::string version(const std::string& name, DType dtype) {
    const auto key = std::make_pair(name, dtype);
    if (const auto it = versions_.find(key); it != versions_.end()) return it->second;
    const std::string& from = versions_.at({name, home(name)});
    const std::string out = names_.take(name + (dtype == DType::kFloat16 ? "__fp16" : "__fp32"));
    emit_cast(from, out, dtype);
    add_value_info(name, out, dtype);
    versions_[key] = out;
    return out;
  }

  void emit_cast(const std::string& from, const std::string& to, DType dtype) {
    Node cast;
    cast.name = to;
    cast.op_type = "Cast";
    cast.inputs = {from};
    cast.outputs = {to};
    Attribute a;
    a.name = "to";
    a.type = AttrType::kInt;
    a.i = dtype_to_onnx(dtype);
    cast.attributes.push_back(std::move(a));
    nodes_.push_back(std::move(cast));
    ++result_.report.casts_added;
  }

  void add_value_info(const std::string& original, const std::string& name, DType dtype) {
    ValueInfo v;
    if (const auto it = types_.find(original); it != types_.end()) v = it->second;
    v.name = name;
    v.dtype = dtype;
    new_value_info_.push_back(std::move(v));
  }

  Tensor to_fp16(const Tensor& t, const std::string& name) {
    ClampedTensor c;
    Tensor out = float32_to_float16(t, name, &c, &result_.report.flushed_to_zero);
    if (c.count > 0) result_.report.clamped.push_back(std::move(c));
    ++result_.report.initializers_fp16;
    return out;
  }

  // Float16 versions of the attributes that set a node's output type.
  void retarget_attributes(Node& n) {
    const std::string& op = n.op_type;
    for (Attribute& a : n.attributes) {
      if (op == "Cast" && a.name == "to" && a.i == dtype_to_onnx(DType::kFloat32)) {
        a.i = dtype_to_onnx(DType::kFloat16);
        ++result_.report.casts_retargeted;
      } else if (op == "EyeLike" && a.name == "dtype" && a.i == dtype_to_onnx(DType::kFloat32)) {
        a.i = dtype_to_onnx(DType::kFloat16);
      } else if ((op == "Constant" || op == "ConstantOfShape") && a.name == "value" && a.t.dtype() == DType::kFloat32) {
        a.t = to_fp16(a.t, n.outputs[0]);
      } else if (op == "Constant" && (a.name == "value_float" || a.name == "value_floats")) {
        const bool scalar = a.name == "value_float";
        const std::vector<float> values = scalar ? std::vector<float>{a.f} : a.floats;
        const Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
        a = Attribute{};
        a.name = "value";
        a.type = AttrType::kTensor;
        a.t = to_fp16(Tensor::from_vector<float>(shape, values), n.outputs[0]);
      }
    }
    const bool has_value = std::any_of(n.attributes.begin(), n.attributes.end(),
                                       [](const Attribute& a) { return a.name == "value"; });
    if (op == "ConstantOfShape" && !has_value) {  // the default value is a float32 zero
      Attribute a;
      a.name = "value";
      a.type = AttrType::kTensor;
      a.t = Tensor(DType::kFloat16, {1});
      n.attributes.push_back(std::move(a));
    }
    const bool has_dtype = std::any_of(n.attributes.begin(), n.attributes.end(),
                                       [](const Attribute& a) { return a.name == "dtype"; });
    if (op == "EyeLike" && !has_dtype) {  // the output type would follow the input's
      Attribute a;
      a.name = "dtype";
      a.type = AttrType::kInt;
      a.i = dtype_to_onnx(DType::kFloat16);
      n.attributes.push_back(std::move(a));
    }
  }

  void rewrite() {
    const DType io_type = options_.keep_io_types ? DType::kFloat32 : DType::kFloat16;
    std::unordered_set<std::string> graph_outputs;
    for (const ValueInfo& v : g_.outputs) graph_outputs.insert(v.name);
    for (const auto& [name, dtype] : home_) versions_[{name, dtype}] = name;
    Fp16Report& report = result_.report;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const NodeState& s = state_[i];
      Node n = g_.nodes[i];
      for (size_t p = 0; p < n.inputs.size(); ++p) {
        const std::string& in = n.inputs[p];
        if (!is_f32(in)) continue;
        const Use use = input_use(i, p);
        const DType want = use == Use::kAny ? home(in) : use == Use::kFp16 ? DType::kFloat16 : DType::kFloat32;
        if (use == Use::kFp32 && !s.kept && !s.neutral) {
          report.fixed_float32.push_back(fmt::format("node '{}' ({}) input {} '{}'", node_label(g_, i), n.op_type, p,
                                                     formal(i, true, p) ? formal(i, true, p)->name : "?"));
        }
        n.inputs[p] = version(in, want);
      }
      std::map<std::string, std::string> outer;
      for (const std::string& name : node_implicit_inputs(n)) {
        if (is_f32(name) && home(name) != DType::kFloat32) outer[name] = version(name, DType::kFloat32);
      }
      n = rename_outer_references(n, outer);
      if (s.has_f32 && !s.kept && !s.neutral) {
        retarget_attributes(n);
        report.nodes_fp16.push_back(node_label(g_, static_cast<int64_t>(i)));
      }
      if (s.kept) report.kept.push_back({node_label(g_, static_cast<int64_t>(i)), n.op_type, s.reason});
      // A graph output read in another type than it is computed in: the producer writes a new name
      // and a Cast writes the output.
      std::vector<std::pair<std::string, std::string>> edges;
      for (size_t p = 0; p < n.outputs.size(); ++p) {
        std::string& out = n.outputs[p];
        if (is_f32(out) && !s.kept && !s.neutral && home(out) == DType::kFloat32) {
          report.fixed_float32.push_back(fmt::format("node '{}' ({}) output {} '{}'", node_label(g_, i), n.op_type, p,
                                                     formal(i, false, p) ? formal(i, false, p)->name : "?"));
        }
        if (!is_f32(out) || graph_outputs.count(out) == 0 || home(out) == io_type) continue;
        const std::string inner = names_.take(out + (home(out) == DType::kFloat16 ? "__fp16" : "__fp32"));
        add_value_info(out, inner, home(out));
        versions_[{out, home(out)}] = inner;
        versions_[{out, io_type}] = out;
        edges.emplace_back(inner, out);
        out = inner;
      }
      nodes_.push_back(std::move(n));
      for (const auto& [inner, out] : edges) emit_cast(inner, out, io_type);
    }
  }

  Status finish() {
    Model& m = result_.model;
    m = model_shell(model_);
    Graph& g = m.graph;
    g.nodes = std::move(nodes_);
    g.inputs = g_.inputs;
    g.outputs = g_.outputs;
    const DType io_type = options_.keep_io_types ? DType::kFloat32 : DType::kFloat16;
    for (ValueInfo& v : g.inputs) {
      if (v.dtype == DType::kFloat32 && home_.count(v.name) > 0) v.dtype = home(v.name);
    }
    for (ValueInfo& v : g.outputs) {
      if (v.dtype == DType::kFloat32) v.dtype = io_type;
    }
    for (const Initializer& init : g_.initializers) {
      if (init.tensor.dtype() == DType::kFloat32 && home(init.name) == DType::kFloat16) {
        g.initializers.push_back({init.name, to_fp16(init.tensor, init.name)});
      } else {
        result_.report.initializers_fp32 += init.tensor.dtype() == DType::kFloat32 ? 1 : 0;
        g.initializers.push_back(init);
      }
    }
    for (ValueInfo v : g_.value_info) {
      if (v.dtype == DType::kFloat32 && home_.count(v.name) > 0) {
        const DType dtype = home(v.name);
        v.name = versions_.at({v.name, dtype});
        v.dtype = dtype;
      }
      g.value_info.push_back(std::move(v));
    }
    for (ValueInfo& v : new_value_info_) g.value_info.push_back(std::move(v));
    // Renamed values keep their declared type under the new name; drop duplicates.
    std::unordered_set<std::string> seen;
    std::erase_if(g.value_info, [&](const ValueInfo& v) { return !seen.insert(v.name).second; });
    if (Status s = check_model_types(m); !s.ok()) {
      return make_error(StatusCode::kInternal, "the float16 model fails libonnx's type check (a Vernier bug): {}",
                        s.message());
    }
    return Status::OK();
  }

  const Model& model_;
  const Graph& g_;
  const Fp16Options& options_;
  std::unordered_map<std::string, ValueInfo> types_;
  NameAllocator names_;
  std::vector<NodeState> state_;
  std::unordered_set<std::string> static_;
  std::unordered_set<size_t> node_static_;
  std::unordered_map<std::string, std::vector<std::pair<size_t, size_t>>> consumers_;
  std::unordered_map<std::string, DType> home_;
  std::map<std::pair<std::string, DType>, std::string> versions_;
  std::vector<Node> nodes_;
  std::vector<ValueInfo> new_value_info_;
  Fp16Result result_;
};

}  // namespace

Tensor float32_to_float16(const Tensor& tensor, const std::string& name, ClampedTensor* clamped,
                          int64_t* flushed_to_zero) {
  Tensor out(DType::kFloat16, tensor.shape());
  Eigen::half* dst = out.mutable_data<Eigen::half>();
  const std::span<const float> src = tensor.values<float>();
  for (size_t i = 0; i < src.size(); ++i) {
    float v = src[i];
    if (std::isfinite(v) && std::fabs(v) > kFloat16Max) {
      if (clamped) {
        clamped->name = name;
        ++clamped->count;
        clamped->max_abs = std::max<double>(clamped->max_abs, std::fabs(v));
      }
      v = std::copysign(kFloat16Max, v);
    }
    dst[i] = Eigen::half(v);
    if (flushed_to_zero && v != 0.0f && static_cast<float>(dst[i]) == 0.0f) ++*flushed_to_zero;
  }
  return out;
}

Result<Fp16Result> convert_to_fp16(const Model& model, const Fp16Options& options) {
  std::vector<std::string> needed;
  for (const Node& n : model.graph.nodes) {
    for (const std::string& name : n.inputs) {
      if (!name.empty()) needed.push_back(name);
    }
    for (const std::string& name : n.outputs) {
      if (!name.empty()) needed.push_back(name);
    }
    for (std::string& name : node_implicit_inputs(n)) needed.push_back(std::move(name));
  }
  VN_ASSIGN_OR_RETURN(auto types, value_types(model, needed, options.fallback));
  Converter converter(model, options, std::move(types));
  return converter.run();
}

Result<std::vector<std::string>> expand_name_list(const std::vector<std::string>& items) {
  std::vector<std::string> names;
  auto trim = [](std::string s) {
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return std::string();
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
  };
  for (const std::string& item : items) {
    if (item.empty() || item.front() != '@') {
      names.push_back(item);
      continue;
    }
    const std::string path = item.substr(1);
    std::ifstream in(path);
    VN_RETURN_IF_NOT(in.good(), StatusCode::kIoError, "{}: cannot read the list of names", path);
    for (std::string line; std::getline(in, line);) {
      line = trim(line);
      if (!line.empty() && line.front() != '#') names.push_back(line);
    }
  }
  return names;
}

}  // namespace vn::surgeon
