// SPDX-License-Identifier: Apache-2.0
// Conv for 1-D, 2-D and 3-D inputs with groups (depthwise included), strides, dilations, explicit
// pads and auto_pad. Each (image, group) is one GEMM: W_g (M/g × C/g·K) times the im2col matrix
// (C/g·K × output positions); 1×1 convolutions without stride or padding skip im2col and multiply
// the input directly.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/spatial.h"

namespace vn::ops {
namespace {

/// Writes the im2col matrix of `channels` input planes (3-D geometry) into `col`, row-major with
/// one row per (channel, kd, kh, kw) and one column per output position; padding reads as 0.
template <typename T>
void im2col_3d(const T* x, int64_t channels, const WindowGeometry& g, T* col) {
  const int64_t in_d = g.in[0], in_h = g.in[1], in_w = g.in[2];
  const int64_t out_d = g.out[0], out_h = g.out[1], out_w = g.out[2];
  const int64_t plane = out_h * out_w;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_d * in_h * in_w;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          // Output columns ow whose input column iw = ow*s - p + kw*d lands inside [0, in_w).
          const int64_t off_w = kw * g.dilations[2] - g.pads_begin[2];
          const int64_t sw = g.strides[2];
          int64_t ow_lo = off_w >= 0 ? 0 : (-off_w + sw - 1) / sw;
          int64_t ow_hi = in_w - off_w <= 0 ? 0 : (in_w - off_w + sw - 1) / sw;
          ow_lo = std::min(ow_lo, out_w);
          ow_hi = std::clamp(ow_hi, ow_lo, out_w);
          for (int64_t od = 0; od < out_d; ++od) {
            const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
            T* dst_d = col + od * plane;
            if (id < 0 || id >= in_d) {
              std::fill_n(dst_d, plane, T(0));
              continue;
            }
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
              T* dst = dst_d + oh * out_w;
              if (ih < 0 || ih >= in_h) {
                std::fill_n(dst, out_w, T(0));
                continue;
              }
              const T* src = xc + (id * in_h + ih) * in_w;
              std::fill_n(dst, ow_lo, T(0));
              if (sw == 1) {
                std::copy(src + ow_lo + off_w, src + ow_hi + off_w, dst + ow_lo);
              } else {
                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow * sw + off_w];
              }
              std::fill(dst + ow_hi, dst + out_w, T(0));
            }
          }
          col += out_d * plane;
        }
      }
    }
  }
}

Status conv(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.rank() < 3) {
    return ctx.fail(StatusCode::kShapeMismatch, "X must be (N, C, D1, ...) with at least one spatial dim, got {}",
                    shape_to_string(x.shape()));
  }
  if (w.rank() != x.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch, "W {} must have the rank of X {}", shape_to_string(w.shape()),
                    shape_to_string(x.shape()));
  }
  if (w.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "W ({}) must have the type of X ({})", dtype_name(w.dtype()),
                    dtype_name(x.dtype()));
  }
  const size_t spatial = static_cast<size_t>(x.rank() - 2);
  if (spatial > 3) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "{}-D convolution is not supported (1-D to 3-D are)", spatial);
  }
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
  if (group < 1) return ctx.fail(StatusCode::kInvalidModel, "group {} must be positive", group);
  if (w.dim(1) * group != c) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "X has {} input channels but W {} with group={} expects W[1]*group = {}", c,
                    shape_to_string(w.shape()), group, w.dim(1) * group);
  }
  if (m % group != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "W has {} output channels, not divisible by group={}", m, group);
  }
  const Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel) {
    return ctx.fail(StatusCode::kShapeMismatch, "kernel_shape attribute disagrees with W's spatial dims {}",
                    shape_to_string(kernel));
  }
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias && (bias->shape() != Shape{m} || bias->dtype() != x.dtype())) {
    return ctx.fail(StatusCode::kShapeMismatch, "B must be a 1-D {} tensor of {} elements, got {} {}",
                    dtype_name(x.dtype()), m, dtype_name(bias->dtype()), shape_to_string(bias->shape()));
  }
  const Shape in(x.shape().begin() + 2, x.shape().end());
  VN_ASSIGN_OR_RETURN(WindowGeometry geo, window_geometry(ctx, in, kernel, false, true));
  Shape out_shape{n, m};
  out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());

  return dispatch_types(FloatTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    if (y->numel() == 0) return Status::OK();
    const WindowGeometry g3 = lift_to_3d(geo);
    const int64_t cg = c / group, mg = m / group;
    const int64_t k_size = shape_numel(kernel);
    const int64_t rows = cg * k_size;
    const int64_t in_size = shape_numel(in);
    const int64_t out_size = shape_numel(geo.out);
    bool pointwise = k_size == 1;
    for (size_t i = 0; i < spatial; ++i) {
      pointwise = pointwise && geo.strides[i] == 1 && geo.pads_begin[i] == 0 && geo.pads_end[i] == 0;
    }
    std::vector<T> col(pointwise ? 0 : static_cast<size_t>(rows * out_size));
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t img = 0; img < n; ++img) {
      for (int64_t gi = 0; gi < group; ++gi) {
        const T* xg = px + (img * c + gi * cg) * in_size;
        const T* col_data = xg;
        if (!pointwise) {
          im2col_3d(xg, cg, g3, col.data());
          col_data = col.data();
        }
        const ConstMatrixMap<T> wm(pw + gi * mg * rows, mg, rows);
        const ConstMatrixMap<T> cm(col_data, rows, out_size);
        MatrixMap<T> ym(py + (img * m + gi * mg) * out_size, mg, out_size);
        ym.noalias() = wm * cm;
      }
      if (bias) {
        const T* pb = bias->data<T>();
        for (int64_t oc = 0; oc < m; ++oc) ArrayMap<T>(py + (img * m + oc) * out_size, out_size) += pb[oc];
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_conv_ops(OpRegistry& registry) {
  for (int64_t v : {1, 11}) registry.add("Conv", v, conv);
}

}  // namespace vn::ops
