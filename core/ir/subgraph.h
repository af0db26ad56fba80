// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"

namespace vn {

/// The part of `graph` that computes `outputs` from `inputs` (boundary tensors by name), as Polygraphy's
/// `surgeon extract` does:
/// - nodes: those needed, walking back from each output and stopping at the given inputs and at
///   initializers, dependencies through subgraphs (If/Loop bodies) included; kept in their original
///   relative order;
/// - inputs: one per given name, in the given order, with the dtype/shape the graph knows for it
///   (Graph::find_value_info; unknown when it knows none), even when no kept node reads it;
/// - outputs: in the given order, typed likewise;
/// - initializers: those the kept nodes read (others dropped); an initializer named as an input
///   becomes a plain input;
/// - value_info: the entries for tensors the kept nodes produce, other than inputs and outputs;
/// - name and doc_string: copied.
/// Errors: kInvalidArgument when `outputs` is empty or a name is listed twice; kNotFound for a name
/// the graph does not have ("unknown tensor 'x'"); kInvalidArgument naming the output and the missing
/// tensor when an output is not computable from the inputs and initializers ("output 'y' cannot be
/// computed from the given inputs: it needs graph input 'x'").
Result<Graph> extract_subgraph(const Graph& graph, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& outputs);

}  // namespace vn
