// SPDX-License-Identifier: Apache-2.0
#include "core/ops/kernel_util.h"

#include <algorithm>

namespace vn::ops {

Status unsupported_dtype(const KernelContext& ctx, DType dtype, std::initializer_list<DType> supported) {
  std::string list;
  for (DType d : supported) {
    if (!list.empty()) list += ", ";
    list += dtype_name(d);
  }
  return ctx.fail(StatusCode::kUnsupportedDType, "input of type {} is not supported (supported: {})", dtype_name(dtype),
                  list);
}

Status check_arity(const KernelContext& ctx, size_t min_inputs, size_t min_outputs) {
  if (ctx.input_count() < min_inputs) {
    return ctx.fail(StatusCode::kInvalidModel, "expects at least {} inputs, got {}", min_inputs, ctx.input_count());
  }
  for (size_t i = 0; i < min_inputs; ++i) {
    if (!ctx.has_input(i)) return ctx.fail(StatusCode::kInvalidModel, "required input {} is missing", i);
  }
  if (ctx.output_count() < min_outputs) {
    return ctx.fail(StatusCode::kInvalidModel, "expects at least {} outputs, got {}", min_outputs, ctx.output_count());
  }
  return Status::OK();
}

bool output_requested(const KernelContext& ctx, size_t i) {
  return i < ctx.output_count() && i < ctx.node().outputs.size() && !ctx.node().outputs[i].empty();
}

Result<std::vector<int64_t>> input_int64s(const KernelContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.fail(StatusCode::kInvalidModel, "input '{}' is missing", what);
  const Tensor& t = ctx.input(i);
  if (t.rank() > 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "input '{}' must be 1-D, got shape {}", what,
                    shape_to_string(t.shape()));
  }
  Result<std::vector<int64_t>> values = tensor_to_int64s(t);
  if (!values.ok()) {
    return ctx.fail(StatusCode::kUnsupportedDType, "input '{}' must be an integer tensor, got {}", what,
                    dtype_name(t.dtype()));
  }
  return values;
}

Result<std::optional<std::vector<int64_t>>> optional_input_int64s(const KernelContext& ctx, size_t i,
                                                                  std::string_view what) {
  if (!ctx.has_input(i)) return std::optional<std::vector<int64_t>>();
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> values, input_int64s(ctx, i, what));
  return std::optional<std::vector<int64_t>>(std::move(values));
}

Result<std::vector<int64_t>> normalize_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    VN_ASSIGN_OR_RETURN(int64_t n, normalize_axis(ctx, a, rank));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return ctx.fail(StatusCode::kInvalidModel, "axis {} is repeated in axes", a);
    }
    out.push_back(n);
  }
  return out;
}

int64_t shape_product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace vn::ops
