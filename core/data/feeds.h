// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::data {

/// Loads feed dicts for `graph` from files, one or more iterations per file, in order:
/// - `.json`: a Polygraphy feed list (--save-inputs, `data to-input`): one iteration per element;
/// - `.npz`: one iteration, one member per input;
/// - `.pb`: one serialized TensorProto, one iteration;
/// - a folder: an ONNX test folder (all its test_data_set_N/, or one such folder), one iteration
///   per data set; input_K.pb files are matched to graph inputs by their TensorProto name, or by
///   position when the names do not match.
/// Every runtime input must be present in every iteration (exact name), else kNotFound naming the
/// input, the file and the names it holds. Extra tensors are kept: later steps (reduce, extract)
/// use intermediate values saved by `data to-input`.
Result<std::vector<TensorMap>> load_feeds(const std::vector<std::filesystem::path>& paths, const Graph& graph);

}  // namespace vn::data
