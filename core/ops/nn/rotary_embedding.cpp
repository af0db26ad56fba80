// SPDX-License-Identifier: Apache-2.0
// RotaryEmbedding-23: rotates the first rotary_embedding_dim (default: all) features of each head
// by the angles whose cosines and sines the caches hold, as ONNX's function body does.
//
// X is (B, H, S, D), or (B, S, H * D) with num_heads. The caches are (max_position, R/2) indexed
// by position_ids (B, S), or (B, S, R/2) without position_ids; only their first R/2 columns are
// read. With x1 and x2 the two halves of the rotated part (or its even and odd features when
// interleaved):
//   real = cos * x1 - sin * x2,  imag = sin * x1 + cos * x2
// written back as [real, imag] (or interleaved real0, imag0, real1, ...), the other D - R features
// unchanged. float16 and bfloat16 round after each product and sum (float_steps.h).
#include <vector>

#include "core/ops/families.h"
#include "core/ops/float_steps.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status rotary_embedding(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  VN_ASSIGN_OR_RETURN(std::vector<double> xv, float_input(ctx, 0, "X"));
  const int64_t interleaved = ctx.attr_int("interleaved", 0);
  const int64_t num_heads = ctx.attr_int("num_heads", 0);
  const int64_t rotary_dim_attr = ctx.attr_int("rotary_embedding_dim", 0);
  if (interleaved != 0 && interleaved != 1) {
    return ctx.fail(StatusCode::kInvalidModel, "interleaved must be 0 or 1, got {}", interleaved);
  }
  int64_t batch = 0, heads = 0, seq = 0, head = 0;
  // Element (b, h, s, d) of X is at b * sb + h * sh + s * ss + d.
  int64_t sb = 0, sh = 0, ss = 0;
  if (x.rank() == 4) {
    batch = x.dim(0), heads = x.dim(1), seq = x.dim(2), head = x.dim(3);
    sb = heads * seq * head, sh = seq * head, ss = head;
  } else if (x.rank() == 3) {
    if (num_heads <= 0 || x.dim(2) % num_heads != 0) {
      return ctx.fail(StatusCode::kInvalidModel, "3-D X {} needs a positive num_heads dividing its last dim, got {}",
                      shape_to_string(x.shape()), num_heads);
    }
    batch = x.dim(0), heads = num_heads, seq = x.dim(1), head = x.dim(2) / num_heads;
    sb = seq * heads * head, sh = head, ss = heads * head;
  } else {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be 3-D or 4-D, got {}", shape_to_string(x.shape()));
  }
  const int64_t rotary = rotary_dim_attr == 0 ? head : rotary_dim_attr;
  if (rotary < 0 || rotary > head || rotary % 2 != 0) {
    return ctx.fail(StatusCode::kInvalidModel, "rotary_embedding_dim {} must be even and at most the head size {}",
                    rotary, head);
  }
  const int64_t half = rotary / 2;
  const Tensor& cos_cache = ctx.input(1);
  const Tensor& sin_cache = ctx.input(2);
  if (cos_cache.dtype() != t || sin_cache.dtype() != t || cos_cache.shape() != sin_cache.shape()) {
    return ctx.fail(StatusCode::kShapeMismatch, "cos_cache {} {} and sin_cache {} {} must share X's type {} and a shape",
                    dtype_name(cos_cache.dtype()), shape_to_string(cos_cache.shape()), dtype_name(sin_cache.dtype()),
                    shape_to_string(sin_cache.shape()), dtype_name(t));
  }
  VN_ASSIGN_OR_RETURN(std::vector<double> cosv, tensor_to_doubles(cos_cache));
  VN_ASSIGN_OR_RETURN(std::vector<double> sinv, tensor_to_doubles(sin_cache));
  const int64_t cols = cos_cache.rank() > 0 ? cos_cache.dim(cos_cache.rank() - 1) : 0;
  // Row of the caches for (b, s).
  std::vector<int64_t> row(static_cast<size_t>(batch * seq));
  if (ctx.has_input(3)) {
    const Tensor& pos = ctx.input(3);
    if (pos.shape() != Shape{batch, seq} || cos_cache.rank() != 2) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "position_ids must be ({}, {}) and the caches 2-D (max_position, rotary/2), got {} and {}", batch,
                      seq, shape_to_string(pos.shape()), shape_to_string(cos_cache.shape()));
    }
    if (pos.dtype() != DType::kInt64) {
      return ctx.fail(StatusCode::kUnsupportedDType, "position_ids must be int64, got {}", dtype_name(pos.dtype()));
    }
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> ids, tensor_to_int64s(pos));
    for (size_t i = 0; i < ids.size(); ++i) {
      int64_t p = ids[i];
      if (p < 0) p += cos_cache.dim(0);  // Gather's negative indices
      if (p < 0 || p >= cos_cache.dim(0)) {
        return ctx.fail(StatusCode::kInvalidModel, "position id {} is outside the caches' {} positions", ids[i],
                        cos_cache.dim(0));
      }
      row[i] = p;
    }
  } else {
    if (cos_cache.shape().size() != 3 || cos_cache.dim(0) != batch || cos_cache.dim(1) != seq) {
      return ctx.fail(StatusCode::kShapeMismatch, "without position_ids the caches must be ({}, {}, rotary/2), got {}",
                      batch, seq, shape_to_string(cos_cache.shape()));
    }
    for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<int64_t>(i);
  }
  if (cols < half) {
    return ctx.fail(StatusCode::kShapeMismatch, "the caches' last dim {} is less than rotary_embedding_dim / 2 = {}", cols,
                    half);
  }
  const StepRound r = step_round(t);
  std::vector<double> y = xv;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      const double* c = cosv.data() + row[static_cast<size_t>(b * seq + s)] * cols;
      const double* sn = sinv.data() + row[static_cast<size_t>(b * seq + s)] * cols;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = b * sb + h * sh + s * ss;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved ? base + 2 * i : base + i;
          const int64_t i2 = interleaved ? base + 2 * i + 1 : base + half + i;
          const double x1 = xv[static_cast<size_t>(i1)], x2 = xv[static_cast<size_t>(i2)];
          y[static_cast<size_t>(i1)] = r(r(c[i] * x1) - r(sn[i] * x2));
          y[static_cast<size_t>(i2)] = r(r(sn[i] * x1) + r(c[i] * x2));
        }
      }
    }
  }
  return set_float_output(ctx, 0, t, x.shape(), y);
}

}  // namespace

void register_rotary_embedding_ops(OpRegistry& registry) { registry.add("RotaryEmbedding", 23, rotary_embedding); }

}  // namespace vn::ops
