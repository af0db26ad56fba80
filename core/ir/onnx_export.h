// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "core/common/status.h"
#include "core/ir/graph.h"

namespace vn {

/// The largest serialized ModelProto: protobuf's 2^31 - 1 bytes.
inline constexpr uint64_t kMaxModelProtoBytes = std::numeric_limits<int32_t>::max();

/// How save_model writes a model.
struct SaveOptions {
  /// Run onnx::checker on the result (with external data in place) before anything replaces the
  /// destination; skipped with a warning for models newer than libonnx (see LoadOptions). Defaults
  /// to true.
  bool check_model = true;
  /// Tensors (initializers and tensor attributes, subgraphs included; strings never) of at least this
  /// many bytes go to external data, when the whole model would exceed max_proto_bytes or when
  /// force_external_data is set. Defaults to 1024, as onnx's Python helpers.
  uint64_t external_data_threshold = 1024;
  /// Write external data even when the model would fit in one protobuf. Defaults to false.
  bool force_external_data = false;
  /// The external data file, relative to the model's folder (no absolute path, no ".." escaping
  /// it). Defaults to "<model file name>.data".
  std::string external_data_file;
  /// The size above which a model cannot be one protobuf message. Tests lower it to exercise the
  /// automatic switch to external data; leave it at the default otherwise.
  uint64_t max_proto_bytes = kMaxModelProtoBytes;
};

/// Serializes `model` as one ModelProto with every tensor inline (external-data views are read and
/// embedded). Fails with kInvalidArgument when the result would exceed `max_bytes` (protobuf's 2 GiB
/// limit by default), suggesting save_model, which moves large tensors to external data; with
/// kInvalidArgument for an undefined tensor or missing subgraph, naming the node.
Result<std::string> serialize_model(const Model& model);
Result<std::string> serialize_model(const Model& model, uint64_t max_bytes);

/// Writes `model` to `path` as ONNX. Large tensors go to one external data file next to the model
/// (see SaveOptions), each at a 4096-byte aligned offset, referenced by its relative name, offset and
/// length. Both files are written to temporary siblings and renamed into place (data first), so a
/// failure never leaves a half-written model, and a model whose external data is memory-mapped from
/// the file being replaced stays readable. With check_model, onnx::checker runs on the final bytes
/// first and its objection is returned as kInvalidModel; nothing is replaced then.
/// Errors: kInvalidArgument (bad external_data_file, a model too big even with external data,
/// undefined tensors), kInvalidModel (checker), kIoError (cannot write; the message names the file).
Status save_model(const Model& model, const std::filesystem::path& path, const SaveOptions& options = {});

/// Runs libonnx shape inference (strict mode, no data propagation) on `model` and refreshes its types:
/// Graph::value_info is replaced by what inference knows (declared entries included), and graph
/// outputs get the inferred dtype/shape where theirs were unknown; subgraphs (If/Loop bodies) are
/// refreshed the same way. Tensor data is not copied for large tensors, which inference never reads.
/// If inference fails part-way, the types it found are still applied and kInvalidModel
/// ("shape inference failed: ...") is returned; kInvalidArgument when the model cannot be converted
/// (undefined tensors).
Status infer_shapes(Model& model);

}  // namespace vn
