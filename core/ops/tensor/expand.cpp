// SPDX-License-Identifier: Apache-2.0
// Expand: broadcasts the input against a shape input (numpy rules in both directions, so a 1 in
// the shape keeps the input's larger dim).
#include "core/ops/broadcast.h"
#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status expand(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, input_int64s(ctx, 1, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return ctx.fail(StatusCode::kInvalidModel, "shape has negative dimension {}", d);
  }
  Result<Shape> out_shape = broadcast_shapes(x.shape(), shape);
  if (!out_shape.ok()) return out_shape.status().with_node(ctx.node().ref(ctx.node_index()));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), *out_shape));
  return broadcast_copy(x, *y);
}

}  // namespace

void register_expand_ops(OpRegistry& registry) {
  for (int64_t v : {8, 13}) registry.add("Expand", v, expand);
}

}  // namespace vn::ops
