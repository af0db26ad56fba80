// SPDX-License-Identifier: Apache-2.0
// LinearAttention-27: the recurrent (linear) attention of RetNet, GLA, DeltaNet and Gated
// DeltaNet, step by step over the sequence as ONNX's function body does (a Scan over time).
//
// query (B, T, Hq * dk), key (B, T, Hkv * dk) and value (B, T, Hkv * dv) are split into heads;
// each key/value head h carries a state S (dk, dv), from past_state (B, Hkv, dk, dv) or zeros.
// At each step t, for update_rule:
//   gated, gated_delta: S = S * exp(decay_t), decay (B, T, Hkv) per head or (B, T, Hkv * dk) per
//                       key feature (a log-space forget gate);
//   delta, gated_delta: v_t = beta_t * (v_t - S^T k_t), beta (B, T, Hkv) or (B, T, 1);
//   all:                S = S + k_t v_t^T, and query head g reads o_t = scale * q_t S of key/value
//                       head g / (Hq / Hkv);
// linear uses none of decay and beta, gated only decay, delta only beta (the default rule,
// gated_delta, both). scale defaults (absent or 0) to 1/sqrt(dk). The output is (B, T, Hq * dv)
// and present_state the final S, both in the query's type; the recurrence runs in float32 in the
// standard, in double here. chunk_size is a tuning hint that cannot change the result.
#include <cmath>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status linear_attention(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3, 2));
  ctx.ignore_attrs({"chunk_size"});
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const DType t = q.dtype();
  const std::string rule = ctx.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    return ctx.fail(StatusCode::kUnsupportedAttr,
                    "update_rule \"{}\" is not one of \"linear\", \"gated\", \"delta\", \"gated_delta\"", rule);
  }
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (!ctx.has_attr("q_num_heads") || !ctx.has_attr("kv_num_heads")) {
    return ctx.fail(StatusCode::kInvalidModel, "attributes q_num_heads and kv_num_heads are required");
  }
  const int64_t hq = ctx.attr_int("q_num_heads", 0);
  const int64_t hkv = ctx.attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0) {
    return ctx.fail(StatusCode::kInvalidModel, "q_num_heads {} must be a positive multiple of kv_num_heads {}", hq, hkv);
  }
  if (gated != ctx.has_input(4) || delta != ctx.has_input(5)) {
    return ctx.fail(StatusCode::kInvalidModel, "update_rule \"{}\" {} decay and {} beta", rule,
                    gated ? "needs" : "takes no", delta ? "needs" : "takes no");
  }
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3 || k.dtype() != t || v.dtype() != t ||
      k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0) || k.dim(1) != q.dim(1) || v.dim(1) != q.dim(1) ||
      q.dim(2) % hq != 0 || k.dim(2) != q.dim(2) / hq * hkv || v.dim(2) % hkv != 0) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "query (B, T, {} * dk), key (B, T, {} * dk) and value (B, T, {} * dv) of one type expected, got {} "
                    "{}, {} and {}",
                    hq, hkv, hkv, dtype_name(t), shape_to_string(q.shape()), shape_to_string(k.shape()),
                    shape_to_string(v.shape()));
  }
  const int64_t batch = q.dim(0), steps = q.dim(1), dk = q.dim(2) / hq, dv = v.dim(2) / hkv, group = hq / hkv;
  VN_ASSIGN_OR_RETURN(std::vector<double> qv, float_input(ctx, 0, "query"));
  VN_ASSIGN_OR_RETURN(std::vector<double> kv, tensor_to_doubles(k));
  VN_ASSIGN_OR_RETURN(std::vector<double> vv, tensor_to_doubles(v));
  std::vector<double> state(static_cast<size_t>(batch * hkv * dk * dv), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& p = ctx.input(3);
    if (p.dtype() != t || p.shape() != Shape{batch, hkv, dk, dv}) {
      return ctx.fail(StatusCode::kShapeMismatch, "past_state must be {} of shape ({}, {}, {}, {}), got {} {}",
                      dtype_name(t), batch, hkv, dk, dv, dtype_name(p.dtype()), shape_to_string(p.shape()));
    }
    VN_ASSIGN_OR_RETURN(state, tensor_to_doubles(p));
  }
  std::vector<double> decay, beta;
  int64_t decay_width = 0, beta_width = 0;  // features per step: hkv or hkv * dk; hkv or 1
  if (gated) {
    const Tensor& d = ctx.input(4);
    decay_width = d.rank() == 3 ? d.dim(2) : -1;
    if (d.dtype() != t || d.rank() != 3 || d.dim(0) != batch || d.dim(1) != steps ||
        (decay_width != hkv && decay_width != hkv * dk)) {
      return ctx.fail(StatusCode::kShapeMismatch, "decay must be {} of shape ({}, {}, {} or {}), got {} {}",
                      dtype_name(t), batch, steps, hkv, hkv * dk, dtype_name(d.dtype()), shape_to_string(d.shape()));
    }
    VN_ASSIGN_OR_RETURN(decay, tensor_to_doubles(d));
  }
  if (delta) {
    const Tensor& b = ctx.input(5);
    beta_width = b.rank() == 3 ? b.dim(2) : -1;
    if (b.dtype() != t || b.rank() != 3 || b.dim(0) != batch || b.dim(1) != steps ||
        (beta_width != hkv && beta_width != 1)) {
      return ctx.fail(StatusCode::kShapeMismatch, "beta must be {} of shape ({}, {}, {} or 1), got {} {}",
                      dtype_name(t), batch, steps, hkv, dtype_name(b.dtype()), shape_to_string(b.shape()));
    }
    VN_ASSIGN_OR_RETURN(beta, tensor_to_doubles(b));
  }
  const float scale_attr = ctx.attr_float("scale", 0.0f);
  const double scale = scale_attr != 0.0f ? scale_attr : 1.0f / std::sqrt(static_cast<float>(dk));

  std::vector<double> out(static_cast<size_t>(batch * steps * hq * dv));
  std::vector<double> vt(static_cast<size_t>(dv));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t ts = 0; ts < steps; ++ts) {
      const int64_t bt = b * steps + ts;
      for (int64_t h = 0; h < hkv; ++h) {
        double* s = state.data() + (b * hkv + h) * dk * dv;
        const double* kt = kv.data() + (bt * hkv + h) * dk;
        std::copy_n(vv.begin() + (bt * hkv + h) * dv, dv, vt.begin());
        if (gated) {
          for (int64_t i = 0; i < dk; ++i) {
            const double g = std::exp(decay_width == hkv ? decay[static_cast<size_t>(bt * hkv + h)]
                                                         : decay[static_cast<size_t>((bt * hkv + h) * dk + i)]);
            for (int64_t m = 0; m < dv; ++m) s[i * dv + m] *= g;
          }
        }
        if (delta) {
          const double bb = beta[static_cast<size_t>(bt * beta_width + (beta_width == 1 ? 0 : h))];
          for (int64_t m = 0; m < dv; ++m) {
            double retrieved = 0.0;
            for (int64_t i = 0; i < dk; ++i) retrieved += s[i * dv + m] * kt[i];
            vt[static_cast<size_t>(m)] = bb * (vt[static_cast<size_t>(m)] - retrieved);
          }
        }
        for (int64_t i = 0; i < dk; ++i) {
          for (int64_t m = 0; m < dv; ++m) s[i * dv + m] += kt[i] * vt[static_cast<size_t>(m)];
        }
        for (int64_t g = h * group; g < (h + 1) * group; ++g) {
          const double* qt = qv.data() + (bt * hq + g) * dk;
          double* o = out.data() + (bt * hq + g) * dv;
          for (int64_t m = 0; m < dv; ++m) {
            double acc = 0.0;
            for (int64_t i = 0; i < dk; ++i) acc += qt[i] * s[i * dv + m];
            o[m] = scale * acc;
          }
        }
      }
    }
  }
  VN_RETURN_IF_ERROR(set_float_output(ctx, 0, t, {batch, steps, hq * dv}, out));
  return set_float_output(ctx, 1, t, {batch, hkv, dk, dv}, state);
}

}  // namespace

void register_linear_attention_ops(OpRegistry& registry) { registry.add("LinearAttention", 27, linear_attention); }

}  // namespace vn::ops
