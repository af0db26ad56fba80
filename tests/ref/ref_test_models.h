// SPDX-License-Identifier: Apache-2.0
// Small models built node by node for the reference backend's tests.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace vn::ref::test {

inline Node make_node(std::string name, std::string op, std::vector<std::string> inputs,
                      std::vector<std::string> outputs) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

inline ValueInfo float_info(std::string name, Shape shape) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::kFloat32;
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::of(d));
  v.shape = dims;
  return v;
}

inline Model opset13_model() {
  Model m;
  m.opset_imports = {{"", 13}};
  return m;
}

/// sin(i * scale) at each flat index i.
inline Tensor ramp(Shape shape, float scale) {
  Tensor t(DType::kFloat32, shape);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::sin(static_cast<float>(i) * scale);
  return t;
}

}  // namespace vn::ref::test
