// SPDX-License-Identifier: Apache-2.0
// EyeLike: a 2-D tensor of the input's shape with ones on the k-th diagonal and zeros elsewhere,
// in the input's type or the one named by `dtype`.
#include <cstdint>
#include <optional>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status eye_like(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must be 2-D, got shape {}", shape_to_string(x.shape()));
  }
  DType dtype = x.dtype();
  if (ctx.has_attr("dtype")) {
    const int64_t code = ctx.attr_int("dtype", 0);
    const std::optional<DType> d = dtype_from_onnx(static_cast<int32_t>(code));
    if (!d) return ctx.fail(StatusCode::kUnsupportedDType, "dtype {} is not a supported ONNX data type", code);
    dtype = *d;
  }
  const int64_t k = ctx.attr_int("k", 0);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, x.shape()));
  const int64_t rows = x.dim(0), cols = x.dim(1);
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                         uint16_t, uint32_t, uint64_t, bool>;
  return dispatch_types(Types{}, ctx, dtype, [&]<typename T>() {
    // Row i holds its one at column i + k; rows where that falls outside [0, cols) stay zero.
    for (int64_t i = 0; i < rows; ++i) {
      if (k >= cols - i || k < -i) continue;
      y->mutable_data<T>()[i * cols + i + k] = T(1);
    }
    return Status::OK();
  });
}

}  // namespace

// EyeLike-22 only added bfloat16.
void register_eye_like_ops(OpRegistry& registry) {
  for (int64_t v : {9, 22}) registry.add("EyeLike", v, eye_like);
}

}  // namespace vn::ops
