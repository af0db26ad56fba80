// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/ir/tensor_map.h"

namespace vn::io {

/// Decodes a numpy .npz archive (a zip of .npy members, as np.savez and np.savez_compressed write).
/// - Members are read through the central directory, in its order; ".npy" is stripped from names.
/// - Stored (method 0) and deflated (method 8) members; ZIP64 extra fields and the ZIP64 end record are
///   honoured (numpy always writes ZIP64 local headers). Encrypted, multi-part and other compression
///   methods are refused.
/// - A member whose declared uncompressed size exceeds kMaxTensorBytes, or more than deflate can expand
///   its compressed size to, is refused before inflating; inflation stops at the declared size.
/// - Every member's CRC32 is verified; each member must be a valid .npy (see npy_decode); duplicate names
///   and names that are neither ASCII nor flagged UTF-8 are refused. Directory entries are skipped.
/// Every malformed or truncated archive is a kIoError naming the member when there is one.
Result<TensorMap> npz_decode(std::string_view bytes);

/// Reads and decodes a .npz file; errors carry the path.
Result<TensorMap> npz_load(const std::filesystem::path& path);

/// Encodes `tensors` as a zip readable by numpy.load: one "<name>.npy" member per tensor, in map order,
/// stored or (compress) deflated at zlib's default level, ZIP64 records only where sizes, offsets or the
/// member count need them, and a fixed 1980-01-01 timestamp so that the output is reproducible.
/// Fails like npy_encode for tensors numpy cannot represent (bfloat16, strings).
Result<std::string> npz_encode(const TensorMap& tensors, bool compress = false);

/// Encodes and writes atomically (file_write_atomic); errors carry the path.
Status npz_save(const TensorMap& tensors, const std::filesystem::path& path, bool compress = false);

}  // namespace vn::io
