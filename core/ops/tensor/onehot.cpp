// SPDX-License-Identifier: Apache-2.0
// OneHot: a new axis of length `depth` holding on_value at each index and off_value elsewhere.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status one_hot(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& indices = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (depth_t.numel() != 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "depth must hold one value, got shape {}",
                    shape_to_string(depth_t.shape()));
  }
  if (values.numel() != 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "values must be [off_value, on_value], got shape {}",
                    shape_to_string(values.shape()));
  }
  // Indices and depth may be of any numeric type; non-integers are truncated (ONNX OneHot casts them).
  Result<std::vector<double>> depth_v = tensor_to_doubles(depth_t);
  Result<std::vector<double>> idx_v = tensor_to_doubles(indices);
  if (!depth_v.ok() || !idx_v.ok()) {
    return ctx.fail(StatusCode::kUnsupportedDType, "indices and depth must be numeric, got {} and {}",
                    dtype_name(indices.dtype()), dtype_name(depth_t.dtype()));
  }
  const double depth_d = std::trunc((*depth_v)[0]);
  if (!(depth_d >= 1) || depth_d > static_cast<double>(kMaxTensorBytes)) {
    return ctx.fail(StatusCode::kInvalidModel, "depth must be a positive count, got {}", (*depth_v)[0]);
  }
  const auto depth = static_cast<int64_t>(depth_d);
  const int64_t out_rank = indices.rank() + 1;
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), out_rank));
  Shape out_shape = indices.shape();
  out_shape.insert(out_shape.begin() + axis, depth);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values.dtype(), out_shape));
  const int64_t outer = shape_product(indices.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(indices.shape(), static_cast<size_t>(axis), indices.shape().size());
  return dispatch_by_size(values.dtype(), [&]<typename U>() {
    const U off = raw_data<U>(values)[0];
    const U on = raw_data<U>(values)[1];
    U* py = raw_mutable_data<U>(*y);
    std::fill_n(py, y->numel(), off);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const double v = std::trunc((*idx_v)[static_cast<size_t>(o * inner + i)]);
        // ONNX OneHot: indices in [-depth, depth - 1] (negative ones count from the end); any
        // other index leaves the whole one-hot vector at off_value.
        if (!(v >= -depth_d && v < depth_d)) continue;
        const int64_t d = static_cast<int64_t>(v) < 0 ? static_cast<int64_t>(v) + depth : static_cast<int64_t>(v);
        py[(o * depth + d) * inner + i] = on;
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_onehot_ops(OpRegistry& registry) {
  // OneHot-28 only added bfloat16.
  for (int64_t v : {9, 11, 28}) registry.add("OneHot", v, one_hot);
}

}  // namespace vn::ops
