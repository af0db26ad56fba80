// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/ir/narrow_types.h"

// Eigen's 16-bit float types are the C++ types of float16 and bfloat16. They are declared here,
// not defined: Eigen/Core is some 190,000 lines, and most files that name a DType never touch a
// half value (files that do include <Eigen/Core>, or core/ir/half.h).
namespace Eigen {
struct half;
struct bfloat16;
}  // namespace Eigen

namespace vn {

/// Element type of a tensor. The list lives in dtype_list.inc; switches over DType name every
/// enumerator (no default) so that adding a type breaks the build where it is not handled.
/// Every type has a fixed in-memory size (dtype_size). The narrow types (float8, float4e2m1,
/// int4/uint4, int2/uint2) take one byte per element in memory, unpacked; packed layouts exist only
/// in files (ONNX raw_data, int32_data), see core/ir/narrow_types.h for the byte contract.
enum class DType : uint8_t {
#define VN_DTYPE(e, name, ctype, onnx, descr, size) e,
#include "core/ir/dtype_list.inc"
#undef VN_DTYPE
};

inline constexpr size_t kDTypeCount = 0
#define VN_DTYPE(e, name, ctype, onnx, descr, size) +1
#include "core/ir/dtype_list.inc"
#undef VN_DTYPE
    ;

/// "float32", "int64", "float8_e4m3fn", ... (numpy's spelling; ml_dtypes' for bfloat16 and the narrow types).
std::string_view dtype_name(DType dtype);
/// Parses a name from dtype_name, plus the aliases "fp32", "fp16", "bf16", "fp64", "float", "double", "half"
/// and ONNX's spellings of the narrow types ("float8e4m3fn", "float8e8m0", "float4e2m1").
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element (sizeof(std::string) for kString).
size_t dtype_size(DType dtype);
/// ONNX TensorProto::DataType value.
int32_t dtype_to_onnx(DType dtype);
/// Inverse of dtype_to_onnx; nullopt for types Vernier does not handle (complex, ...).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
/// The numpy descr ("<f4"); for bfloat16 and the narrow types the ml_dtypes name ("bfloat16",
/// "int4"), which np.load reads back typed once ml_dtypes is imported; empty for strings.
std::string_view dtype_numpy_descr(DType dtype);
/// Parses a numpy descr; accepts '<', '|', '=' and (for one-byte types) no byte-order mark, and the
/// ml_dtypes names. Of the descrs np.save writes for ml_dtypes arrays, '<V2' reads as bfloat16 (the
/// only two-byte ml_dtypes type) and '<f1' as float8_e5m2 (ml_dtypes before 0.5 gave it that
/// descr); '|V1' could be any one-byte ml_dtypes type and is not accepted.
std::optional<DType> dtype_from_numpy_descr(std::string_view descr);

bool dtype_is_float(DType dtype);     ///< float16/32/64, bfloat16: the types float kernels compute in
bool dtype_is_integer(DType dtype);   ///< signed and unsigned integers of 8 bits and more (not bool)
/// The format of a narrow type (float8, float4e2m1, int4/uint4, int2/uint2); nullopt for the others.
std::optional<NarrowFormat> dtype_narrow_format(DType dtype);
inline bool dtype_is_narrow(DType dtype) { return dtype_narrow_format(dtype).has_value(); }

/// Maps a C++ element type to its DType at compile time.
template <typename T>
struct DTypeOf;
#define VN_DTYPE(e, name, ctype, onnx, descr, size) \
  template <>                                        \
  struct DTypeOf<ctype> {                            \
    static constexpr DType value = DType::e;         \
  };
#include "core/ir/dtype_list.inc"
#undef VN_DTYPE

template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace vn
