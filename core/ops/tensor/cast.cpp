// SPDX-License-Identifier: Apache-2.0
// Cast between numeric and bool types with numpy astype semantics (float to int truncates toward
// zero, NaN and out-of-range values saturate, anything to bool is "non-zero"). Strings are not
// converted.
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status cast_to(KernelContext& ctx, DType to) {
  const Tensor& x = ctx.input(0);
  Result<Tensor> y = tensor_cast(x, to);
  if (!y.ok()) return y.status().with_node(ctx.node().ref(ctx.node_index()));
  ctx.set_output(0, std::move(y).value());
  return Status::OK();
}

// Cast-1: `to` is the TensorProto data type name as a string.
Status cast_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  static constexpr std::pair<std::string_view, DType> kNames[] = {
      {"FLOAT", DType::kFloat32},   {"UINT8", DType::kUInt8},      {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},   {"INT16", DType::kInt16},      {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},     {"STRING", DType::kString},    {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64},   {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64},   {"BFLOAT16", DType::kBFloat16}};
  const std::string to = ctx.attr_string("to", "");
  for (const auto& [name, dtype] : kNames) {
    if (name == to) return cast_to(ctx, dtype);
  }
  return ctx.fail(StatusCode::kInvalidModel, "attribute to='{}' is not a known data type name", to);
}

// Cast-6+: `to` is the TensorProto data type number.
Status cast_6(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("to")) return ctx.fail(StatusCode::kInvalidModel, "attribute to is required");
  const int64_t to = ctx.attr_int("to", 0);
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int32_t>(to));
  if (!dtype) return ctx.fail(StatusCode::kUnsupportedDType, "cast to ONNX data type {} is not supported", to);
  return cast_to(ctx, *dtype);
}

}  // namespace

void register_cast_ops(OpRegistry& registry) {
  registry.add("Cast", 1, cast_1);
  for (int64_t v : {6, 9, 13}) registry.add("Cast", v, cast_6);
}

}  // namespace vn::ops
