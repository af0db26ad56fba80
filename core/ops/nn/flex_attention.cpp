// SPDX-License-Identifier: Apache-2.0
// FlexAttention-1 (domain ai.onnx.preview): scaled dot-product attention whose scores and
// probabilities pass through user graphs, as ONNX's function body computes it.
//
// Q (B, Hq, L, D), K (B, Hkv, S, D), V (B, Hkv, S, Dv); query head h reads key/value head
// h / (Hq / Hkv). With s = sqrt(scale) (scale defaulting to 1/sqrt(D), both in float32, cast to T):
//   scores = (Q*s) @ (K*s)^T in T, cast to the softmax precision P
//   scores = score_mod(scores)          (a graph of one input and one output, both (B, Hq, L, S))
//   probs  = softmax(scores) over S, in P
//   probs  = prob_mod(probs)
//   Y      = probs @ V, in P, cast to T
// P is softmax_precision, by default T for float32 and float64 and float32 for float16 and
// bfloat16. float16 and bfloat16 steps round as the body's (float_steps.h).
#include <cmath>
#include <optional>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"
#include "core/ops/nn/attention_util.h"

namespace vn::ops {
namespace {

/// Runs `body` (a score_mod or prob_mod attribute) on `values` of `shape` as a tensor of type `p`
/// and returns its single output, which must keep the shape.
Result<std::vector<double>> run_mod(const KernelContext& ctx, const Graph& body, std::string_view name,
                                    const std::vector<double>& values, const Shape& shape, DType p) {
  if (body.inputs.size() != 1 || body.outputs.size() != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "{} must take one input and return one output, it has {} and {}", name,
                    body.inputs.size(), body.outputs.size());
  }
  VN_ASSIGN_OR_RETURN(Tensor in, Tensor::create(DType::kFloat64, shape));
  std::copy(values.begin(), values.end(), in.mutable_data<double>());
  VN_ASSIGN_OR_RETURN(in, tensor_cast(in, p));
  VN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.run_subgraph(body, std::span<const Tensor>(&in, 1)));
  if (outs.size() != 1 || outs[0].shape() != shape || outs[0].dtype() != p) {
    return ctx.fail(StatusCode::kShapeMismatch, "{} must return one {} tensor of shape {}, got {}", name, dtype_name(p),
                    shape_to_string(shape), outs.empty() ? std::string("nothing") : shape_to_string(outs[0].shape()));
  }
  return tensor_to_doubles(outs[0]);
}

Status flex_attention(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const DType t = q.dtype();
  if (!is_real_float(t) || k.dtype() != t || v.dtype() != t) {
    return ctx.fail(StatusCode::kUnsupportedDType, "Q, K and V must share one float type, got {}, {} and {}",
                    dtype_name(t), dtype_name(k.dtype()), dtype_name(v.dtype()));
  }
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4 || k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0) ||
      k.dim(3) != q.dim(3) || v.dim(1) != k.dim(1) || v.dim(2) != k.dim(2) || k.dim(1) <= 0 ||
      q.dim(1) % k.dim(1) != 0) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "Q (B, Hq, L, D), K (B, Hkv, S, D) and V (B, Hkv, S, Dv) with Hq a multiple of Hkv expected, got "
                    "{}, {} and {}",
                    shape_to_string(q.shape()), shape_to_string(k.shape()), shape_to_string(v.shape()));
  }
  const int64_t batch = q.dim(0), hq = q.dim(1), len = q.dim(2), head = q.dim(3);
  const int64_t hkv = k.dim(1), klen = k.dim(2), v_head = v.dim(3), group = hq / hkv;
  float scale = 1.0f / std::sqrt(static_cast<float>(head));
  if (ctx.has_attr("scale")) {
    scale = ctx.attr_float("scale", scale);
    if (!(scale >= 0.0f)) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "scale {} is not supported: ONNX's definition takes its square root, which is NaN", scale);
    }
  }
  DType p = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  if (ctx.has_attr("softmax_precision")) {
    const int64_t attr = ctx.attr_int("softmax_precision", 0);
    const std::optional<DType> pt = float_dtype_from_onnx(attr);
    if (!pt) return ctx.fail(StatusCode::kUnsupportedAttr, "softmax_precision {} is not a float type", attr);
    p = *pt;
  }
  const Graph* score_mod = ctx.attr_graph("score_mod");
  const Graph* prob_mod = ctx.attr_graph("prob_mod");
  const StepRound r = step_round(t);
  const StepRound rp = step_round(p);
  const double s = r(static_cast<double>(std::sqrt(scale)));
  VN_ASSIGN_OR_RETURN(std::vector<double> qv, tensor_to_doubles(q));
  VN_ASSIGN_OR_RETURN(std::vector<double> kv, tensor_to_doubles(k));
  VN_ASSIGN_OR_RETURN(std::vector<double> vv, tensor_to_doubles(v));
  for (double& x : qv) x = r(x * s);
  for (double& x : kv) x = r(x * s);
  const Shape score_shape{batch, hq, len, klen};
  // The scores are L x S per head: check their size before the doubles are allocated.
  if (Result<int64_t> n = shape_numel_checked(score_shape, DType::kFloat64); !n.ok()) {
    return n.status().with_node(ctx.node().ref(ctx.node_index()));
  }
  std::vector<double> scores(static_cast<size_t>(batch * hq * len * klen));
  for (int64_t bh = 0; bh < batch * hq; ++bh) {
    const double* kb = kv.data() + (bh / hq * hkv + bh % hq / group) * klen * head;
    for (int64_t i = 0; i < len; ++i) {
      const double* qrow = qv.data() + (bh * len + i) * head;
      for (int64_t j = 0; j < klen; ++j) {
        double acc = 0.0;
        for (int64_t e = 0; e < head; ++e) acc += qrow[e] * kb[j * head + e];
        scores[static_cast<size_t>((bh * len + i) * klen + j)] = rp(r(acc));
      }
    }
  }
  if (score_mod) {
    VN_ASSIGN_OR_RETURN(scores, run_mod(ctx, *score_mod, "score_mod", scores, score_shape, p));
  }
  for (int64_t row = 0; row < batch * hq * len; ++row) softmax_row(scores.data() + row * klen, klen, rp);
  if (prob_mod) {
    VN_ASSIGN_OR_RETURN(scores, run_mod(ctx, *prob_mod, "prob_mod", scores, score_shape, p));
  }
  std::vector<double> y(static_cast<size_t>(batch * hq * len * v_head));
  for (int64_t bh = 0; bh < batch * hq; ++bh) {
    const double* vb = vv.data() + (bh / hq * hkv + bh % hq / group) * klen * v_head;
    for (int64_t i = 0; i < len; ++i) {
      const double* prow = scores.data() + (bh * len + i) * klen;
      for (int64_t e = 0; e < v_head; ++e) {
        double acc = 0.0;
        for (int64_t j = 0; j < klen; ++j) acc += prow[j] * vb[j * v_head + e];
        y[static_cast<size_t>((bh * len + i) * v_head + e)] = r(rp(acc));
      }
    }
  }
  return set_float_output(ctx, 0, t, {batch, hq, len, v_head}, y);
}

}  // namespace

void register_flex_attention_ops(OpRegistry& registry) {
  registry.add("FlexAttention", 1, flex_attention, "ai.onnx.preview");
}

}  // namespace vn::ops
