// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <Eigen/Core>

namespace vn {

/// Element type of a tensor. The list lives in dtype_list.inc; switches over DType name every
/// enumerator (no default) so that adding a type breaks the build where it is not handled.
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

/// "float32", "int64", ... (numpy's spelling).
std::string_view dtype_name(DType dtype);
/// Parses a name from dtype_name, plus the aliases "fp32", "fp16", "bf16", "fp64", "float", "double", "half".
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element (sizeof(std::string) for kString).
size_t dtype_size(DType dtype);
/// ONNX TensorProto::DataType value.
int32_t dtype_to_onnx(DType dtype);
/// Inverse of dtype_to_onnx; nullopt for types Vernier does not handle (complex, float8, ...).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
/// The numpy descr ("<f4"), empty for types numpy lacks.
std::string_view dtype_numpy_descr(DType dtype);
/// Parses a numpy descr; accepts '<', '|', '=' and (for one-byte types) no byte-order mark.
std::optional<DType> dtype_from_numpy_descr(std::string_view descr);

bool dtype_is_float(DType dtype);     ///< float16/32/64, bfloat16
bool dtype_is_integer(DType dtype);   ///< signed and unsigned integers (not bool)

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
