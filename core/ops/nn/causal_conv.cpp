// SPDX-License-Identifier: Apache-2.0
// CausalConvWithState-27: a depthwise causal 1-D convolution that carries its left context from
// call to call, as in state-space and linear-attention models.
//
// input (B, C, L) is prefixed along L with past_state (B, C, K - 1) (zeros when omitted); each
// channel c is convolved with its own kernel weight[c, 0, :] (weight (C, 1, K)), without padding,
// stride or dilation, plus bias[c]; activation "silu" (or its alias "swish") then applies
// x * sigmoid(x) in float32, "none" (the default) nothing. present_state is the last K - 1 steps
// of the prefixed input. The sums are in double and round once to the input's type, as ONNX's
// reference convolution does.
#include <cmath>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status causal_conv_with_state(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const DType t = x.dtype();
  const std::string activation = ctx.attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return ctx.fail(StatusCode::kUnsupportedAttr, "activation \"{}\" is not one of \"none\", \"silu\", \"swish\"",
                    activation);
  }
  if (x.rank() != 3 || w.rank() != 3 || w.dim(0) != x.dim(1) || w.dim(1) != 1 || w.dim(2) < 1 || w.dtype() != t) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "input must be (batch, channels, length) and weight (channels, 1, kernel) of its type, got {} {} "
                    "and {} {}",
                    dtype_name(t), shape_to_string(x.shape()), dtype_name(w.dtype()), shape_to_string(w.shape()));
  }
  const int64_t batch = x.dim(0), channels = x.dim(1), len = x.dim(2), kernel = w.dim(2);
  const int64_t ctx_len = kernel - 1;
  VN_ASSIGN_OR_RETURN(std::vector<double> xv, float_input(ctx, 0, "input"));
  VN_ASSIGN_OR_RETURN(std::vector<double> wv, tensor_to_doubles(w));
  std::vector<double> bias(static_cast<size_t>(channels), 0.0);
  if (ctx.has_input(2)) {
    const Tensor& b = ctx.input(2);
    if (b.shape() != Shape{channels} || b.dtype() != t) {
      return ctx.fail(StatusCode::kShapeMismatch, "bias must be {} of shape ({},), got {} {}", dtype_name(t), channels,
                      dtype_name(b.dtype()), shape_to_string(b.shape()));
    }
    VN_ASSIGN_OR_RETURN(bias, tensor_to_doubles(b));
  }
  std::vector<double> past(static_cast<size_t>(batch * channels * ctx_len), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& p = ctx.input(3);
    if (p.shape() != Shape{batch, channels, ctx_len} || p.dtype() != t) {
      return ctx.fail(StatusCode::kShapeMismatch, "past_state must be {} of shape ({}, {}, {}), got {} {}",
                      dtype_name(t), batch, channels, ctx_len, dtype_name(p.dtype()), shape_to_string(p.shape()));
    }
    VN_ASSIGN_OR_RETURN(past, tensor_to_doubles(p));
  }
  const StepRound r = step_round(t);
  const bool silu = activation != "none";
  const int64_t padded_len = ctx_len + len;
  std::vector<double> y(xv.size()), present(past.size()), padded(static_cast<size_t>(padded_len));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t bc = b * channels + c;
      std::copy_n(past.begin() + bc * ctx_len, ctx_len, padded.begin());
      std::copy_n(xv.begin() + bc * len, len, padded.begin() + ctx_len);
      const double* kc = wv.data() + c * kernel;
      for (int64_t i = 0; i < len; ++i) {
        double acc = 0.0;
        for (int64_t k = 0; k < kernel; ++k) acc += padded[static_cast<size_t>(i + k)] * kc[k];
        double v = r(acc + bias[static_cast<size_t>(c)]);
        if (silu) v = v / (1.0 + std::exp(-v));
        y[static_cast<size_t>(bc * len + i)] = v;
      }
      std::copy_n(padded.begin() + len, ctx_len, present.begin() + bc * ctx_len);
    }
  }
  VN_RETURN_IF_ERROR(set_float_output(ctx, 0, t, x.shape(), y));
  return set_float_output(ctx, 1, t, {batch, channels, ctx_len}, present);
}

}  // namespace

void register_causal_conv_ops(OpRegistry& registry) {
  registry.add("CausalConvWithState", 27, causal_conv_with_state);
}

}  // namespace vn::ops
