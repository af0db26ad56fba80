// SPDX-License-Identifier: Apache-2.0
// Attention-23, -24 and -25: scaled dot-product attention with multi-, grouped- and multi-query
// heads, a boolean or additive mask, causal masking, a key/value cache (past_key/past_value in,
// present_key/present_value out), softcap, the softmax's precision and the qk_matmul_output
// probe; version 24 adds nonpad_kv_seqlen (an external cache's valid lengths), version 25 the
// sliding window (left_window_size, right_window_size).
//
// The steps are those of ONNX's function body for the op:
//   s = sqrt(scale) (scale defaulting to 1/sqrt(head size), both in float32, then cast to T)
//   QK = (Q*s) @ (K*s)^T over present_key = concat(past_key, K) along the sequence
//   QK' = softcap * tanh(QK / softcap) when softcap > 0
//   P = softmax(QK' + bias) in softmax_precision, cast back to T; a row whose bias is -inf
//       everywhere gets probabilities 0 (not the NaN of 0/0)
//   Y = P @ present_value
// where bias(b, h, i, j) adds, in this order: the mask (a boolean mask as 0/-inf, the last dim
// padded with -inf up to the total sequence), -inf where a causal query i may not see key j
// (j > i + offset), -inf outside the window (i + offset - j > left, j - i - offset > right), and
// -inf past nonpad_kv_seqlen[b]. offset is past_key's length when there is a cache input,
// nonpad_kv_seqlen[b] - q_sequence_length with an external cache, else 0. Query head h reads key
// and value head h / (q_num_heads / kv_num_heads).
//
// float16 and bfloat16 round after each step as the body does (float_steps.h); float32 and
// float64 are computed in double and rounded once.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"
#include "core/ops/nn/attention_util.h"

namespace vn::ops {
namespace {

struct Dims {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_len = 0;
  int64_t kv_len = 0;  // new keys and values
  int64_t past = 0;
  int64_t total = 0;  // past + kv_len
  int64_t head = 0;   // Q and K head size
  int64_t v_head = 0;
  bool rank3 = false;
};

/// A (B, L, H*D) or (B, H, L, D) input as doubles in (B, H, L, D) order.
std::vector<double> to_bhld(const std::vector<double>& x, bool rank3, int64_t b, int64_t h, int64_t l, int64_t d) {
  if (!rank3) return x;
  std::vector<double> out(x.size());
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t il = 0; il < l; ++il)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t id = 0; id < d; ++id)
          out[static_cast<size_t>(((ib * h + ih) * l + il) * d + id)] =
              x[static_cast<size_t>(((ib * l + il) * h + ih) * d + id)];
  return out;
}

/// concat(past, x) along L of (B, H, L, D) arrays.
std::vector<double> concat_seq(const std::vector<double>& past, const std::vector<double>& x, int64_t bh,
                               int64_t past_len, int64_t len, int64_t d) {
  std::vector<double> out(static_cast<size_t>(bh * (past_len + len) * d));
  for (int64_t i = 0; i < bh; ++i) {
    std::copy_n(past.begin() + i * past_len * d, past_len * d, out.begin() + i * (past_len + len) * d);
    std::copy_n(x.begin() + i * len * d, len * d, out.begin() + (i * (past_len + len) + past_len) * d);
  }
  return out;
}

