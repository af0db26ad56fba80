// SPDX-License-Identifier: Apache-2.0
// The gather family: Gather (slices along one axis), GatherElements (one element per index, along
// one axis) and GatherND (slices addressed by index tuples, with leading batch dimensions).
// Indices are int32/int64; negative indices count from the end.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/broadcast.h"
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

/// Reads an int32/int64 indices tensor as int64; callers check bounds and resolve negative values.
Result<std::vector<int64_t>> read_indices(const KernelContext& ctx, const Tensor& indices) {
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return ctx.fail(StatusCode::kUnsupportedDType, "indices must be int32 or int64, got {}",
                    dtype_name(indices.dtype()));
  }
  return tensor_to_int64s(indices);
}

Status gather_elements(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.rank() < 1) return ctx.fail(StatusCode::kShapeMismatch, "data must have rank >= 1, got a scalar");
  if (indices.rank() != data.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch, "indices {} must have the rank of data {}",
                    shape_to_string(indices.shape()), shape_to_string(data.shape()));
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), data.rank()));
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d != axis && indices.dim(d) > data.dim(d)) {
      return ctx.fail(StatusCode::kShapeMismatch, "indices {} exceed data {} on axis {}",
                      shape_to_string(indices.shape()), shape_to_string(data.shape()), d);
    }
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_indices(ctx, indices));
  const int64_t axis_dim = data.dim(axis);
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < -axis_dim || idx[j] >= axis_dim) {
      return ctx.fail(StatusCode::kInvalidModel,
                      "index {} (at flat position {}) is out of bounds for axis {} of size {}", idx[j], j, axis,
                      axis_dim);
    }
    if (idx[j] < 0) idx[j] += axis_dim;
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data.dtype(), indices.shape()));
  const Shape strides = contiguous_strides(data.shape());
  const auto rank = static_cast<size_t>(data.rank());
  const auto a = static_cast<size_t>(axis);
  return dispatch_by_size(data.dtype(), [&]<typename U>() {
    const U* pd = raw_data<U>(data);
    U* py = raw_mutable_data<U>(*y);
    std::vector<int64_t> pos(rank, 0);
    int64_t base = 0;  // offset of `pos` in data, without the axis term
    for (size_t j = 0; j < idx.size(); ++j) {
      py[j] = pd[base + idx[j] * strides[a]];
      for (size_t d = rank; d-- > 0;) {
        if (d != a) base += strides[d];
        if (++pos[d] < indices.shape()[d]) break;
        if (d != a) base -= strides[d] * pos[d];
        pos[d] = 0;
      }
    }
    return Status::OK();
  });
}

// GatherND-11 has no batch_dims; GatherND-12 adds it.
Status gather_nd_with(KernelContext& ctx, int64_t batch_dims) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t r = data.rank();
  const int64_t q = indices.rank();
  if (r < 1 || q < 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "data {} and indices {} must both have rank >= 1",
                    shape_to_string(data.shape()), shape_to_string(indices.shape()));
  }
  if (batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return ctx.fail(StatusCode::kInvalidModel, "batch_dims {} must be in [0, min(data rank {}, indices rank {}))",
                    batch_dims, r, q);
  }
  const int64_t k = indices.dim(q - 1);
  if (k < 1 || k > r - batch_dims) {
    return ctx.fail(StatusCode::kShapeMismatch, "the last indices dimension ({}) must be in [1, {}]", k,
                    r - batch_dims);
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    if (data.dim(d) != indices.dim(d)) {
      return ctx.fail(StatusCode::kShapeMismatch, "batch dimension {} differs: data {} vs indices {}", d,
                      shape_to_string(data.shape()), shape_to_string(indices.shape()));
    }
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_indices(ctx, indices));
  const auto b = static_cast<size_t>(batch_dims);
  Shape out_shape(indices.shape().begin(), indices.shape().end() - 1);
  out_shape.insert(out_shape.end(), data.shape().begin() + batch_dims + k, data.shape().end());
  const int64_t batches = shape_product(data.shape(), 0, b);
  const int64_t tuples_per_batch =
      batches == 0 ? 0 : shape_product(indices.shape(), 0, indices.shape().size() - 1) / batches;
  const int64_t slice = shape_product(data.shape(), b + static_cast<size_t>(k), data.shape().size());
  const int64_t batch_stride = shape_product(data.shape(), b, data.shape().size());
  const Shape strides = contiguous_strides(data.shape());
  // Resolve every tuple to a data offset first, so that a bad index fails before any copy.
  std::vector<int64_t> offsets(static_cast<size_t>(batches * tuples_per_batch));
  for (size_t t = 0; t < offsets.size(); ++t) {
    int64_t off = static_cast<int64_t>(t) / std::max<int64_t>(tuples_per_batch, 1) * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      const size_t d = b + static_cast<size_t>(j);
      int64_t v = idx[t * static_cast<size_t>(k) + static_cast<size_t>(j)];
      const int64_t dim = data.shape()[d];
      if (v < -dim || v >= dim) {
        return ctx.fail(StatusCode::kInvalidModel,
                        "index {} (tuple {}, entry {}) is out of bounds for axis {} of size {}", v, t, j, d, dim);
      }
      if (v < 0) v += dim;
      off += v * strides[d];
    }
    offsets[t] = off;
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data.dtype(), out_shape));
  return dispatch_by_size(data.dtype(), [&]<typename U>() {
    const U* pd = raw_data<U>(data);
    U* py = raw_mutable_data<U>(*y);
    for (size_t t = 0; t < offsets.size(); ++t)
      std::copy_n(pd + offsets[t], slice, py + static_cast<int64_t>(t) * slice);
    return Status::OK();
  });
}

Status gather_nd_11(KernelContext& ctx) { return gather_nd_with(ctx, 0); }
Status gather_nd_12(KernelContext& ctx) { return gather_nd_with(ctx, ctx.attr_int("batch_dims", 0)); }

}  // namespace

void register_gather_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11, 13}) registry.add("Gather", v, gather);
  for (int64_t v : {11, 13}) registry.add("GatherElements", v, gather_elements);
  registry.add("GatherND", 11, gather_nd_11);
  for (int64_t v : {12, 13}) registry.add("GatherND", v, gather_nd_12);
}

}  // namespace vn::ops
