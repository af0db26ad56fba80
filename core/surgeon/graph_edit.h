// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the rewrites that add nodes and tensors to a model (float16 and QDQ conversion,
// isolated layers): fresh names, renamed outer-scope references in subgraphs, and the declared
// type of every value.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/surgeon/surgeon.h"

namespace vn::surgeon {

/// Hands out names that nothing in a model uses: no value (tensor), node or graph name, in the
/// main graph or any subgraph, and no name it handed out before.
class NameAllocator {
 public:
  explicit NameAllocator(const Model& model);
  /// `base` when it is free, else the first free of base_1, base_2, ...; the name is then taken.
  std::string take(const std::string& base);

 private:
  std::unordered_set<std::string> used_;
};

/// A copy of `model` with an empty graph (name and doc string kept): metadata, opset imports,
/// IR version and base folder, without copying the graph's nodes or weights.
Model model_shell(const Model& model);

/// `node` with every name its subgraphs read from enclosing scopes renamed by `renames`, nested
/// subgraphs included (a name a subgraph defines itself is its own and keeps its name).
Node rename_outer_references(const Node& node, const std::map<std::string, std::string>& renames);

/// Declared type (dtype, shape) of values of the main graph, by name: graph inputs and outputs,
/// value_info, initializers and the values of Constant nodes.
std::unordered_map<std::string, ValueInfo> declared_types(const Graph& graph);

/// declared_types, completed for `needed` names whose dtype is unknown by one `fallback` run of
/// the model (when given) that returns them. kInvalidModel naming the first value still without a
/// dtype ("shape inference found no type for 'x'"), with a hint to give input data when no
/// fallback could run; the fallback's own errors with context.
Result<std::unordered_map<std::string, ValueInfo>> value_types(const Model& model,
                                                              const std::vector<std::string>& needed,
                                                              const FallbackRun& fallback);

}  // namespace vn::surgeon
