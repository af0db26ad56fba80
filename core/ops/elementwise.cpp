// SPDX-License-Identifier: Apache-2.0
#include "core/ops/elementwise.h"

#include <algorithm>

namespace vn::ops {

Status broadcast_copy(const Tensor& src, Tensor& dst) {
  return dispatch_by_size(src.dtype(), [&]<typename U>() {
    const Shape strides[] = {broadcast_strides(src.shape(), dst.shape())};
    const StridedLoop loop(dst.shape(), strides);
    const U* ps = raw_data<U>(src);
    U* pd = raw_mutable_data<U>(dst);
    const int64_t n = loop.row_size();
    if (loop.inner_stride(0) == 1) {
      loop.for_each_row([&](int64_t dense, const int64_t* off) { std::copy_n(ps + off[0], n, pd + dense); });
    } else {
      loop.for_each_row([&](int64_t dense, const int64_t* off) { std::fill_n(pd + dense, n, ps[off[0]]); });
    }
    return Status::OK();
  });
}

Result<Tensor> legacy_broadcast_view(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (ctx.attr_int("broadcast", 0) == 0) {
    if (a.shape() != b.shape()) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "shapes {} and {} differ and broadcast=0 (opset < 7 broadcasts only with broadcast=1)",
                      shape_to_string(a.shape()), shape_to_string(b.shape()));
    }
    return b;
  }
  const int64_t rank_a = a.rank();
  const int64_t rank_b = b.rank();
  if (rank_b > rank_a) {
    return ctx.fail(StatusCode::kShapeMismatch, "legacy broadcast needs rank(B) <= rank(A), got {} and {}",
                    shape_to_string(a.shape()), shape_to_string(b.shape()));
  }
  int64_t axis = rank_a - rank_b;
  if (ctx.has_attr("axis")) {
    axis = ctx.attr_int("axis", axis);
    if (axis < 0) axis += rank_a;
    if (axis < 0 || axis + rank_b > rank_a) {
      return ctx.fail(StatusCode::kInvalidModel, "axis {} does not place B {} inside A {}", ctx.attr_int("axis", 0),
                      shape_to_string(b.shape()), shape_to_string(a.shape()));
    }
  }
  Shape aligned(static_cast<size_t>(rank_a), 1);
  for (int64_t i = 0; i < rank_b; ++i) {
    const int64_t d = b.dim(i);
    if (d != 1 && d != a.dim(axis + i)) {
      return ctx.fail(StatusCode::kShapeMismatch, "B {} does not match A {} at axis {}", shape_to_string(b.shape()),
                      shape_to_string(a.shape()), axis);
    }
    aligned[static_cast<size_t>(axis + i)] = d;
  }
  return b.reshaped(std::move(aligned));
}

}  // namespace vn::ops
