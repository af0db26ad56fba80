// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

#include "core/common/status.h"
#include "core/ir/graph.h"

namespace vn {

/// What load_model does besides parsing and converting.
struct LoadOptions {
  /// Run onnx::checker::check_model (libonnx 1.12) and fail with kInvalidModel when it objects.
  /// Models newer than libonnx (IR version > 8, ai.onnx opset > 17) are not checked, with a warning:
  /// the old checker would reject them by old rules. Either way, the converted graph then gets
  /// validate_graph's structural checks (core/ir/topo.h), kInvalidModel naming the node. Off: a
  /// graph may be incomplete (tests and tools that add initializers after loading). Defaults to true.
  bool check_model = true;
  /// Run libonnx shape inference (strict mode) to fill Graph::value_info. A failure is logged as a
  /// warning and loading continues with the types found so far, because real exported models
  /// sometimes fail strict inference. Defaults to true.
  bool infer_shapes = true;
};

/// Loads an ONNX model file. The file is memory-mapped and parsed with protobuf (limit 2 GiB, the
/// format's own); external data (data_location EXTERNAL) is resolved relative to the model's folder
/// and memory-mapped: such initializers are read-only zero-copy Tensor views that keep the mapping
/// alive. Model::base_dir is set to the model's folder. Nodes keep the file's order when it is
/// topological and are sorted stably otherwise (possible only with check_model off).
/// Errors (every message starts with the path):
/// - kIoError: the file is missing, unreadable or not a regular file; an external data file is.
/// - kInvalidModel: not a protobuf ModelProto ("model.onnx: not a valid ONNX model (protobuf parse
///   failed)"), over 2 GiB, rejected by the checker, a cyclic graph, or a bad external data reference
///   (absolute path, a location escaping the model's folder, offset/length outside the file or not
///   matching the tensor's size), or a graph validate_graph refuses (the node is named).
///   With infer_shapes, also what would crash libonnx's shape inference
///   (model_proto_check_inference_hazards: zero strides, a conv weight of the wrong rank).
/// - kUnsupportedDType: an initializer or a main-graph input/output of a type Vernier lacks
///   (complex, sequences, maps).
Result<Model> load_model(const std::filesystem::path& path, const LoadOptions& options = {});

/// Loads a model from serialized ModelProto bytes; external data is resolved against `base_dir`
/// (empty: a model with external data is refused). The bytes need not outlive the call. Errors as
/// load_model, with "in-memory model" in place of the path.
Result<Model> load_model_from_bytes(std::string_view bytes, const std::filesystem::path& base_dir,
                                    const LoadOptions& options = {});

/// Parses ONNX's textual syntax (onnx::OnnxParser, libonnx 1.12), e.g.
///   <ir_version: 8, opset_import: ["" : 13]>
///   g (float[2] X) => (float[2] Y) <float[2] W = {1.0, 2.0}> { Y = Add(X, W) }
/// then checks, infers shapes and converts as load_model does (Model::base_dir stays empty).
/// kInvalidModel with the parser's position and message on a syntax error.
Result<Model> parse_model_text(std::string_view text, const LoadOptions& options = {});

}  // namespace vn
