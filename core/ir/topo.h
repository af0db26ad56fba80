// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"

namespace vn {

/// Names `node` reads from its enclosing graph through subgraph attributes (If branches, Loop and
/// Scan bodies): every name a subgraph uses (node inputs, graph outputs) that the subgraph does not
/// define itself (inputs, initializers, node outputs), nested subgraphs included. In order of first
/// use, without duplicates; empty for nodes without subgraphs. These are real data dependencies:
/// sorting, validation and extraction treat them like explicit inputs.
std::vector<std::string> node_implicit_inputs(const Node& node);

/// A topological order of graph.nodes as node indices. Stable: among the nodes whose inputs are
/// ready, the lowest index goes first, so a graph already in a valid order comes back unchanged
/// (0, 1, 2, ...). Dependencies are node outputs consumed by other nodes, explicitly or through
/// subgraphs; names produced by no node (graph inputs, initializers, outer scope, dangling) impose no
/// order. kInvalidModel on a cycle, with the NodeRef of a node on it and the cycle spelled out
/// ("graph has a cycle: 'a' (Add) -> 'b' (Relu) -> 'a' (Add)").
Result<std::vector<int64_t>> topological_order(const Graph& graph);

/// Reorders graph.nodes in place by topological_order. On error the graph is unchanged.
Status toposort(Graph& graph);

/// Structural checks of a graph and (recursively) its subgraphs, stopping at the first problem:
/// - a tensor produced twice (by two nodes, or by a node and a graph input or initializer);
/// - a node input defined by nothing (not a graph input, initializer, node output or, in a subgraph,
///   a name of an enclosing scope), including names used inside the node's subgraphs;
/// - a node reading a tensor that a later node produces (not topologically sorted);
/// - an empty op_type, a graph input declared twice, a graph output defined by nothing;
/// - for default-domain ops that libonnx knows at `opset` (<= 17), input and output counts outside
///   the schema's range. Unknown ops are not an error here: backends report them as unsupported.
/// Empty node output names (omitted optional outputs) and empty input names are fine.
/// Errors are kInvalidModel and carry the node (NodeRef via Node::ref(index)); a problem inside a
/// subgraph carries the enclosing node and names the attribute. kInvalidArgument for opset < 1.
Status validate_graph(const Graph& graph, int64_t opset);

/// Every node output except those of Constant nodes, in node order, without empty names or
/// duplicates: the tensors Polygraphy's "mark all" compares.
std::vector<std::string> all_tensor_names(const Graph& graph);

}  // namespace vn
