// SPDX-License-Identifier: Apache-2.0
// Constant folding: the first step of every engine build.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/status.h"
#include "core/engine/layer.h"
#include "core/ir/graph.h"
#include "core/ops/op_registry.h"

namespace vn::engine {

/// The model's constants after folding.
struct FoldedGraph {
  ConstantMap constants;        ///< initializers and the outputs of folded nodes, by name
  std::vector<int64_t> folded;  ///< indices of the folded nodes, in topological order
  std::vector<bool> is_folded;  ///< per node of the main graph
};

/// Evaluates, with the reference kernels in float32, every node whose inputs are all constants:
/// Constant nodes, shape arithmetic on initializers, weight preprocessing (Transpose, Cast,
/// DequantizeLinear of constant weights) and so on, repeatedly in topological order. Nodes that
/// draw random numbers, nodes with subgraphs and nodes whose kernel fails are left to run, so a
/// malformed node is reported when the engine runs it, like the reference does.
/// Errors: kInvalidModel for a cyclic graph.
Result<FoldedGraph> fold_constants(const Model& model, const ops::OpRegistry& registry);

}  // namespace vn::engine
