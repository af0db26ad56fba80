// SPDX-License-Identifier: Apache-2.0
// Where: elementwise select between X and Y by a bool condition, all three broadcast numpy-style.
#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status where(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (cond.dtype() != DType::kBool) {
    return ctx.fail(StatusCode::kUnsupportedDType, "condition must be bool, got {}", dtype_name(cond.dtype()));
  }
  if (x.dtype() != y.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "X ({}) and Y ({}) must have the same type", dtype_name(x.dtype()),
                    dtype_name(y.dtype()));
  }
  const Shape shapes[] = {cond.shape(), x.shape(), y.shape()};
  Result<Shape> out_shape = broadcast_shapes(shapes);
  if (!out_shape.ok()) return out_shape.status().with_node(ctx.node().ref(ctx.node_index()));
  VN_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_for_overwrite(0, x.dtype(), *out_shape));
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const Shape strides[] = {broadcast_strides(cond.shape(), *out_shape), broadcast_strides(x.shape(), *out_shape),
                             broadcast_strides(y.shape(), *out_shape)};
    const StridedLoop loop(*out_shape, strides);
    const bool* pc = cond.data<bool>();
    const U* px = raw_data<U>(x);
    const U* py = raw_data<U>(y);
    U* po = raw_mutable_data<U>(*out);
    const int64_t n = loop.row_size();
    const int64_t sc = loop.inner_stride(0), sx = loop.inner_stride(1), sy = loop.inner_stride(2);
    loop.for_each_row([&](int64_t dense, const int64_t* off) {
      for (int64_t i = 0; i < n; ++i) po[dense + i] = pc[off[0] + i * sc] ? px[off[1] + i * sx] : py[off[2] + i * sy];
    });
    return Status::OK();
  });
}

}  // namespace

void register_where_ops(OpRegistry& registry) {
  for (int64_t v : {9, 16}) registry.add("Where", v, where);
}

}  // namespace vn::ops
