// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

namespace vn::io {

/// Reads a serialized ONNX TensorProto (.pb, as in ONNX test folders); the name comes from the proto.
/// Every data form is decoded (raw_data, the typed fields, int32_data bit patterns for 16-bit floats),
/// and external data is resolved against the file's folder. Errors carry the path: kIoError for a
/// missing or unreadable file and for bytes that are not a consistent TensorProto (parse failure,
/// data length not matching the shape); kUnsupportedDType for element types Vernier lacks.
Result<NamedTensor> tensor_proto_load(const std::filesystem::path& path);

/// Writes `tensor` as a TensorProto named `name` (raw_data; string_data for strings) to `path`,
/// atomically (temporary sibling + rename). kInvalidArgument for an undefined tensor or one over
/// protobuf's 2 GiB limit; kIoError naming the path when writing fails.
Status tensor_proto_save(const Tensor& tensor, const std::string& name, const std::filesystem::path& path);

/// Decodes TensorProto bytes; stores the proto's name in `*name` when `name` is not null. External data
/// is refused (there is no folder to resolve it against). Errors as tensor_proto_load, without a path.
Result<Tensor> tensor_from_proto_bytes(std::string_view bytes, std::string* name = nullptr);

}  // namespace vn::io
