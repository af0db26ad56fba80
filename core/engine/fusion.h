// SPDX-License-Identifier: Apache-2.0
// Layer fusion: the builder's grouping of ONNX nodes into engine layers.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/engine/folding.h"
#include "core/engine/layer.h"
#include "core/ir/graph.h"

namespace vn::engine {

/// A fusion the builder would have made but did not, because a tensor it would have hidden inside
/// a layer is marked as an output. This is why marking every tensor (layer-wise mode) can change an
/// engine's results: the layers it runs are not the same.
struct PreventedFusion {
  std::string fusion;              ///< "Conv+BatchNormalization", "MatMul+bias", "SiLU", "LayerNorm", ...
  std::vector<std::string> nodes;  ///< the nodes that would have been fused, by name
  std::string tensor;              ///< the marked tensor

  /// "Conv+BatchNormalization of conv1, bn1: prevented by marked output conv1_out".
  std::string describe() const;
};

/// The model as engine layers.
struct LayerGraph {
  std::vector<LayerSpec> layers;  ///< in an order where every layer runs after the producers of its inputs
  std::vector<PreventedFusion> prevented;
};

/// Groups the nodes that constant folding left into layers. Fusions, each only when every tensor
/// it hides has all its readers inside the layer and is not in `marked` (the tensors the engine
/// returns, graph outputs included):
/// - Conv (constant weights) + BatchNormalization (inference form, constant parameters) + Add of a
///   constant channel bias + Add of a residual tensor of the same static shape + activation;
/// - Gemm or MatMul + Add of a constant bias along the last axis + residual Add + activation;
/// - activations: Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh, HardSigmoid, HardSwish,
///   SiLU (x * Sigmoid(x)) and GELU (x * 0.5 * (1 + Erf(x / sqrt 2)), PyTorch's export);
/// - residual Add of two tensors of the same static shape + Relu;
/// - ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div over the last axis (+ Mul and Add of
///   constant scale and bias) into one LayerNorm layer; SiLU and GELU patterns that follow no
///   Conv or matrix product become activation layers.
/// Softmax, LayerNormalization, ReduceSum/ReduceMean, AveragePool/GlobalAveragePool, Sigmoid,
/// Tanh, Exp and Erf become layers of their kind; every other node a generic layer. A fusion that a
/// marked tensor blocks is listed in `prevented`. Static shapes come from the graph's value_info
/// (filled by shape inference when the model is loaded). Errors: kInvalidModel for a cyclic graph.
Result<LayerGraph> fuse_layers(const Model& model, const FoldedGraph& folded, const std::vector<std::string>& marked);

}  // namespace vn::engine
