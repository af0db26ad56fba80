// SPDX-License-Identifier: Apache-2.0
#include "core/ir/dtype.h"

#include <array>
#include <utility>

namespace vn {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int32_t onnx;
  std::string_view descr;
  size_t size;
};

// Indexed by DType: one row per enumerator, in order.
static_assert(kDTypeCount == 24, "a DType was added or removed: review kInfo, dtype_narrow_format and the predicates");
constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
#define VN_DTYPE(e, name, ctype, onnx, descr, size) {DType::e, name, onnx, descr, size},
#include "core/ir/dtype_list.inc"
#undef VN_DTYPE
}};

const DTypeInfo& info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& i : kInfo) {
    if (i.name == name) return i.dtype;
  }
  if (name == "fp32" || name == "float") return DType::kFloat32;
  if (name == "fp16" || name == "half") return DType::kFloat16;
  if (name == "bf16") return DType::kBFloat16;
  if (name == "fp64" || name == "double") return DType::kFloat64;
  static constexpr std::pair<std::string_view, DType> kOnnxNames[] = {
      {"float8e4m3fn", DType::kFloat8E4M3FN},     {"float8e4m3fnuz", DType::kFloat8E4M3FNUZ},
      {"float8e5m2", DType::kFloat8E5M2},         {"float8e5m2fnuz", DType::kFloat8E5M2FNUZ},
      {"float8e8m0", DType::kFloat8E8M0},         {"float4e2m1", DType::kFloat4E2M1}};
  for (const auto& [alias, dtype] : kOnnxNames) {
    if (alias == name) return dtype;
  }
  return std::nullopt;
}

size_t dtype_size(DType dtype) { return info(dtype).size; }

int32_t dtype_to_onnx(DType dtype) { return info(dtype).onnx; }

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  for (const DTypeInfo& i : kInfo) {
    if (i.onnx == onnx_type) return i.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_numpy_descr(DType dtype) { return info(dtype).descr; }

std::optional<DType> dtype_from_numpy_descr(std::string_view descr) {
  for (const DTypeInfo& i : kInfo) {
    // The ml_dtypes names, which carry no byte-order mark.
    if (!i.descr.empty() && i.descr.find_first_of("<|=>") != 0 && i.descr == descr) return i.dtype;
  }
  if (descr == "<V2" || descr == "=V2") return DType::kBFloat16;
  if (descr == "<f1" || descr == "|f1" || descr == "=f1") return DType::kFloat8E5M2;
  if (descr.size() < 2) return std::nullopt;
  char order = descr[0];
  std::string_view kind = descr.substr(1);
  if (order != '<' && order != '|' && order != '=') {
    // Big-endian data would need byte swapping; it is rejected rather than misread.
    if (order == '>' && kind.size() == 2 && kind[1] == '1') order = '|';
    else return std::nullopt;
  }
  for (const DTypeInfo& i : kInfo) {
    if (i.descr.empty() || i.descr.find_first_of("<|=>") != 0) continue;
    if (i.descr.substr(1) == kind) return i.dtype;
  }
  return std::nullopt;
}

bool dtype_is_float(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kBFloat16: return true;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kString:
    case DType::kBool:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return false;
  }
  return false;
}

bool dtype_is_integer(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64: return true;
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kBFloat16:
    case DType::kString:
    case DType::kBool:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return false;
  }
  return false;
}

std::optional<NarrowFormat> dtype_narrow_format(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3FN: return NarrowFormat::kE4M3FN;
    case DType::kFloat8E4M3FNUZ: return NarrowFormat::kE4M3FNUZ;
    case DType::kFloat8E5M2: return NarrowFormat::kE5M2;
    case DType::kFloat8E5M2FNUZ: return NarrowFormat::kE5M2FNUZ;
    case DType::kFloat8E8M0: return NarrowFormat::kE8M0;
    case DType::kFloat4E2M1: return NarrowFormat::kE2M1;
    case DType::kInt4: return NarrowFormat::kInt4;
    case DType::kUInt4: return NarrowFormat::kUInt4;
    case DType::kInt2: return NarrowFormat::kInt2;
    case DType::kUInt2: return NarrowFormat::kUInt2;
    case DType::kFloat32:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kString:
    case DType::kBool:
    case DType::kFloat16:
    case DType::kFloat64:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kBFloat16: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace vn
