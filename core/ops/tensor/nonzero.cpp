// SPDX-License-Identifier: Apache-2.0
// Data-dependent selection: NonZero (indices of non-zero elements, numpy.nonzero layout) and
// Compress (slices along an axis, or elements of the flattened input, where a condition is true).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// Flat positions of the non-zero elements of `x`.
Result<std::vector<int64_t>> nonzero_positions(const KernelContext& ctx, const Tensor& x) {
  std::vector<int64_t> positions;
  VN_RETURN_IF_ERROR(dispatch_types(NumericBoolTypes{}, ctx, x.dtype(), [&]<typename T>() {
    const T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (p[i] != T(0)) positions.push_back(i);
    }
    return Status::OK();
  }));
  return positions;
}

Status nonzero(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> positions;
  if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16) {
    VN_ASSIGN_OR_RETURN(std::vector<double> v, tensor_to_doubles(x));
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != 0.0) positions.push_back(static_cast<int64_t>(i));
    }
  } else {
    VN_ASSIGN_OR_RETURN(positions, nonzero_positions(ctx, x));
  }
  // A scalar is read as a one-element vector (numpy.nonzero's behaviour for 0-d input).
  const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
  const auto rank = static_cast<int64_t>(shape.size());
  const auto count = static_cast<int64_t>(positions.size());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {rank, count}));
  int64_t* py = count > 0 ? y->mutable_data<int64_t>() : nullptr;
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = positions[static_cast<size_t>(j)];
    for (int64_t a = rank; a-- > 0;) {
      py[a * count + j] = rest % shape[static_cast<size_t>(a)];
      rest /= shape[static_cast<size_t>(a)];
    }
  }
  return Status::OK();
}

Status compress(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& condition = ctx.input(1);
  if (condition.dtype() != DType::kBool || condition.rank() != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "condition must be a 1-D bool tensor, got {} {}",
                    dtype_name(condition.dtype()), shape_to_string(condition.shape()));
  }
  const bool flatten = !ctx.has_attr("axis");
  int64_t axis = 0;
  if (!flatten) {
    if (x.rank() == 0) return ctx.fail(StatusCode::kShapeMismatch, "axis is set but the input is a scalar");
    VN_ASSIGN_OR_RETURN(axis, normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank()));
  }
  const Shape in_shape = flatten ? Shape{x.numel()} : x.shape();
  const int64_t dim = in_shape[static_cast<size_t>(axis)];
  // ONNX Compress: a condition shorter than the axis leaves the rest out; one that selects past
  // the end is an error.
  std::vector<int64_t> selected;
  const bool* pc = condition.data<bool>();
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (!pc[i]) continue;
    if (i >= dim) {
      return ctx.fail(StatusCode::kShapeMismatch, "condition selects index {} but the axis has size {}", i, dim);
    }
    selected.push_back(i);
  }
  Shape out_shape = in_shape;
  out_shape[static_cast<size_t>(axis)] = static_cast<int64_t>(selected.size());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
  const int64_t outer = shape_product(in_shape, 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(in_shape, static_cast<size_t>(axis) + 1, in_shape.size());
  const auto count = static_cast<int64_t>(selected.size());
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        std::copy_n(px + (o * dim + selected[static_cast<size_t>(j)]) * inner, inner, py + (o * count + j) * inner);
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_nonzero_ops(OpRegistry& registry) {
  // Compress-28 only added bfloat16 to its (any-type) data.
  for (int64_t v : {9, 11, 28}) registry.add("Compress", v, compress);
  for (int64_t v : {9, 13}) registry.add("NonZero", v, nonzero);
}

}  // namespace vn::ops
