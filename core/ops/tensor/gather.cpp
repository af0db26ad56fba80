// SPDX-License-Identifier: Apache-2.0
// Gather along any axis with int32/int64 indices of any rank; negative indices count from the end.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status gather(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.rank() < 1) return ctx.fail(StatusCode::kShapeMismatch, "data must have rank >= 1, got a scalar");
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return ctx.fail(StatusCode::kUnsupportedDType, "indices must be int32 or int64, got {}",
                    dtype_name(indices.dtype()));
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), data.rank()));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, tensor_to_int64s(indices));
  const int64_t axis_dim = data.dim(axis);
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < -axis_dim || idx[j] >= axis_dim) {
      return ctx.fail(StatusCode::kInvalidModel,
                      "index {} (at flat position {}) is out of bounds for axis {} of size {}", idx[j], j, axis,
                      axis_dim);
    }
    if (idx[j] < 0) idx[j] += axis_dim;
  }
  const auto a = static_cast<size_t>(axis);
  Shape out_shape(data.shape().begin(), data.shape().begin() + axis);
  out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
  out_shape.insert(out_shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data.dtype(), out_shape));
  const int64_t outer = shape_product(data.shape(), 0, a);
  const int64_t inner = shape_product(data.shape(), a + 1, data.shape().size());
  const auto count = static_cast<int64_t>(idx.size());
  return dispatch_by_size(data.dtype(), [&]<typename U>() {
    const U* pd = raw_data<U>(data);
    U* py = raw_mutable_data<U>(*y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        std::copy_n(pd + (o * axis_dim + idx[static_cast<size_t>(j)]) * inner, inner, py + (o * count + j) * inner);
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_gather_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11, 13}) registry.add("Gather", v, gather);
}

}  // namespace vn::ops
