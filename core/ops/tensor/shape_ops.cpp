// SPDX-License-Identifier: Apache-2.0
// Ops that change only the shape, or read it: Reshape, Flatten, Squeeze, Unsqueeze, Identity (all
// zero-copy views of the input), Shape and Size.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// ---- Reshape -----------------------------------------------------------------------------------

/// Resolves a Reshape target: 0 copies the input dim at the same index (or is a literal 0 with
/// allowzero), and a single -1 is inferred from the element count.
Result<Shape> reshape_target(const KernelContext& ctx, const Shape& in, const std::vector<int64_t>& spec,
                             bool allow_zero) {
  Shape out(spec.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) {
        return ctx.fail(StatusCode::kInvalidModel, "shape {} has more than one -1", ints_to_string(spec));
      }
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) {
      return ctx.fail(StatusCode::kInvalidModel, "shape {} has invalid dimension {}", ints_to_string(spec), d);
    }
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) {
        return ctx.fail(StatusCode::kShapeMismatch, "shape {} copies dim {} (0) but the input {} has rank {}",
                        ints_to_string(spec), i, shape_to_string(in), in.size());
      }
      out[i] = in[i];
    } else {
      out[i] = d;
      has_zero = has_zero || d == 0;
    }
    if (out[i] > 0 && known > std::numeric_limits<int64_t>::max() / out[i]) {
      return ctx.fail(StatusCode::kShapeMismatch, "shape {} is too large", ints_to_string(spec));
    }
    known *= out[i];
  }
  const int64_t numel = shape_numel(in);
  if (infer_at >= 0) {
    if (allow_zero && has_zero) {
      return ctx.fail(StatusCode::kInvalidModel, "shape {} has both -1 and a literal 0 with allowzero=1",
                      ints_to_string(spec));
    }
    if (known == 0 || numel % known != 0) {
      return ctx.fail(StatusCode::kShapeMismatch, "cannot infer the -1 in {} for input {} of {} elements",
                      ints_to_string(spec), shape_to_string(in), numel);
    }
    out[static_cast<size_t>(infer_at)] = numel / known;
  } else if (known != numel) {
    return ctx.fail(StatusCode::kShapeMismatch, "cannot reshape input {} ({} elements) to {} ({} elements)",
                    shape_to_string(in), numel, ints_to_string(spec), known);
  }
  return out;
}

// Reshape-1: the target is the `shape` attribute.
Status reshape_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("shape")) return ctx.fail(StatusCode::kInvalidModel, "attribute shape is required");
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(Shape out, reshape_target(ctx, x.shape(), ctx.attr_ints("shape"), false));
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::OK();
}

// Reshape-5+: the target is input 1; allowzero exists from opset 14.
Status reshape_5(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> spec, input_int64s(ctx, 1, "shape"));
  VN_ASSIGN_OR_RETURN(Shape out, reshape_target(ctx, x.shape(), spec, ctx.attr_int("allowzero", 0) != 0));
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::OK();
}

// ---- Flatten -----------------------------------------------------------------------------------

template <bool kNegativeAxis>
Status flatten(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.attr_int("axis", 1);
  const int64_t lowest = kNegativeAxis ? -rank : 0;
  if (axis < lowest || axis > rank) {
    return ctx.fail(StatusCode::kInvalidModel, "axis {} is not in valid range [{}, {}]", axis, lowest, rank);
  }
  if (axis < 0) axis += rank;
  const auto a = static_cast<size_t>(axis);
  ctx.set_output(0, x.reshaped({shape_product(x.shape(), 0, a), shape_product(x.shape(), a, x.shape().size())}));
  return Status::OK();
}

// ---- Squeeze / Unsqueeze -----------------------------------------------------------------------

Status squeeze_with(KernelContext& ctx, const std::optional<std::vector<int64_t>>& axes) {
  const Tensor& x = ctx.input(0);
  Shape out;
  if (!axes) {
    for (int64_t d : x.shape()) {
      if (d != 1) out.push_back(d);
    }
  } else {
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalize_axes(ctx, *axes, x.rank()));
    for (int64_t a : norm) {
      if (x.dim(a) != 1) {
        return ctx.fail(StatusCode::kShapeMismatch, "cannot squeeze axis {} of input {}: its size is {}, not 1", a,
                        shape_to_string(x.shape()), x.dim(a));
      }
    }
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (std::find(norm.begin(), norm.end(), i) == norm.end()) out.push_back(x.dim(i));
    }
  }
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::OK();
}

Status squeeze_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes");
  return squeeze_with(ctx, axes);
}

Status squeeze_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto axes, optional_input_int64s(ctx, 1, "axes"));
  return squeeze_with(ctx, axes);
}

Status unsqueeze_with(KernelContext& ctx, const std::vector<int64_t>& axes) {
  const Tensor& x = ctx.input(0);
  const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalize_axes(ctx, axes, out_rank));
  Shape out(static_cast<size_t>(out_rank), 1);
  size_t src = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) == norm.end()) out[static_cast<size_t>(i)] = x.shape()[src++];
  }
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::OK();
}

Status unsqueeze_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("axes")) return ctx.fail(StatusCode::kInvalidModel, "attribute axes is required");
  return unsqueeze_with(ctx, ctx.attr_ints("axes"));
}

Status unsqueeze_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, input_int64s(ctx, 1, "axes"));
  return unsqueeze_with(ctx, axes);
}

// ---- Identity, Shape, Size ---------------------------------------------------------------------

Status identity(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  ctx.set_output(0, ctx.input(0));
  return Status::OK();
}

Status shape_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Shape& in = ctx.input(0).shape();
  const auto rank = static_cast<int64_t>(in.size());
  // Shape-15 start/end: negative values count from the back, then both clamp to [0, rank].
  auto clamp_index = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  const int64_t start = clamp_index(ctx.attr_int("start", 0));
  const int64_t end = ctx.has_attr("end") ? clamp_index(ctx.attr_int("end", rank)) : rank;
  const int64_t count = std::max<int64_t>(end - start, 0);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {count}));
  if (count > 0) std::copy_n(in.begin() + start, count, y->mutable_data<int64_t>());
  return Status::OK();
}

Status size_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {}));
  y->mutable_data<int64_t>()[0] = ctx.input(0).numel();
  return Status::OK();
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  // Versions 19, 21, 23, 24 and 25 of these ops only added element types (float8, int4, float4,
  // float8e8m0, int2), which Vernier refuses when it reads a tensor of them.
  registry.add("Reshape", 1, reshape_1);
  for (int64_t v : {5, 13, 14, 19, 21, 23, 24, 25}) registry.add("Reshape", v, reshape_5);
  for (int64_t v : {1, 9}) registry.add("Flatten", v, flatten<false>);
  for (int64_t v : {11, 13, 21, 23, 24, 25}) registry.add("Flatten", v, flatten<true>);
  for (int64_t v : {1, 11}) {
    registry.add("Squeeze", v, squeeze_1);
    registry.add("Unsqueeze", v, unsqueeze_1);
  }
  for (int64_t v : {13, 21, 23, 24, 25}) {
    registry.add("Squeeze", v, squeeze_13);
    registry.add("Unsqueeze", v, unsqueeze_13);
  }
  for (int64_t v : {1, 13, 14, 16, 19, 21, 23, 24, 25}) registry.add("Identity", v, identity);
  for (int64_t v : {1, 13, 15, 19, 21, 23, 24, 25}) registry.add("Shape", v, shape_kernel);
  for (int64_t v : {1, 13, 19, 21, 23, 24, 25}) registry.add("Size", v, size_kernel);
}

}  // namespace vn::ops
