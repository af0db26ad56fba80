// SPDX-License-Identifier: Apache-2.0
// Isolated-layers models: every chosen node of a model in one ONNX model, each fed at its own graph
// inputs with the reference's values and writing its own graph outputs, so that one run of any
// engine gives every layer's *local* output (its error alone, not the one it inherits).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::surgeon {

/// A value of an isolated-layers model and the original tensor it stands for.
struct IsolatedValue {
  std::string name;      ///< its name in the isolated model
  std::string original;  ///< the original model's tensor: fed from the reference, or computed
};

/// One isolated node.
struct IsolatedNode {
  int64_t node = -1;                   ///< index in the original graph
  std::vector<IsolatedValue> inputs;   ///< the graph inputs it reads (explicitly or in subgraphs)
  std::vector<IsolatedValue> outputs;  ///< the graph outputs it writes, in its output order
};

struct IsolatedModel {
  Model model;
  std::vector<IsolatedNode> nodes;     ///< in the original graph's order
  std::vector<IsolatedValue> feeds;    ///< every graph input, in input order
  std::vector<IsolatedValue> outputs;  ///< every graph output, in output order
  /// Bytes of the feeds and outputs whose shapes are static (known_bytes false when some are not).
  uint64_t bytes = 0;
  bool known_bytes = true;
};

struct IsolateOptions {
  /// Indices of the nodes to isolate. Empty: every node except Constant nodes.
  std::vector<int64_t> nodes;
  /// Types of values (a reference run's, see value_types_of), used where the model declares none or
  /// declares a shape with unknown dims.
  std::unordered_map<std::string, ValueInfo> known;
};

/// The types (dtype, shape) of tensors, e.g. the outputs of a reference run with every tensor marked.
std::unordered_map<std::string, ValueInfo> value_types_of(const TensorMap& tensors);

/// One model holding `options.nodes`, each reading its runtime inputs (graph inputs of the
/// original, or outputs of other nodes) from graph inputs "<tensor>__in" (one per tensor, shared by
/// the nodes that read it) and writing graph outputs "<output>__local" (a name already taken gets
/// a suffix: names never collide). Initializers stay initializers and the values of Constant nodes
/// stay constants (the Constant nodes are copied), as in the original. A node with subgraphs (If,
/// Loop, Scan) is isolated whole: the values its bodies read from the outer graph become graph
/// inputs too, renamed inside the bodies. Opsets and metadata are the original's.
/// Errors: kInvalidArgument for a node index out of range or listed twice; kInvalidModel naming a
/// value whose dtype neither the model nor `known` gives ("no type known for 'x' (read by node
/// 'n'); give the types of a reference run").
Result<IsolatedModel> isolate_nodes(const Model& model, const IsolateOptions& options);

/// isolate_nodes over consecutive runs of `options.nodes` (graph order) such that each model's
/// feeds and outputs stay within `byte_budget` bytes: a node joins the current model while the
/// bytes it adds (its outputs, and inputs the model does not read yet) fit. A node that alone
/// exceeds the budget, or whose feeds or outputs have no static shape, gets a model of its own.
/// Same errors as isolate_nodes.
Result<std::vector<IsolatedModel>> isolate_in_chunks(const Model& model, const IsolateOptions& options,
                                                     uint64_t byte_budget);

/// The feeds of `isolated` taken from `reference` (a run of the original model with the tensors
/// marked). kNotFound naming the first tensor `reference` lacks.
Result<TensorMap> isolated_feeds(const IsolatedModel& isolated, const TensorMap& reference);

}  // namespace vn::surgeon
