// SPDX-License-Identifier: Apache-2.0
// BitCast (opset 26): the same bytes seen as another element type of the same width (numpy's
// view), shape unchanged. Strings have no bit pattern to reinterpret and are refused; so is a byte
// other than 0 or 1 read as bool, which no bool value has.
#include <cstdint>
#include <cstring>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status bitcast(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (!ctx.has_attr("to")) return ctx.fail(StatusCode::kInvalidModel, "attribute to is required");
  const int64_t to_onnx = ctx.attr_int("to", 0);
  const std::optional<DType> to = dtype_from_onnx(static_cast<int32_t>(to_onnx));
  if (!to) {
    return ctx.fail(StatusCode::kUnsupportedDType, "BitCast to ONNX element type {} is not supported", to_onnx);
  }
  if (x.dtype() == DType::kString || *to == DType::kString) {
    return ctx.fail(StatusCode::kUnsupportedDType, "BitCast from or to string is not defined (strings have no bits)");
  }
  if (dtype_size(x.dtype()) != dtype_size(*to)) {
    return ctx.fail(StatusCode::kInvalidModel, "BitCast needs types of one width: {} is {} bits, {} is {}",
                    dtype_name(x.dtype()), dtype_size(x.dtype()) * 8, dtype_name(*to), dtype_size(*to) * 8);
  }
  if (*to == DType::kBool) {
    const auto* bytes = static_cast<const uint8_t*>(x.raw());
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (bytes[i] > 1) {
        return ctx.fail(StatusCode::kInvalidArgument, "byte {} at flat index {} is not a bool (0 or 1)", bytes[i], i);
      }
    }
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, *to, x.shape()));
  if (x.nbytes() > 0) std::memcpy(y->mutable_raw(), x.raw(), x.nbytes());
  return Status::OK();
}

}  // namespace

void register_bitcast_ops(OpRegistry& registry) { registry.add("BitCast", 26, bitcast); }

}  // namespace vn::ops
