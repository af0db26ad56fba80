// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/ir/tensor.h"

namespace vn::io {

/// Decodes the bytes of a numpy .npy file (format versions 1.0, 2.0 and 3.0).
/// - The header is a Python dict literal; it is parsed as such (any key order, any spacing, trailing
///   commas, Python 2 "3L" integers), needs 'descr', 'fortran_order' and 'shape', and ignores other keys.
/// - descr: every type dtype.h knows a numpy descr for ('<f4', '<f2', '<f8', '|b1', '|i1', '|u1', '<i2',
///   '<u2', '<i4', '<u4', '<i8', '<u8'; '=' and no-mark spellings accepted), and the ml_dtypes names
///   ('bfloat16', 'float8_e4m3fn', 'int4', ...; one byte per element for the narrow types, whose bytes
///   must be elements of the type, e.g. int4 in [-8, 7]). Of np.save's own descrs for ml_dtypes arrays,
///   '<V2' reads as bfloat16 and '<f1' as float8_e5m2; '|V1' (any one-byte ml_dtypes type) is refused
///   as ambiguous. Big-endian multi-byte data, other structured/void descrs, object ('|O'), string,
///   complex and datetime dtypes are refused with a message that names the descr.
/// - shape () is a scalar; the element count and byte size are checked against kMaxTensorBytes and the
///   data length must equal the shape's byte size exactly, all before anything is allocated.
/// - fortran_order True data is transposed into the C order Tensor uses. Bool bytes other than 0/1 read
///   as true.
/// Every malformed input is a kIoError with a one-line message.
Result<Tensor> npy_decode(std::string_view bytes);

/// Encodes `tensor` exactly as numpy >= 1.23 np.save(f, array, allow_pickle=False) writes the same
/// C-contiguous array: "\x93NUMPY", version 1.0 (2.0 when the header exceeds 65535 bytes), a header
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }" followed by numpy's 21-digit
/// growth allowance, padded with spaces and a final '\n' so that the preamble is a multiple of 64 bytes,
/// then the raw little-endian data.
/// bfloat16 and the narrow types get the ml_dtypes name as their descr ('bfloat16', 'int4'), which
/// np.load reads back typed once ml_dtypes is imported (np.save itself would write '<V2' or '|V1').
/// Fails (kUnsupportedDType) for string tensors and (kInvalidArgument) for an undefined tensor.
Result<std::string> npy_encode(const Tensor& tensor);

/// Reads and decodes a .npy file; errors carry the path.
Result<Tensor> npy_load(const std::filesystem::path& path);

/// Encodes `tensor` and writes it atomically (core/ir/mapped_file.h file_write_atomic); errors carry the path.
Status npy_save(const Tensor& tensor, const std::filesystem::path& path);

/// Reads a whole file into memory. A missing, unreadable or directory path is a kIoError of the form
/// "<path>: cannot open: <reason>". Shared by the io readers.
Result<std::string> read_file_bytes(const std::filesystem::path& path);


}  // namespace vn::io