Result<Dims> read_dims(const KernelContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v) {
  Dims d;
  const int64_t q_heads_attr = ctx.attr_int("q_num_heads", 0);
  const int64_t kv_heads_attr = ctx.attr_int("kv_num_heads", 0);
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
    return ctx.fail(StatusCode::kShapeMismatch, "Q, K and V must all be 3-D or all 4-D, got {}, {} and {}",
                    shape_to_string(q.shape()), shape_to_string(k.shape()), shape_to_string(v.shape()));
  }
  d.rank3 = q.rank() == 3;
  d.batch = q.dim(0);
  if (d.rank3) {
    if (q_heads_attr <= 0 || kv_heads_attr <= 0) {
      return ctx.fail(StatusCode::kInvalidModel, "3-D Q, K and V need positive q_num_heads and kv_num_heads, got {} and {}",
                      q_heads_attr, kv_heads_attr);
    }
    d.q_heads = q_heads_attr;
    d.kv_heads = kv_heads_attr;
    d.q_len = q.dim(1);
    d.kv_len = k.dim(1);
    if (q.dim(2) % d.q_heads || k.dim(2) % d.kv_heads || v.dim(2) % d.kv_heads) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "hidden sizes {} (Q), {} (K) and {} (V) must divide by q_num_heads {} and kv_num_heads {}",
                      q.dim(2), k.dim(2), v.dim(2), d.q_heads, d.kv_heads);
    }
    d.head = q.dim(2) / d.q_heads;
    if (k.dim(2) / d.kv_heads != d.head) {
      return ctx.fail(StatusCode::kShapeMismatch, "K's head size {} differs from Q's {}", k.dim(2) / d.kv_heads, d.head);
    }
    d.v_head = v.dim(2) / d.kv_heads;
  } else {
    d.q_heads = q.dim(1);
    d.kv_heads = k.dim(1);
    d.q_len = q.dim(2);
    d.kv_len = k.dim(2);
    d.head = q.dim(3);
    d.v_head = v.dim(3);
    if ((q_heads_attr != 0 && q_heads_attr != d.q_heads) || (kv_heads_attr != 0 && kv_heads_attr != d.kv_heads)) {
      return ctx.fail(StatusCode::kInvalidModel, "q_num_heads {} and kv_num_heads {} disagree with Q {} and K {}",
                      q_heads_attr, kv_heads_attr, shape_to_string(q.shape()), shape_to_string(k.shape()));
    }
    if (k.dim(3) != d.head || v.dim(1) != d.kv_heads) {
      return ctx.fail(StatusCode::kShapeMismatch, "K {} and V {} do not match Q {} (head size, heads)",
                      shape_to_string(k.shape()), shape_to_string(v.shape()), shape_to_string(q.shape()));
    }
  }
  const int64_t v_batch = v.dim(0), v_len = d.rank3 ? v.dim(1) : v.dim(2);
  if (k.dim(0) != d.batch || v_batch != d.batch || v_len != d.kv_len) {
    return ctx.fail(StatusCode::kShapeMismatch, "K {} and V {} must share Q's batch and each other's sequence length",
                    shape_to_string(k.shape()), shape_to_string(v.shape()));
  }
  if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "q_num_heads {} must be a multiple of kv_num_heads {}", d.q_heads,
                    d.kv_heads);
  }
  return d;
}

/// The additive mask, broadcast to (B, Hq, Lq, total): nullopt without attn_mask.
struct Mask {
  std::vector<double> values;  // as given, padded columns excluded
  int64_t sb = 0, sh = 0, sq = 0;  // strides of the broadcast dims (0 where broadcast)
  int64_t cols = 0;                // the mask's last dim; columns from here on are -inf
};

Result<std::optional<Mask>> read_mask(const KernelContext& ctx, const Dims& d, StepRound round) {
  if (!ctx.has_input(3)) return std::optional<Mask>();
  const Tensor& m = ctx.input(3);
  if (m.rank() < 1 || m.rank() > 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "attn_mask must have rank 1 to 4, got {}", shape_to_string(m.shape()));
  }
  Shape s4(static_cast<size_t>(4 - m.rank()), 1);
  s4.insert(s4.end(), m.shape().begin(), m.shape().end());
  const int64_t want[] = {d.batch, d.q_heads, d.q_len};
  for (size_t i = 0; i < 3; ++i) {
    if (s4[i] != 1 && s4[i] != want[i]) {
      return ctx.fail(StatusCode::kShapeMismatch, "attn_mask {} does not broadcast to (batch {}, heads {}, q {}, kv)",
                      shape_to_string(m.shape()), d.batch, d.q_heads, d.q_len);
    }
  }
  if (s4[3] > d.total) {
    return ctx.fail(StatusCode::kShapeMismatch, "attn_mask's last dim {} exceeds the total sequence length {}", s4[3],
                    d.total);
  }
  Mask mask;
  mask.cols = s4[3];
  mask.sq = s4[2] == 1 ? 0 : mask.cols;
  mask.sh = s4[1] == 1 ? 0 : s4[2] * mask.cols;
  mask.sb = s4[0] == 1 ? 0 : s4[1] * s4[2] * mask.cols;
  if (m.dtype() == DType::kBool) {
    const bool* p = m.data<bool>();
    mask.values.resize(static_cast<size_t>(m.numel()));
    for (int64_t i = 0; i < m.numel(); ++i) mask.values[static_cast<size_t>(i)] = p[i] ? 0.0 : -INFINITY;
  } else {
    if (!is_real_float(m.dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType, "attn_mask must be bool or a float type, got {}",
                      dtype_name(m.dtype()));
    }
    VN_ASSIGN_OR_RETURN(mask.values, tensor_to_doubles(m));
    // The body casts the summed bias to T; adding 0 and -inf commutes with that rounding.
    for (double& x : mask.values) x = round(x);
  }
  return std::optional<Mask>(std::move(mask));
}

