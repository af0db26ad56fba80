// SPDX-License-Identifier: Apache-2.0
// Dropout in inference mode: the output is the input (a zero-copy view) and the optional mask is
// all true (bool from opset 10, the data type with value 1 before). The reference interpreter runs
// inference, so opsets 1 and 6 ignore is_test; from opset 12 an explicit training_mode=true input
// with a non-zero ratio would need random numbers and is refused.
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

template <bool kBoolMask>
Status write_mask(KernelContext& ctx) {
  if (!output_requested(ctx, 1)) return Status::OK();
  const Tensor& x = ctx.input(0);
  if constexpr (kBoolMask) {
    VN_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, DType::kBool, x.shape()));
    if (mask->numel() > 0) ArrayMap<bool>(mask->mutable_data<bool>(), mask->numel()).setConstant(true);
    return Status::OK();
  } else {
    return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
      VN_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, x.dtype(), x.shape()));
      if (mask->numel() > 0) ArrayMap<T>(mask->mutable_data<T>(), mask->numel()).setConstant(T(1));
      return Status::OK();
    });
  }
}

template <bool kBoolMask>
Status dropout_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  // The ratio only matters to the random drops of training, which inference never makes.
  ctx.ignore_attrs({"ratio", "is_test"});
  ctx.set_output(0, ctx.input(0));
  return write_mask<kBoolMask>(ctx);
}

Status dropout_12(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  // The seed drives the random drops of training mode, which are refused below.
  ctx.ignore_attrs({"seed"});
  double ratio = 0.5;
  if (ctx.has_input(1)) {
    Result<std::vector<double>> r = tensor_to_doubles(ctx.input(1));
    if (!r.ok()) return ctx.fail(StatusCode::kInvalidModel, "ratio: {}", r.status().message());
    if (r->size() != 1) return ctx.fail(StatusCode::kInvalidModel, "ratio must be a scalar");
    ratio = (*r)[0];
  }
  if (ctx.has_input(2)) {
    const Tensor& training = ctx.input(2);
    if (training.dtype() != DType::kBool || training.numel() != 1) {
      return ctx.fail(StatusCode::kInvalidModel, "training_mode must be a bool scalar, got {} {}",
                      dtype_name(training.dtype()), shape_to_string(training.shape()));
    }
    if (training.data<bool>()[0] && ratio != 0.0) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "training_mode=true with ratio {} drops random elements; the reference runs inference only",
                      ratio);
    }
  }
  ctx.set_output(0, ctx.input(0));
  return write_mask<true>(ctx);
}

}  // namespace

void register_dropout_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6, 7}) registry.add("Dropout", v, dropout_1<false>);
  registry.add("Dropout", 10, dropout_1<true>);
  // Dropout-22 only added float8 ratios and bfloat16.
  for (int64_t v : {12, 13, 22}) registry.add("Dropout", v, dropout_12);
}

}  // namespace vn::ops
