// SPDX-License-Identifier: Apache-2.0
#include "core/ir/dtype.h"

#include <array>

namespace vn {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int32_t onnx;
  std::string_view descr;
  size_t size;
};

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
  if (descr.size() < 2) return std::nullopt;
  char order = descr[0];
  std::string_view kind = descr.substr(1);
  if (order != '<' && order != '|' && order != '=') {
    // Big-endian data would need byte swapping; it is rejected rather than misread.
    if (order == '>' && kind.size() == 2 && kind[1] == '1') order = '|';
    else return std::nullopt;
  }
  for (const DTypeInfo& i : kInfo) {
    if (i.descr.empty()) continue;
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
    case DType::kUInt64: return false;
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
    case DType::kBool: return false;
  }
  return false;
}

}  // namespace vn