struct Options {
  double scale_sqrt = 0.0;  // s, in T
  double softcap = 0.0;     // 0: none
  int64_t mode = 0;         // qk_matmul_output_mode
  bool causal = false;
  int64_t left = -1, right = -1;  // window; -1: unbounded
  StepRound round = nullptr;      // steps in T
  StepRound round_softmax = nullptr;
};

template <int64_t kSince>
Result<Options> read_options(const KernelContext& ctx, const Dims& d, DType t) {
  Options o;
  o.round = step_round(t);
  const int64_t causal = ctx.attr_int("is_causal", 0);
  if (causal != 0 && causal != 1) return ctx.fail(StatusCode::kInvalidModel, "is_causal must be 0 or 1, got {}", causal);
  o.causal = causal == 1;
  // ONNX computes the scale and its square root in float32.
  float scale = 1.0f / std::sqrt(static_cast<float>(d.head));
  if (ctx.has_attr("scale")) {
    scale = ctx.attr_float("scale", scale);
    if (!(scale >= 0.0f)) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "scale {} is not supported: ONNX's definition takes its square root, which is NaN", scale);
    }
  }
  o.scale_sqrt = o.round(static_cast<double>(std::sqrt(scale)));
  const float softcap = ctx.attr_float("softcap", 0.0f);
  if (!(softcap >= 0.0f)) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "softcap {} is not supported; only 0 (none) or a positive cap is",
                    softcap);
  }
  o.softcap = o.round(static_cast<double>(softcap));
  o.mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (o.mode < 0 || o.mode > 3) {
    return ctx.fail(StatusCode::kInvalidModel, "qk_matmul_output_mode must be 0 to 3, got {}", o.mode);
  }
  o.round_softmax = o.round;
  if (ctx.has_attr("softmax_precision")) {
    const int64_t p = ctx.attr_int("softmax_precision", 0);
    const std::optional<DType> pt = float_dtype_from_onnx(p);
    if (!pt) {
      return ctx.fail(StatusCode::kUnsupportedAttr,
                      "softmax_precision {} is not supported; float16 (10), bfloat16 (16), float (1) or double (11) is",
                      p);
    }
    o.round_softmax = step_round(*pt);
  }
  if constexpr (kSince >= 25) {
    o.left = ctx.attr_int("left_window_size", -1);
    o.right = ctx.attr_int("right_window_size", -1);
    if (o.left < -1 || o.right < -1) {
      return ctx.fail(StatusCode::kInvalidModel, "window sizes must be -1 (unbounded) or at least 0, got {} and {}",
                      o.left, o.right);
    }
  }
  return o;
}

