// SPDX-License-Identifier: Apache-2.0
// BatchNormalization in inference mode: Y = (X - mean) / sqrt(var + epsilon) * scale + B per
// channel (dim 1). Training statistics are not computed: a node asking for training mode is
// refused, and the optional statistics outputs of opsets 1-9 (running and saved mean/var) are
// filled with the running statistics passed in, which inference leaves unchanged.
#include <cmath>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

template <int64_t kSince>
Status batch_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 5));
  const Tensor& x = ctx.input(0);
  if constexpr (kSince < 9) {
    if (ctx.attr_int("spatial", 1) != 1) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "spatial=0 (per-activation statistics) is not supported; only spatial=1 is");
    }
  }
  if constexpr (kSince >= 14) {
    if (ctx.attr_int("training_mode", 0) != 0) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "training_mode=1 computes batch statistics; the reference runs inference only (set it to 0)");
    }
  }
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, ...), got {}", shape_to_string(x.shape()));
  }
  const int64_t channels = x.dim(1);
  const char* names[] = {"scale", "B", "mean", "var"};
  std::vector<double> params[4];
  for (size_t i = 0; i < 4; ++i) {
    const Tensor& p = ctx.input(i + 1);
    if (p.shape() != Shape{channels}) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} must have shape ({},) for {} channels, got {}", names[i],
                      channels, channels, shape_to_string(p.shape()));
    }
    // Opset 15 lets scale/B and mean/var have types other than X's; reading them as double covers
    // every combination.
    Result<std::vector<double>> values = tensor_to_doubles(p);
    if (!values.ok() || !dtype_is_float(p.dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType, "{} must be a float tensor, got {}", names[i],
                      dtype_name(p.dtype()));
    }
    params[i] = std::move(values).value();
  }
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t batch = x.dim(0);
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  VN_RETURN_IF_ERROR(dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      const auto ci = static_cast<size_t>(c);
      const T factor = static_cast<T>(params[0][ci] / std::sqrt(params[3][ci] + epsilon));
      const T mean = static_cast<T>(params[2][ci]);
      const T shift = static_cast<T>(params[1][ci]);
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t off = (n * channels + c) * inner;
        ArrayMap<T>(py + off, inner) = (ConstArrayMap<T>(px + off, inner) - mean) * factor + shift;
      }
    }
    return Status::OK();
  }));
  // Statistics outputs: (running) mean and var, then saved mean and var (opsets < 14 only).
  const size_t stats[] = {3, 4, 3, 4};
  for (size_t o = 1; o < ctx.output_count() && o <= 4; ++o) {
    if (output_requested(ctx, o)) ctx.set_output(o, ctx.input(stats[o - 1]));
  }
  return Status::OK();
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  registry.add("BatchNormalization", 1, batch_norm<1>);
  registry.add("BatchNormalization", 6, batch_norm<6>);
  registry.add("BatchNormalization", 7, batch_norm<7>);
  registry.add("BatchNormalization", 9, batch_norm<9>);
  registry.add("BatchNormalization", 14, batch_norm<14>);
  registry.add("BatchNormalization", 15, batch_norm<15>);
}

}  // namespace vn::ops
