// SPDX-License-Identifier: Apache-2.0
// ReverseSequence: reverses the first sequence_lens[b] steps of each batch entry along the time
// axis; later steps are copied unchanged.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status reverse_sequence(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must have rank >= 2, got shape {}", shape_to_string(x.shape()));
  }
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return ctx.fail(StatusCode::kInvalidModel, "time_axis and batch_axis must be 0 and 1 in some order, got {} and {}",
                    time_axis, batch_axis);
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> lens, input_int64s(ctx, 1, "sequence_lens"));
  const int64_t steps = x.dim(time_axis);
  const int64_t batch = x.dim(batch_axis);
  if (static_cast<int64_t>(lens.size()) != batch) {
    return ctx.fail(StatusCode::kShapeMismatch, "sequence_lens has {} entries but the batch axis has size {}",
                    lens.size(), batch);
  }
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0 || lens[b] > steps) {
      return ctx.fail(StatusCode::kInvalidModel, "sequence_lens[{}] = {} is outside [0, {}]", b, lens[b], steps);
    }
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  const int64_t time_stride = (time_axis == 0 ? batch : 1) * inner;
  const int64_t batch_stride = (batch_axis == 0 ? steps : 1) * inner;
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t src_t = t < len ? len - 1 - t : t;
        std::copy_n(px + b * batch_stride + src_t * time_stride, inner, py + b * batch_stride + t * time_stride);
      }
    }
    return Status::OK();
  });
}

}  // namespace

// ReverseSequence-28 only added bfloat16.
void register_reverse_sequence_ops(OpRegistry& registry) {
  for (int64_t v : {10, 28}) registry.add("ReverseSequence", v, reverse_sequence);
}

}  // namespace vn::ops
