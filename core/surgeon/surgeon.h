// SPDX-License-Identifier: Apache-2.0
// `surgeon extract` and `surgeon sanitize`: model rewrites that keep what a model computes. Both
// return the new model and the list of what they changed, for the CLI to print.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::surgeon {

/// A boundary tensor of `surgeon extract`: a name, and optionally the shape and dtype to declare
/// (nullopt: "auto", taken from the model, shape inference, or fallback inference).
struct BoundaryTensor {
  std::string name;
  std::optional<std::vector<Dim>> shape;
  std::optional<DType> dtype;
};

/// Parses "NAME[:SHAPE[:DTYPE]]" (inputs) or "NAME[:DTYPE]" (outputs, with_shape false), where
/// SHAPE is "[d0,d1,...]" (a dim may be a name for a symbolic dim, or -1/? for unknown) or "auto",
/// and DTYPE a dtype name (float32, fp16, int64, ...) or "auto". The name is split at the last
/// colons that parse as a shape or dtype, so names may contain colons. kInvalidArgument naming the
/// text and the part that does not parse.
Result<BoundaryTensor> parse_boundary(const std::string& text, bool with_shape);

/// Runs the full model on the data options' first feed with the named tensors marked as outputs
/// and returns them (fallback inference for metadata that shape inference could not find).
using FallbackRun = std::function<Result<TensorMap>(const std::vector<std::string>& tensors)>;

/// The result of a rewrite: the model and one line per change.
struct Rewrite {
  Model model;
  std::vector<std::string> changes;
};

/// The subgraph computing `outputs` from `inputs` (extract_subgraph), typed: given shapes and
/// dtypes are declared as given; the others come from the model's known types (the loader's
/// shape inference), and what is still missing (an input without dtype, rank or a size for each
/// unnamed dim; an output without dtype) from one `fallback` run of the full model. An empty list keeps the model's own
/// runtime inputs or graph outputs. Shape inference then refreshes the subgraph's intermediate
/// types. Errors: extract_subgraph's (kNotFound "unknown tensor 'x'", kInvalidArgument for an
/// output that the inputs cannot compute); kInvalidArgument when metadata is missing and no
/// fallback is given; the fallback run's errors with context.
Result<Rewrite> extract(const Model& model, const std::vector<BoundaryTensor>& inputs,
                        const std::vector<BoundaryTensor>& outputs, const FallbackRun& fallback);

/// What `surgeon sanitize` does, in this order: override input shapes (then shape inference
/// again), fold constants, clean up, sort topologically.
struct SanitizeOptions {
  /// New shapes for graph inputs (dims may be symbolic names); declared output shapes and
  /// intermediate types are recomputed by shape inference.
  std::map<std::string, std::vector<Dim>> override_input_shapes;
  /// Evaluate every node whose inputs are all constants with the reference kernels (the engine
  /// builder's folding pass), replacing it by initializers; then drop initializers nothing reads.
  bool fold_constants = false;
  /// Remove nodes that no graph output depends on, and initializers and value_info nothing uses.
  /// Graph inputs are kept: they are the model's interface.
  bool cleanup = false;
  /// Reorder nodes topologically (stable: a sorted graph is unchanged).
  bool toposort = false;
};

/// Node counts of a sanitize run, for Polygraphy's "Total Nodes | Original: N, After Folding: M |
/// K Nodes Folded" line.
struct FoldCounts {
  size_t original = 0;
  size_t after = 0;
  std::vector<std::string> folded;  ///< labels of the folded nodes, in graph order
};

/// Rewrites `model` as `options` say. Errors: kNotFound for an override naming no graph input;
/// kInvalidModel for a cyclic graph; shape inference failures after an override (kInvalidModel,
/// "shape inference failed: ...").
Result<Rewrite> sanitize(const Model& model, const SanitizeOptions& options, FoldCounts* counts = nullptr);

/// Removes from `graph` the nodes no graph output depends on (through subgraphs too), then the
/// initializers and value_info entries no remaining node or output uses. Returns the labels of the
/// removed nodes.
std::vector<std::string> cleanup_graph(Graph& graph);

}  // namespace vn::surgeon
