// SPDX-License-Identifier: Apache-2.0
// RMSNormalization-23 and GroupNormalization-18/21, on float16, bfloat16, float32 and float64.
//
// Both normalize in two stages, as their ONNX function bodies do: the statistics and the
// normalized values in the stash type (stash_type, float32 by default; GroupNormalization-18 has
// none and works in X's type), cast to X's type, then the affine step in X's type. Statistics are
// accumulated in double, variances around the mean; float16 and bfloat16 round after each step
// (float_steps.h).
//
// RMSNormalization: Y = X / sqrt(mean(X^2 over the dims from `axis` on) + epsilon) * scale, with
// scale broadcast to X.
// GroupNormalization: the C channels of X (N, C, ...) form num_groups groups of C / num_groups
// consecutive channels; each (instance, group) is normalized to zero mean and unit variance, then
// Y = normalized * scale + bias with one scale and bias per channel (version 21) or per group
// (version 18, whose inputs have shape (num_groups)).
#include <cmath>
#include <optional>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// The stash type's step rounding, from the stash_type attribute (default float32).
Result<StepRound> stash_rounding(const KernelContext& ctx) {
  const int64_t stash = ctx.attr_int("stash_type", 1);
  const std::optional<DType> dtype = float_dtype_from_onnx(stash);
  if (!dtype) {
    return ctx.fail(StatusCode::kUnsupportedAttr,
                    "stash_type {} is not supported; a float type is (float 1, float16 10, double 11, bfloat16 16)",
                    stash);
  }
  return step_round(*dtype);
}

Status rms_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const DType t = x.dtype();
  VN_ASSIGN_OR_RETURN(std::vector<double> xv, float_input(ctx, 0, "X"));
  if (scale.dtype() != t) {
    return ctx.fail(StatusCode::kUnsupportedDType, "scale ({}) must have X's type ({})", dtype_name(scale.dtype()),
                    dtype_name(t));
  }
  if (!broadcasts_to(scale.shape(), x.shape())) {
    return ctx.fail(StatusCode::kShapeMismatch, "scale of shape {} does not broadcast to X's shape {}",
                    shape_to_string(scale.shape()), shape_to_string(x.shape()));
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank()));
  VN_ASSIGN_OR_RETURN(StepRound rs, stash_rounding(ctx));
  const StepRound r = step_round(t);
  const double epsilon = rs(ctx.attr_float("epsilon", 1e-5f));
  VN_ASSIGN_OR_RETURN(Tensor wide, Tensor::create(t, x.shape()));
  VN_RETURN_IF_ERROR(broadcast_copy(scale, wide));
  VN_ASSIGN_OR_RETURN(std::vector<double> w, tensor_to_doubles(wide));
  const int64_t inner = shape_product(x.shape(), static_cast<size_t>(axis), x.shape().size());
  const int64_t outer = inner > 0 ? x.numel() / inner : 0;
  std::vector<double> y(xv.size());
  for (int64_t o = 0; o < outer; ++o) {
    const size_t base = static_cast<size_t>(o * inner);
    double sum = 0.0;
    for (int64_t i = 0; i < inner; ++i) {
      const double xu = rs(xv[base + static_cast<size_t>(i)]);
      sum += rs(xu * xu);
    }
    const double rms = rs(std::sqrt(rs(rs(sum / static_cast<double>(inner)) + epsilon)));
    for (int64_t i = 0; i < inner; ++i) {
      const size_t at = base + static_cast<size_t>(i);
      y[at] = r(r(rs(rs(xv[at]) / rms)) * w[at]);
    }
  }
  return set_float_output(ctx, 0, t, x.shape(), y);
}

template <int64_t kSince>
Status group_norm(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  VN_ASSIGN_OR_RETURN(std::vector<double> xv, float_input(ctx, 0, "X"));
  if (!ctx.has_attr("num_groups")) return ctx.fail(StatusCode::kInvalidModel, "attribute num_groups is required");
  const int64_t groups = ctx.attr_int("num_groups", 1);
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, ...), got {}", shape_to_string(x.shape()));
  }
  const int64_t channels = x.dim(1);
  if (groups <= 0 || channels % groups != 0) {
    return ctx.fail(StatusCode::kInvalidModel, "num_groups {} must be positive and divide the {} channels", groups,
                    channels);
  }
  StepRound rs = step_round(t);
  if constexpr (kSince >= 21) {
    VN_ASSIGN_OR_RETURN(rs, stash_rounding(ctx));
  }
  const StepRound r = step_round(t);
  const int64_t per = kSince >= 21 ? channels : groups;
  const char* names[] = {"scale", "bias"};
  std::vector<double> params[2];
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& p = ctx.input(i + 1);
    if (p.shape() != Shape{per} || p.dtype() != t) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} must be a {} tensor of shape ({},) (one per {}), got {} {}",
                      names[i], dtype_name(t), per, kSince >= 21 ? "channel" : "group", dtype_name(p.dtype()),
                      shape_to_string(p.shape()));
    }
    VN_ASSIGN_OR_RETURN(params[i], tensor_to_doubles(p));
  }
  const double epsilon = rs(ctx.attr_float("epsilon", 1e-5f));
  const int64_t per_group = channels / groups;
  const int64_t inner = shape_product(x.shape(), 2, x.shape().size());
  const int64_t len = per_group * inner;
  std::vector<double> y(xv.size());
  for (int64_t n = 0; n < x.dim(0); ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const size_t base = static_cast<size_t>((n * groups + g) * len);
      double sum = 0.0;
      for (int64_t i = 0; i < len; ++i) sum += rs(xv[base + static_cast<size_t>(i)]);
      const double mean = rs(sum / static_cast<double>(len));
      double sq = 0.0;
      for (int64_t i = 0; i < len; ++i) {
        const double dev = rs(rs(xv[base + static_cast<size_t>(i)]) - mean);
        sq += dev * dev;
      }
      const double stddev = rs(std::sqrt(rs(rs(sq / static_cast<double>(len)) + epsilon)));
      for (int64_t i = 0; i < len; ++i) {
        const size_t at = base + static_cast<size_t>(i);
        const auto c = static_cast<size_t>(kSince >= 21 ? g * per_group + i / inner : g);
        const double normalized = r(rs(rs(rs(xv[at]) - mean) / stddev));
        y[at] = r(r(params[0][c] * normalized) + params[1][c]);
      }
    }
  }
  return set_float_output(ctx, 0, t, x.shape(), y);
}

}  // namespace

void register_rms_group_norm_ops(OpRegistry& registry) {
  registry.add("RMSNormalization", 23, rms_norm);
  registry.add("GroupNormalization", 18, group_norm<18>);
  registry.add("GroupNormalization", 21, group_norm<21>);
}

}  // namespace vn::ops
