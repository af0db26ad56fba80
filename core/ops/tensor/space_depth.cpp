// SPDX-License-Identifier: Apache-2.0
// DepthToSpace (DCR and, from opset 11, CRD mode) and SpaceToDepth (DCR and, from opset 28, CRD)
// on NCHW tensors: the fixed reshape-transpose-reshape sequences of the ONNX spec, written as one
// index mapping each.
#include <cstdint>
#include <string>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Result<int64_t> read_blocksize(const KernelContext& ctx) {
  if (!ctx.has_attr("blocksize")) return ctx.fail(StatusCode::kInvalidModel, "attribute blocksize is required");
  const int64_t bs = ctx.attr_int("blocksize", 0);
  if (bs < 1 || bs > (int64_t{1} << 20)) {
    return ctx.fail(StatusCode::kInvalidModel, "blocksize must be positive, got {}", bs);
  }
  return bs;
}

Status check_nchw(const KernelContext& ctx, const Tensor& x) {
  if (x.rank() != 4) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must be 4-D (N, C, H, W), got shape {}",
                    shape_to_string(x.shape()));
  }
  return Status::OK();
}

Status depth_to_space_with(KernelContext& ctx, const std::string& mode) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  VN_RETURN_IF_ERROR(check_nchw(ctx, x));
  VN_ASSIGN_OR_RETURN(int64_t bs, read_blocksize(ctx));
  if (mode != "DCR" && mode != "CRD") return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not DCR or CRD", mode);
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (c % (bs * bs) != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "channels {} are not divisible by blocksize^2 = {}", c, bs * bs);
  }
  const int64_t oc = c / (bs * bs);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {n, oc, h * bs, w * bs}));
  const bool dcr = mode == "DCR";
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    int64_t o = 0;
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < oc; ++ch) {
        for (int64_t i = 0; i < h; ++i) {
          for (int64_t bi = 0; bi < bs; ++bi) {
            for (int64_t j = 0; j < w; ++j) {
              for (int64_t bj = 0; bj < bs; ++bj) {
                // DCR: input channel (bi * bs + bj) * oc + ch; CRD: ch * bs * bs + bi * bs + bj.
                const int64_t in_c = dcr ? (bi * bs + bj) * oc + ch : (ch * bs + bi) * bs + bj;
                py[o++] = px[((b * c + in_c) * h + i) * w + j];
              }
            }
          }
        }
      }
    }
    return Status::OK();
  });
}

// DepthToSpace-1 has only the DCR layout; opset 11 adds the `mode` attribute.
Status depth_to_space_1(KernelContext& ctx) { return depth_to_space_with(ctx, "DCR"); }
Status depth_to_space_11(KernelContext& ctx) { return depth_to_space_with(ctx, ctx.attr_string("mode", "DCR")); }

Status space_to_depth_with(KernelContext& ctx, const std::string& mode) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (mode != "DCR" && mode != "CRD") return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not DCR or CRD", mode);
  const bool dcr = mode == "DCR";
  const Tensor& x = ctx.input(0);
  VN_RETURN_IF_ERROR(check_nchw(ctx, x));
  VN_ASSIGN_OR_RETURN(int64_t bs, read_blocksize(ctx));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (h % bs != 0 || w % bs != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "height {} and width {} must be divisible by blocksize {}", h, w, bs);
  }
  const int64_t oh = h / bs, ow = w / bs;
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {n, c * bs * bs, oh, ow}));
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    // Output channel (bi * bs + bj) * c + ch (DCR) or (ch * bs + bi) * bs + bj (CRD) holds input
    // pixel (i * bs + bi, j * bs + bj) of channel ch.
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t bi = 0; bi < bs; ++bi) {
        for (int64_t bj = 0; bj < bs; ++bj) {
          for (int64_t ch = 0; ch < c; ++ch) {
            const int64_t out_c = dcr ? (bi * bs + bj) * c + ch : (ch * bs + bi) * bs + bj;
            U* dst = py + (b * c * bs * bs + out_c) * oh * ow;
            for (int64_t i = 0; i < oh; ++i) {
              for (int64_t j = 0; j < ow; ++j) dst[i * ow + j] = px[((b * c + ch) * h + i * bs + bi) * w + j * bs + bj];
            }
          }
        }
      }
    }
    return Status::OK();
  });
}

// SpaceToDepth before opset 28 has only the DCR layout; 28 adds the `mode` attribute.
Status space_to_depth(KernelContext& ctx) { return space_to_depth_with(ctx, "DCR"); }
Status space_to_depth_28(KernelContext& ctx) { return space_to_depth_with(ctx, ctx.attr_string("mode", "DCR")); }

}  // namespace

void register_space_depth_ops(OpRegistry& registry) {
  registry.add("DepthToSpace", 1, depth_to_space_1);
  // DepthToSpace-28 keeps version 13's semantics (the copy handles any type by its byte size).
  for (int64_t v : {11, 13, 28}) registry.add("DepthToSpace", v, depth_to_space_11);
  for (int64_t v : {1, 13}) registry.add("SpaceToDepth", v, space_to_depth);
  registry.add("SpaceToDepth", 28, space_to_depth_28);
}

}  // namespace vn::ops
