// SPDX-License-Identifier: Apache-2.0
#include "core/ref/fp64.h"

#include <memory>
#include <string>
#include <utility>

namespace vn::ref {
namespace {

constexpr int64_t kOnnxDouble = 11;  // TensorProto::DOUBLE

bool widened_onnx_type(int64_t onnx_type) {
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(onnx_type));
  return dtype && widened_in_fp64(*dtype);
}

void widen_value_info(ValueInfo& v) {
  if (v.dtype && widened_in_fp64(*v.dtype)) v.dtype = DType::kFloat64;
}

Result<Tensor> widen_tensor(const Tensor& t) {
  if (!t.defined() || !widened_in_fp64(t.dtype())) return t;
  return tensor_cast(t, DType::kFloat64);
}

Attribute int_attribute(std::string name, int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

Attribute tensor_attribute(std::string name, Tensor value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kTensor;
  a.t = std::move(value);
  return a;
}

Attribute* find_attribute(Node& node, std::string_view name) {
  for (Attribute& a : node.attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Makes the node's attribute `name` (an ONNX data type) float64 when it names a widened type;
// when absent and `default_is_float` (the op then produces float32), adds it as float64.
void widen_dtype_attribute(Node& node, std::string_view name, bool default_is_float) {
  Attribute* a = find_attribute(node, name);
  if (!a) {
    if (default_is_float) node.attributes.push_back(int_attribute(std::string(name), kOnnxDouble));
    return;
  }
  if (a->type == AttrType::kInt && widened_onnx_type(a->i)) a->i = kOnnxDouble;
}

Status widen_node(Node& node);

Status widen_graph(Graph& graph) {
  for (ValueInfo& v : graph.inputs) widen_value_info(v);
  for (ValueInfo& v : graph.outputs) widen_value_info(v);
  for (ValueInfo& v : graph.value_info) widen_value_info(v);
  for (Initializer& init : graph.initializers) {
    Result<Tensor> t = widen_tensor(init.tensor);
    if (!t.ok()) return t.status().with_context(fmt::format("initializer '{}'", init.name));
    init.tensor = std::move(t).value();
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Status st = widen_node(graph.nodes[i]);
    if (!st.ok()) return st.with_node(graph.nodes[i].ref(static_cast<int64_t>(i)));
  }
  return Status::OK();
}

Result<std::shared_ptr<const Graph>> widen_subgraph(const std::shared_ptr<const Graph>& body) {
  if (!body) return body;
  auto copy = std::make_shared<Graph>(*body);
  VN_RETURN_IF_ERROR(widen_graph(*copy));
  return std::shared_ptr<const Graph>(std::move(copy));
}

Status widen_node(Node& node) {
  for (Attribute& a : node.attributes) {
    if (a.type == AttrType::kTensor) {
      VN_ASSIGN_OR_RETURN(a.t, widen_tensor(a.t));
    } else if (a.type == AttrType::kTensors) {
      for (Tensor& t : a.tensors) {
        VN_ASSIGN_OR_RETURN(t, widen_tensor(t));
      }
    } else if (a.type == AttrType::kGraph) {
      VN_ASSIGN_OR_RETURN(a.g, widen_subgraph(a.g));
    } else if (a.type == AttrType::kGraphs) {
      for (auto& g : a.graphs) {
        VN_ASSIGN_OR_RETURN(g, widen_subgraph(g));
      }
    }
  }
  if (!is_default_domain(node.domain)) return Status::OK();

  const std::string& op = node.op_type;
  if (op == "Constant") {
    // value_float(s) hold float32 numbers; a float64 `value` holds them exactly.
    for (Attribute& a : node.attributes) {
      if (a.name == "value_float" && a.type == AttrType::kFloat) {
        a = tensor_attribute("value", Tensor::scalar<double>(a.f));
      } else if (a.name == "value_floats" && a.type == AttrType::kFloats) {
        const std::vector<double> values(a.floats.begin(), a.floats.end());
        a = tensor_attribute("value", Tensor::from_vector<double>({static_cast<int64_t>(values.size())}, values));
      }
    }
  } else if (op == "Cast") {
    Attribute* to = find_attribute(node, "to");
    if (to && to->type == AttrType::kInt && widened_onnx_type(to->i)) to->i = kOnnxDouble;
    // Cast-1 names the type with a string.
    if (to && to->type == AttrType::kString && (to->s == "FLOAT" || to->s == "FLOAT16" || to->s == "BFLOAT16")) {
      to->s = "DOUBLE";
    }
  } else if (op == "ConstantOfShape") {
    if (!find_attribute(node, "value")) {
      node.attributes.push_back(tensor_attribute("value", Tensor::from_vector<double>({1}, {0.0})));
    }
  } else if (op == "RandomNormal" || op == "RandomUniform") {
    widen_dtype_attribute(node, "dtype", true);
  } else if (op == "RandomNormalLike" || op == "RandomUniformLike" || op == "EyeLike" || op == "Bernoulli") {
    widen_dtype_attribute(node, "dtype", false);
  } else if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow" || op == "MelWeightMatrix") {
    widen_dtype_attribute(node, "output_datatype", true);
  }
  return Status::OK();
}

}  // namespace

bool widened_in_fp64(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

Result<Model> widen_model_to_fp64(const Model& model) {
  Model copy = model;
  VN_RETURN_IF_ERROR(widen_graph(copy.graph));
  return copy;
}

std::vector<size_t> fp32_pinned_inputs(std::string_view op_type, int64_t since_version) {
  if (op_type == "Resize") return since_version < 11 ? std::vector<size_t>{1} : std::vector<size_t>{2};
  if (op_type == "Upsample") return since_version >= 9 ? std::vector<size_t>{1} : std::vector<size_t>{};
  if (op_type == "QuantizeLinear") return {0, 1};
  if (op_type == "DequantizeLinear") return {1};
  if (op_type == "DynamicQuantizeLinear") return {0};
  if (op_type == "QLinearConv" || op_type == "QLinearMatMul") return {1, 4, 6};
  if (op_type == "NonMaxSuppression") return {0, 1, 3, 4};
  return {};
}

bool fp32_pinned_outputs(std::string_view op_type) {
  return op_type == "DequantizeLinear" || op_type == "DynamicQuantizeLinear" || op_type == "TfIdfVectorizer";
}

}  // namespace vn::ref
