// SPDX-License-Identifier: Apache-2.0
// The scatter family: ScatterElements (and its deprecated form Scatter) writes one update per
// index along an axis; ScatterND writes slices addressed by index tuples. From opset 16 both may
// combine with the existing value (reduction "add" or "mul"; from 18 also "max" or "min", NaN
// propagating as numpy's maximum and minimum do) instead of replacing it. Updates are
// applied in row-major order of the indices, so with reduction "none" the last duplicate wins.
// TensorScatter writes a KV cache's new entries at per-batch positions.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

/// The reduction attribute; max and min exist from opset 18 (`max_min`).
Result<Reduction> read_reduction(const KernelContext& ctx, bool max_min) {
  const std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (max_min && r == "max") return Reduction::kMax;
  if (max_min && r == "min") return Reduction::kMin;
  return ctx.fail(StatusCode::kInvalidModel, "reduction '{}' is not one of none, add, mul{}", r,
                  max_min ? ", max, min" : "");
}

/// Copies `data` to output 0, then for each j sets (or combines) out[dst[j]] with the `len`
/// elements of updates starting at src[j] (all offsets in elements).
Status apply_updates(KernelContext& ctx, const Tensor& data, const Tensor& updates, const std::vector<int64_t>& dst,
                     int64_t len, Reduction reduction) {
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data.dtype(), data.shape()));
  if (reduction == Reduction::kNone) {
    return dispatch_by_size(data.dtype(), [&]<typename U>() {
      U* py = raw_mutable_data<U>(*y);
      const U* pu = raw_data<U>(updates);
      std::copy_n(raw_data<U>(data), data.numel(), py);
      for (size_t j = 0; j < dst.size(); ++j) std::copy_n(pu + static_cast<int64_t>(j) * len, len, py + dst[j]);
      return Status::OK();
    });
  }
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                         uint16_t, uint32_t, uint64_t>;
  return dispatch_types(Types{}, ctx, data.dtype(), [&]<typename T>() {
    T* py = y->mutable_data<T>();
    const T* pu = updates.data<T>();
    std::copy_n(data.data<T>(), data.numel(), py);
    for (size_t j = 0; j < dst.size(); ++j) {
      T* out = py + dst[j];
      const T* in = pu + static_cast<int64_t>(j) * len;
      for (int64_t i = 0; i < len; ++i) {
        if (reduction == Reduction::kMax || reduction == Reduction::kMin) {
          // NaN wins either way: a NaN update replaces, a NaN already there compares false and stays.
          const bool take = reduction == Reduction::kMax ? in[i] > out[i] : in[i] < out[i];
          if (take || in[i] != in[i]) out[i] = in[i];
        } else if constexpr (std::is_integral_v<T>) {
          using W = WrapType<T>;  // integers wrap, as numpy's in-place add/multiply do
          out[i] = static_cast<T>(reduction == Reduction::kAdd ? static_cast<W>(out[i]) + static_cast<W>(in[i])
                                                               : static_cast<W>(out[i]) * static_cast<W>(in[i]));
        } else {
          out[i] = reduction == Reduction::kAdd ? T(out[i] + in[i]) : T(out[i] * in[i]);
        }
      }
    }
    return Status::OK();
  });
}

Status check_index_type(const KernelContext& ctx, const Tensor& indices) {
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return ctx.fail(StatusCode::kUnsupportedDType, "indices must be int32 or int64, got {}",
                    dtype_name(indices.dtype()));
  }
  return Status::OK();
}