template <int64_t kSince>
Status attention(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const DType t = q.dtype();
  if (!is_real_float(t) || k.dtype() != t || v.dtype() != t) {
    return ctx.fail(StatusCode::kUnsupportedDType,
                    "Q, K and V must share one float type (float16, bfloat16, float32, float64), got {}, {} and {}",
                    dtype_name(t), dtype_name(k.dtype()), dtype_name(v.dtype()));
  }
  VN_ASSIGN_OR_RETURN(Dims d, read_dims(ctx, q, k, v));
  VN_ASSIGN_OR_RETURN(Options o, read_options<kSince>(ctx, d, t));
  const bool has_past = ctx.has_input(4) || ctx.has_input(5);
  if (has_past && !(ctx.has_input(4) && ctx.has_input(5))) {
    return ctx.fail(StatusCode::kInvalidModel, "past_key and past_value must be given together");
  }
  std::vector<double> past_key, past_value;
  if (has_past) {
    const Tensor& pk = ctx.input(4);
    const Tensor& pv = ctx.input(5);
    if (pk.dtype() != t || pv.dtype() != t || pk.rank() != 4 || pv.rank() != 4 || pk.dim(0) != d.batch ||
        pk.dim(1) != d.kv_heads || pk.dim(3) != d.head || pv.dim(0) != d.batch || pv.dim(1) != d.kv_heads ||
        pv.dim(2) != pk.dim(2) || pv.dim(3) != d.v_head) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "past_key {} and past_value {} must be {} tensors (batch {}, kv heads {}, past, head size {} / {})",
                      shape_to_string(pk.shape()), shape_to_string(pv.shape()), dtype_name(t), d.batch, d.kv_heads,
                      d.head, d.v_head);
    }
    d.past = pk.dim(2);
    VN_ASSIGN_OR_RETURN(past_key, tensor_to_doubles(pk));
    VN_ASSIGN_OR_RETURN(past_value, tensor_to_doubles(pv));
  }
  d.total = d.past + d.kv_len;
  std::vector<int64_t> nonpad;
  if constexpr (kSince >= 24) {
    if (ctx.has_input(6)) {
      const Tensor& n = ctx.input(6);
      if (n.dtype() != DType::kInt64 || n.shape() != Shape{d.batch}) {
        return ctx.fail(StatusCode::kShapeMismatch, "nonpad_kv_seqlen must be int64 of shape ({},), got {} {}", d.batch,
                        dtype_name(n.dtype()), shape_to_string(n.shape()));
      }
      nonpad.assign(n.data<int64_t>(), n.data<int64_t>() + d.batch);
    }
  }
  VN_ASSIGN_OR_RETURN(std::optional<Mask> mask, read_mask(ctx, d, o.round));

  VN_ASSIGN_OR_RETURN(std::vector<double> qv, tensor_to_doubles(q));
  VN_ASSIGN_OR_RETURN(std::vector<double> kv, tensor_to_doubles(k));
  VN_ASSIGN_OR_RETURN(std::vector<double> vv, tensor_to_doubles(v));
  qv = to_bhld(qv, d.rank3, d.batch, d.q_heads, d.q_len, d.head);
  kv = to_bhld(kv, d.rank3, d.batch, d.kv_heads, d.kv_len, d.head);
  vv = to_bhld(vv, d.rank3, d.batch, d.kv_heads, d.kv_len, d.v_head);
  const int64_t bkv = d.batch * d.kv_heads;
  std::vector<double> present_k = has_past ? concat_seq(past_key, kv, bkv, d.past, d.kv_len, d.head) : std::move(kv);
  std::vector<double> present_v =
      has_past ? concat_seq(past_value, vv, bkv, d.past, d.kv_len, d.v_head) : std::move(vv);

  // Q*s and K*s, each a step in T.
  std::vector<double> qs(qv.size()), ks(present_k.size());
  for (size_t i = 0; i < qv.size(); ++i) qs[i] = o.round(qv[i] * o.scale_sqrt);
  for (size_t i = 0; i < ks.size(); ++i) ks[i] = o.round(present_k[i] * o.scale_sqrt);

  const bool want_qk = output_requested(ctx, 3);
  // The probe output is Lq x total per head: check its size before the doubles are allocated.
  for (const Shape& shape : {Shape{d.batch, d.q_heads, d.q_len, want_qk ? d.total : 0},
                             Shape{d.batch, d.q_heads, d.q_len, d.v_head}}) {
    if (Result<int64_t> n = shape_numel_checked(shape, DType::kFloat64); !n.ok()) {
      return n.status().with_node(ctx.node().ref(ctx.node_index()));
    }
  }
  const int64_t group = d.q_heads / d.kv_heads;
  std::vector<double> y(static_cast<size_t>(d.batch * d.q_heads * d.q_len * d.v_head));
  std::vector<double> qk_out(want_qk ? static_cast<size_t>(d.batch * d.q_heads * d.q_len * d.total) : 0);
  const StepRound r = o.round;
  const int64_t rows = d.batch * d.q_heads;
  const int64_t work_per_row = d.q_len * d.total * (d.head + d.v_head);
  parallel_chunks(ctx.num_threads(), rows, [&](int64_t lo, int64_t hi) {
    std::vector<double> bias(static_cast<size_t>(d.total)), score(static_cast<size_t>(d.total));
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / d.q_heads, h = bh % d.q_heads;
      const int64_t kvh = b * d.kv_heads + h / group;
      const double* kb = ks.data() + kvh * d.total * d.head;
      const double* vb = present_v.data() + kvh * d.total * d.v_head;
      const int64_t offset = has_past ? d.past : (nonpad.empty() ? 0 : nonpad[static_cast<size_t>(b)] - d.q_len);
      for (int64_t i = 0; i < d.q_len; ++i) {
        bool all_masked = true;
        for (int64_t j = 0; j < d.total; ++j) {
          double bv = 0.0;
          if (mask) bv = j < mask->cols ? mask->values[static_cast<size_t>(b * mask->sb + h * mask->sh + i * mask->sq + j)]
                                        : -INFINITY;
          const int64_t diff = i + offset - j;
          if (o.causal && diff < 0) bv += -INFINITY;
          if ((o.left >= 0 && diff > o.left) || (o.right >= 0 && -diff > o.right)) bv += -INFINITY;
          if (!nonpad.empty() && j >= nonpad[static_cast<size_t>(b)]) bv += -INFINITY;
          bias[static_cast<size_t>(j)] = bv;
          if (!(bv == -INFINITY)) all_masked = false;
        }
        const double* qrow = qs.data() + (bh * d.q_len + i) * d.head;
        double* qk_row = want_qk ? qk_out.data() + (bh * d.q_len + i) * d.total : nullptr;
        for (int64_t j = 0; j < d.total; ++j) {
          double acc = 0.0;
          for (int64_t e = 0; e < d.head; ++e) acc += qrow[e] * kb[j * d.head + e];
          double s = r(acc);
          if (qk_row && o.mode == 0) qk_row[j] = s;
          if (o.softcap > 0.0) s = r(r(std::tanh(r(s / o.softcap))) * o.softcap);
          if (qk_row && o.mode == 1) qk_row[j] = s;
          s = r(s + bias[static_cast<size_t>(j)]);
          if (qk_row && o.mode == 2) qk_row[j] = s;
          score[static_cast<size_t>(j)] = o.round_softmax(s);
        }
        softmax_row(score.data(), d.total, o.round_softmax);
        for (int64_t j = 0; j < d.total; ++j) {
          double& p = score[static_cast<size_t>(j)];
          p = all_masked ? 0.0 : r(p);
          if (qk_row && o.mode == 3) qk_row[j] = p;
        }
        double* yrow = y.data() + (bh * d.q_len + i) * d.v_head;
        for (int64_t e = 0; e < d.v_head; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < d.total; ++j) acc += score[static_cast<size_t>(j)] * vb[j * d.v_head + e];
          yrow[e] = r(acc);
        }
      }
    }
  }, std::max<int64_t>(1, kComputeBoundGrain * 16 / std::max<int64_t>(1, work_per_row)));

  if (d.rank3) {
    // (B, Hq, Lq, Dv) -> (B, Lq, Hq * Dv)
    std::vector<double> y3(y.size());
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.q_heads; ++h)
        for (int64_t i = 0; i < d.q_len; ++i)
          std::copy_n(y.begin() + ((b * d.q_heads + h) * d.q_len + i) * d.v_head, d.v_head,
                      y3.begin() + ((b * d.q_len + i) * d.q_heads + h) * d.v_head);
    y = std::move(y3);
    VN_RETURN_IF_ERROR(set_float_output(ctx, 0, t, {d.batch, d.q_len, d.q_heads * d.v_head}, y));
  } else {
    VN_RETURN_IF_ERROR(set_float_output(ctx, 0, t, {d.batch, d.q_heads, d.q_len, d.v_head}, y));
  }
  if (output_requested(ctx, 1)) {
    VN_RETURN_IF_ERROR(set_float_output(ctx, 1, t, {d.batch, d.kv_heads, d.total, d.head}, present_k));
  }
  if (output_requested(ctx, 2)) {
    VN_RETURN_IF_ERROR(set_float_output(ctx, 2, t, {d.batch, d.kv_heads, d.total, d.v_head}, present_v));
  }
  if (want_qk) VN_RETURN_IF_ERROR(set_float_output(ctx, 3, t, {d.batch, d.q_heads, d.q_len, d.total}, qk_out));
  return Status::OK();
}

}  // namespace

void register_attention_ops(OpRegistry& registry) {
  registry.add("Attention", 23, attention<23>);
  registry.add("Attention", 24, attention<24>);
  registry.add("Attention", 25, attention<25>);
}

}  // namespace vn::ops
