// SPDX-License-Identifier: Apache-2.0
// Det: determinants of the trailing (M, M) matrices of a tensor. Each determinant is an LU
// factorization with partial pivoting, computed in double whatever the input precision: for a
// float32 matrix the product of pivots loses far less than a float32 elimination would.
#include <Eigen/LU>
#include <cstdint>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status det(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2)) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (..., M, M) square matrices, got {}",
                    shape_to_string(x.shape()));
  }
  const int64_t m = x.dim(x.rank() - 1);
  const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    Eigen::MatrixXd a(m, m);
    for (int64_t b = 0; b < y->numel(); ++b) {
      a = ConstMatrixMap<T>(px + b * m * m, m, m).template cast<double>();
      // The determinant of a 0×0 matrix is the empty product, 1.
      py[b] = static_cast<T>(m == 0 ? 1.0 : a.partialPivLu().determinant());
    }
    return Status::OK();
  });
}

}  // namespace

// Det-22 only added bfloat16.
void register_det_ops(OpRegistry& registry) {
  for (int64_t v : {11, 22}) registry.add("Det", v, det);
}

}  // namespace vn::ops