Status scatter_elements_with(KernelContext& ctx, Reduction reduction) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  VN_RETURN_IF_ERROR(check_index_type(ctx, indices));
  if (data.rank() < 1) return ctx.fail(StatusCode::kShapeMismatch, "data must have rank >= 1, got a scalar");
  if (indices.rank() != data.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch, "indices {} must have the rank of data {}",
                    shape_to_string(indices.shape()), shape_to_string(data.shape()));
  }
  if (updates.shape() != indices.shape() || updates.dtype() != data.dtype()) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "updates ({} {}) must have the shape of indices {} and the type of data ({})",
                    dtype_name(updates.dtype()), shape_to_string(updates.shape()), shape_to_string(indices.shape()),
                    dtype_name(data.dtype()));
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), data.rank()));
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d != axis && indices.dim(d) > data.dim(d)) {
      return ctx.fail(StatusCode::kShapeMismatch, "indices {} exceed data {} on axis {}",
                      shape_to_string(indices.shape()), shape_to_string(data.shape()), d);
    }
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, tensor_to_int64s(indices));
  const int64_t axis_dim = data.dim(axis);
  const Shape strides = contiguous_strides(data.shape());
  const auto rank = static_cast<size_t>(data.rank());
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> dst(idx.size());
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;  // offset of `pos` in data without the axis term
  for (size_t j = 0; j < idx.size(); ++j) {
    int64_t v = idx[j];
    if (v < -axis_dim || v >= axis_dim) {
      return ctx.fail(StatusCode::kInvalidModel,
                      "index {} (at flat position {}) is out of bounds for axis {} of size {}", v, j, axis, axis_dim);
    }
    if (v < 0) v += axis_dim;
    dst[j] = base + v * strides[a];
    for (size_t d = rank; d-- > 0;) {
      if (d != a) base += strides[d];
      if (++pos[d] < indices.shape()[d]) break;
      if (d != a) base -= strides[d] * pos[d];
      pos[d] = 0;
    }
  }
  return apply_updates(ctx, data, updates, dst, 1, reduction);
}

Status scatter_elements_11(KernelContext& ctx) { return scatter_elements_with(ctx, Reduction::kNone); }
template <bool kMaxMin>
Status scatter_elements_16(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(Reduction r, read_reduction(ctx, kMaxMin));
  return scatter_elements_with(ctx, r);
}

Status scatter_nd_with(KernelContext& ctx, Reduction reduction) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  VN_RETURN_IF_ERROR(check_index_type(ctx, indices));
  const int64_t r = data.rank();
  const int64_t q = indices.rank();
  if (r < 1 || q < 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "data {} and indices {} must both have rank >= 1",
                    shape_to_string(data.shape()), shape_to_string(indices.shape()));
  }
  const int64_t k = indices.dim(q - 1);
  if (k < 1 || k > r)
    return ctx.fail(StatusCode::kShapeMismatch, "the last indices dimension ({}) must be in [1, {}]", k, r);
  Shape expected(indices.shape().begin(), indices.shape().end() - 1);
  expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
  if (updates.shape() != expected || updates.dtype() != data.dtype()) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "updates must be {} {} (indices.shape[:-1] + data.shape[k:]), got {} {}", dtype_name(data.dtype()),
                    shape_to_string(expected), dtype_name(updates.dtype()), shape_to_string(updates.shape()));
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, tensor_to_int64s(indices));
  const Shape strides = contiguous_strides(data.shape());
  const int64_t slice = shape_product(data.shape(), static_cast<size_t>(k), data.shape().size());
  const size_t tuples = k == 0 ? 0 : idx.size() / static_cast<size_t>(k);
  std::vector<int64_t> dst(tuples);
  for (size_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = idx[t * static_cast<size_t>(k) + static_cast<size_t>(j)];
      const int64_t dim = data.dim(j);
      if (v < -dim || v >= dim) {
        return ctx.fail(StatusCode::kInvalidModel,
                        "index {} (tuple {}, entry {}) is out of bounds for axis {} of size {}", v, t, j, j, dim);
      }
      if (v < 0) v += dim;
      off += v * strides[static_cast<size_t>(j)];
    }
    dst[t] = off;
  }
  return apply_updates(ctx, data, updates, dst, slice, reduction);
}

Status scatter_nd_11(KernelContext& ctx) { return scatter_nd_with(ctx, Reduction::kNone); }
template <bool kMaxMin>
Status scatter_nd_16(KernelContext& ctx) {
  VN_ASSIGN_OR_RETURN(Reduction r, read_reduction(ctx, kMaxMin));
  return scatter_nd_with(ctx, r);
}

