// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::data {

/// A closed value range for synthetic data: floats are drawn from [min, max), integers from
/// [min, max] inclusive, as in Polygraphy.
struct ValRange {
  double min = 0.0;
  double max = 1.0;
};

/// Polygraphy's data-loader settings.
struct SyntheticOptions {
  /// Iteration i uses RandomState(seed + i). Defaults to 1 as in Polygraphy.
  uint32_t seed = 1;
  int iterations = 1;
  /// Per-input ranges; the "" key is the default for every input (default [0, 1]).
  std::map<std::string, ValRange> val_ranges;
  /// Deprecated Polygraphy overrides: when set they replace the range bound for floats / ints.
  std::optional<double> float_min, float_max;
  std::optional<int64_t> int_min, int_max;
  /// Concrete shapes for inputs with dynamic or symbolic dims.
  std::map<std::string, Shape> input_shapes;
};

/// The concrete shape of a runtime input: from `input_shapes` when given (checked against the
/// known dims), else its static shape, else its dynamic dims set to 1 (with a warning, as in
/// Polygraphy). Fails for inputs of unknown rank without an entry in `input_shapes`.
Result<Shape> resolve_input_shape(const ValueInfo& input, const std::map<std::string, Shape>& input_shapes);

/// Generates `iterations` feed dicts for the graph's runtime inputs, bit-identical to
/// Polygraphy's default data loader for the same settings: one RandomState(seed + i) stream per
/// iteration, consumed by the inputs in graph-input order. Float inputs draw random_sample()
/// scaled to the range in double and then cast; integers use numpy's bounded randint for their
/// width; bools draw bits. Fails for string inputs and inputs with unknown dtype.
Result<std::vector<TensorMap>> generate_feeds(const Graph& graph, const SyntheticOptions& options);

}  // namespace vn::data
