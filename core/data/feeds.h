// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::data {

/// `t` as the element type a model declares for it: a uint16 tensor declared bfloat16 is read as
/// bfloat16 bit patterns (ONNX's test generators before ml_dtypes stored bfloat16 data as uint16,
/// numpy having no bfloat16, and ONNX's runner reinterprets them so); any other tensor unchanged.
Tensor as_declared(const Tensor& t, std::optional<DType> declared);

/// Loads feed dicts for `graph` from files, one or more iterations per file, in order:
/// - `.json`: a Polygraphy feed list (--save-inputs, `data to-input`): one iteration per element;
/// - `.npz`: one iteration, one member per input;
/// - `.pb`: one serialized TensorProto, one iteration;
/// - a folder: an ONNX test folder (all its test_data_set_N/, or one such folder), one iteration
///   per data set; input_K.pb files are matched to graph inputs by their TensorProto name, or by
///   position when the names do not match.
/// In .pb files and test folders, uint16 tensors fed to bfloat16 inputs are read per as_declared.
/// Every runtime input must be present in every iteration (exact name), else kNotFound naming the
/// input, the file and the names it holds. Extra tensors are kept: later steps (reduce, extract)
/// use intermediate values saved by `data to-input`.
Result<std::vector<TensorMap>> load_feeds(const std::vector<std::filesystem::path>& paths, const Graph& graph);

}  // namespace vn::data
