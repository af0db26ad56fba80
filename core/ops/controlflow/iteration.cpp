// SPDX-License-Identifier: Apache-2.0
#include "core/ops/controlflow/iteration.h"

#include <algorithm>
#include <cstddef>

#include "core/ops/kernel_util.h"

namespace vn::ops {

Result<const Graph*> required_body(const KernelContext& ctx, const char* name) {
  const Graph* body = ctx.attr_graph(name);
  if (!body) return ctx.fail(StatusCode::kInvalidModel, "graph attribute '{}' is required", name);
  return body;
}

Status check_body_signature(const KernelContext& ctx, const Graph& body, const char* what, size_t inputs,
                            size_t outputs) {
  if (body.inputs.size() != inputs || body.outputs.size() != outputs) {
    return ctx.fail(StatusCode::kInvalidModel, "{} '{}' has {} inputs and {} outputs, but {} and {} are needed", what,
                    body.name, body.inputs.size(), body.outputs.size(), inputs, outputs);
  }
  return Status::OK();
}

Result<bool> read_condition(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::kBool || t.numel() != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "{} must be a bool tensor of one element, got {} {}", what,
                    dtype_name(t.dtype()), shape_to_string(t.shape()));
  }
  return t.data<bool>()[0];
}

Tensor slice_along(const Tensor& t, int64_t axis, int64_t index) {
  Shape shape = t.shape();
  const int64_t len = shape[static_cast<size_t>(axis)];
  shape.erase(shape.begin() + axis);
  Tensor out(t.dtype(), shape);
  const int64_t outer = shape_product(t.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(t.shape(), static_cast<size_t>(axis) + 1, t.shape().size());
  (void)dispatch_by_size(t.dtype(), [&]<typename U>() {
    const U* src = raw_data<U>(t);
    U* dst = raw_mutable_data<U>(out);
    for (int64_t o = 0; o < outer; ++o) {
      std::copy_n(src + (o * len + index) * inner, inner, dst + o * inner);
    }
    return Status::OK();
  });
  return out;
}

Status Stacker::append(const KernelContext& ctx, const Tensor& element) {
  if (!parts_.empty()) {
    const Tensor& first = parts_.front();
    if (element.dtype() != first.dtype() || element.shape() != first.shape()) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} is {} {} in iteration {} but was {} {} before", what_,
                      dtype_name(element.dtype()), shape_to_string(element.shape()), parts_.size(),
                      dtype_name(first.dtype()), shape_to_string(first.shape()));
    }
  }
  Shape stacked = element.shape();
  stacked.insert(stacked.begin(), count() + 1);
  Result<int64_t> numel = shape_numel_checked(stacked, element.dtype());
  if (!numel.ok()) return ctx.fail(numel.status().code(), "{}: {}", what_, numel.status().message());
  parts_.push_back(element);
  return Status::OK();
}

Result<Tensor> Stacker::stack(const KernelContext& ctx, int64_t axis, bool reverse, const ValueInfo& declared) const {
  if (parts_.empty()) {
    if (!declared.dtype) {
      return ctx.fail(StatusCode::kInvalidModel, "{} has no iterations and the body declares no type for it", what_);
    }
    Shape shape;
    if (declared.shape) {
      for (const Dim& d : *declared.shape) shape.push_back(d.known() ? d.value : 0);
    } else {
      shape.push_back(0);
    }
    const size_t at = std::min(static_cast<size_t>(axis), shape.size());
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(at), 0);
    return Tensor::create(*declared.dtype, shape);
  }
  const Tensor& first = parts_.front();
  const int64_t n = count();
  Shape shape = first.shape();
  shape.insert(shape.begin() + axis, n);
  VN_ASSIGN_OR_RETURN(Tensor out, Tensor::create(first.dtype(), shape));
  const int64_t outer = shape_product(first.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = shape_product(first.shape(), static_cast<size_t>(axis), first.shape().size());
  VN_RETURN_IF_ERROR(dispatch_by_size(first.dtype(), [&]<typename U>() {
    U* dst = raw_mutable_data<U>(out);
    for (int64_t k = 0; k < n; ++k) {
      const U* src = raw_data<U>(parts_[static_cast<size_t>(k)]);
      const int64_t pos = reverse ? n - 1 - k : k;
      for (int64_t o = 0; o < outer; ++o) std::copy_n(src + o * inner, inner, dst + (o * n + pos) * inner);
    }
    return Status::OK();
  }));
  return out;
}

}  // namespace vn::ops
