// SPDX-License-Identifier: Apache-2.0
#include "core/io/tensor_proto.h"

#include <memory>
#include <utility>

#include "core/ir/mapped_file.h"
#include "core/ir/onnx_proto.h"

namespace vn::io {

Result<NamedTensor> tensor_proto_load(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::open(path));
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  return tensor_proto_decode(file->bytes(), dir, path.string());
}

Status tensor_proto_save(const Tensor& tensor, const std::string& name, const std::filesystem::path& path) {
  Result<std::string> bytes = tensor_proto_encode(tensor, name);
  if (!bytes.ok()) return bytes.status().with_context(path.string());
  return file_write_atomic(path, *bytes);
}

Result<Tensor> tensor_from_proto_bytes(std::string_view bytes, std::string* name) {
  VN_ASSIGN_OR_RETURN(NamedTensor t, tensor_proto_decode(bytes, {}, ""));
  if (name) *name = std::move(t.name);
  return std::move(t.tensor);
}

}  // namespace vn::io