/// TensorScatter (opset 24), the KV-cache update: past_cache (B, ..., S_max, ...) receives update
/// (B, ..., S_upd, ...) along `axis` (not 0, the batch axis) at position write_indices[b]
/// (0 when omitted) for each batch entry b; mode "circular" wraps positions modulo S_max, "linear"
/// requires them to fit.
Status tensor_scatter(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& cache = ctx.input(0);
  const Tensor& update = ctx.input(1);
  const std::string mode = ctx.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of linear, circular", mode);
  }
  if (cache.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "past_cache must have a batch and a sequence axis, got shape {}",
                    shape_to_string(cache.shape()));
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -2), cache.rank()));
  if (axis == 0) return ctx.fail(StatusCode::kInvalidModel, "axis must not be 0, the batch axis");
  bool fits = update.dtype() == cache.dtype() && update.rank() == cache.rank();
  for (int64_t i = 0; fits && i < cache.rank(); ++i) {
    fits = i == axis ? update.dim(i) <= cache.dim(i) : update.dim(i) == cache.dim(i);
  }
  if (!fits) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "update ({} {}) must match past_cache ({} {}) but along axis {}, where it may be shorter",
                    dtype_name(update.dtype()), shape_to_string(update.shape()), dtype_name(cache.dtype()),
                    shape_to_string(cache.shape()), axis);
  }
  const int64_t batch = cache.dim(0), max_len = cache.dim(axis), len = update.dim(axis);
  std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    const Tensor& wi = ctx.input(2);
    if (wi.dtype() != DType::kInt64 || wi.shape() != Shape{batch}) {
      return ctx.fail(StatusCode::kInvalidModel, "write_indices must be int64 of shape ({}), got {} {}", batch,
                      dtype_name(wi.dtype()), shape_to_string(wi.shape()));
    }
    VN_ASSIGN_OR_RETURN(starts, tensor_to_int64s(wi));
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = starts[static_cast<size_t>(b)];
    if (at < 0 || (mode == "linear" && (at > max_len || len > max_len - at))) {
      return ctx.fail(StatusCode::kInvalidArgument, "write_indices[{}] = {} does not fit {} updates in {} positions", b,
                      at, len, max_len);
    }
  }
  const auto a = static_cast<size_t>(axis);
  const int64_t mid = shape_product(cache.shape(), 1, a);  // axes between batch and sequence
  const int64_t inner = shape_product(cache.shape(), a + 1, cache.shape().size());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, cache.dtype(), cache.shape()));
  if (y->numel() == 0) return Status::OK();
  return dispatch_by_size(cache.dtype(), [&]<typename U>() {
    const U* pc = raw_data<U>(cache);
    const U* pu = raw_data<U>(update);
    U* py = raw_mutable_data<U>(*y);
    std::copy(pc, pc + cache.numel(), py);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t m = 0; m < mid; ++m) {
        for (int64_t s = 0; s < len; ++s) {
          const int64_t pos = (starts[static_cast<size_t>(b)] % max_len + s) % max_len;
          std::copy_n(pu + ((b * mid + m) * len + s) * inner, inner, py + ((b * mid + m) * max_len + pos) * inner);
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_scatter_ops(OpRegistry& registry) {
  // Scatter-9/11 is ScatterElements without reduction under its pre-11 name (deprecated in 11).
  for (int64_t v : {9, 11}) registry.add("Scatter", v, scatter_elements_11);
  for (int64_t v : {11, 13}) registry.add("ScatterElements", v, scatter_elements_11);
  registry.add("ScatterElements", 16, scatter_elements_16<false>);
  registry.add("ScatterElements", 18, scatter_elements_16<true>);
  for (int64_t v : {11, 13}) registry.add("ScatterND", v, scatter_nd_11);
  registry.add("ScatterND", 16, scatter_nd_16<false>);
  registry.add("ScatterND", 18, scatter_nd_16<true>);
  registry.add("TensorScatter", 24, tensor_scatter);
}

}  // namespace vn::ops
