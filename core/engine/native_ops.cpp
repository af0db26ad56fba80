// SPDX-License-Identifier: Apache-2.0
#include "core/engine/native_ops.h"

#include <algorithm>

#include "core/ir/onnx_schema.h"

namespace vn::engine {
namespace {

// Versions are ONNX since-versions; ranges end at the newest version whose semantics the layers
// were checked against (later ones only added element types the float layers never see, or were
// not checked and run on the reference kernels).
constexpr NativeOp kNativeOps[] = {
    // Products, with the epilogues fused into them.
    {"Conv", 1, 22, "auto_pad,dilations,group,kernel_shape,pads,strides"},
    {"Gemm", 7, 13, "alpha,beta,transA,transB"},
    {"MatMul", 1, 13, ""},
    // momentum only updates running statistics in training mode, which the fusion excludes.
    {"BatchNormalization", 9, 15, "epsilon,momentum,training_mode"},
    {"Add", 7, 14, ""},
    // Activations, alone or as epilogues, and the nodes of the SiLU and GELU patterns.
    {"Relu", 6, 14, ""},
    {"LeakyRelu", 6, 16, "alpha"},
    {"Sigmoid", 6, 13, ""},
    {"Tanh", 6, 13, ""},
    {"Exp", 6, 13, ""},
    {"Erf", 9, 13, ""},
    {"HardSigmoid", 6, 22, "alpha,beta"},
    {"HardSwish", 14, 22, ""},
    {"Clip", 6, 13, "max,min"},
    {"Mul", 7, 14, ""},
    {"Div", 7, 14, ""},
    // The LayerNorm pattern.
    {"ReduceMean", 1, 18, "axes,keepdims,noop_with_empty_axes"},
    {"ReduceSum", 1, 13, "axes,keepdims,noop_with_empty_axes"},
    {"Sub", 7, 14, ""},
    {"Pow", 7, 15, ""},
    {"Sqrt", 6, 13, ""},
    // stash_type chooses the precision of the statistics, which is the engine's to choose.
    {"LayerNormalization", 17, 17, "axis,epsilon,stash_type"},
    // The layer flattens the input to 2-D around axis before opset 13, as those versions say.
    {"Softmax", 1, 13, "axis"},
    {"AveragePool", 7, 11, "auto_pad,ceil_mode,count_include_pad,kernel_shape,pads,strides"},
    {"GlobalAveragePool", 1, 22, ""},
};

bool listed(std::string_view attributes, std::string_view name) {
  while (!attributes.empty()) {
    const size_t comma = attributes.find(',');
    if (attributes.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    attributes.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::span<const NativeOp> native_ops() { return kNativeOps; }

bool runs_natively(const Node& node, int64_t opset) {
  if (!is_default_domain(node.domain)) return false;
  const auto it = std::find_if(std::begin(kNativeOps), std::end(kNativeOps),
                               [&](const NativeOp& n) { return n.op == node.op_type; });
  if (it == std::end(kNativeOps)) return false;
  const OnnxSchema* schema = onnx_schema("", node.op_type, opset);
  if (!schema || schema->since_version < it->min_version || schema->since_version > it->max_version) return false;
  return std::all_of(node.attributes.begin(), node.attributes.end(),
                     [&](const Attribute& a) { return listed(it->attributes, a.name); });
}

}  // namespace vn::engine
