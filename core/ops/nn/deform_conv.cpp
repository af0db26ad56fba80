// SPDX-License-Identifier: Apache-2.0
// DeformConv (opsets 19, 22), 2-D: a grouped convolution whose kernel taps are moved by learned
// offsets (N, offset_group * kH * kW * 2, oH, oW), (dy, dx) per tap, and optionally scaled by a
// mask (N, offset_group * kH * kW, oH, oW). Each moved tap reads the input by bilinear
// interpolation, 0 outside the image (torchvision's deform_conv2d, which ONNX follows); a NaN
// offset reads NaN. Accumulates in double.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

constexpr int64_t kMaxAttr = int64_t{1} << 31;

/// Bilinear sample of the (h, w) plane at (y, x), 0 at or beyond one pixel outside.
double sample(const double* plane, int64_t h, int64_t w, double y, double x) {
  if (std::isnan(y) || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (y <= -1 || y >= static_cast<double>(h) || x <= -1 || x >= static_cast<double>(w)) return 0.0;
  const double fy = std::floor(y), fx = std::floor(x);
  const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ly = y - fy, lx = x - fx;
  double v = 0.0;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = y0 + dy, xx = x0 + dx;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      v += (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * plane[yy * w + xx];
    }
  }
  return v;
}

Result<std::vector<int64_t>> pair_attr(const KernelContext& ctx, std::string_view name, size_t count, int64_t fallback,
                                       int64_t min) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(count, fallback));
  if (v.size() != count) {
    return ctx.fail(StatusCode::kInvalidModel, "{} must have {} values, got {}", name, count, v.size());
  }
  for (int64_t x : v) {
    if (x < min || x > kMaxAttr) {
      return ctx.fail(StatusCode::kInvalidModel, "{} values must be in [{}, {}], got {}", name, min, kMaxAttr, x);
    }
  }
  return v;
}

template <typename Types>
Status deform_conv(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  const Tensor& x = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  const Tensor& off = ctx.input(2);
  if (x.rank() != 4) {
    return ctx.fail(StatusCode::kUnsupportedAttr, "DeformConv is implemented in 2-D (X of shape (N, C, H, W)), got {}",
                    shape_to_string(x.shape()));
  }
  if (wt.rank() != 4 || off.rank() != 4 || wt.dtype() != x.dtype() || off.dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "W and offset must be 4-D {} tensors, got {} {} and {} {}",
                    dtype_name(x.dtype()), dtype_name(wt.dtype()), shape_to_string(wt.shape()), dtype_name(off.dtype()),
                    shape_to_string(off.shape()));
  }
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t offset_group = ctx.attr_int("offset_group", 1);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, pair_attr(ctx, "kernel_shape", 2, 0, 0));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> dil, pair_attr(ctx, "dilations", 2, 1, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> str, pair_attr(ctx, "strides", 2, 1, 1));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, pair_attr(ctx, "pads", 4, 0, 0));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t oc = wt.dim(0), kh = wt.dim(2), kw = wt.dim(3);
  if (ctx.has_attr("kernel_shape") && (kernel[0] != kh || kernel[1] != kw)) {
    return ctx.fail(StatusCode::kInvalidModel, "kernel_shape ({}, {}) disagrees with W's ({}, {})", kernel[0],
                    kernel[1], kh, kw);
  }
  if (group < 1 || offset_group < 1 || c != wt.dim(1) * group || oc % group != 0 || c % offset_group != 0) {
    return ctx.fail(StatusCode::kShapeMismatch, "channels do not divide: X has {}, W is {}, group {}, offset_group {}",
                    c, shape_to_string(wt.shape()), group, offset_group);
  }
  const int64_t span_h = h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1);
  const int64_t span_w = w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1);
  const int64_t oh = span_h < 0 ? 0 : span_h / str[0] + 1, ow = span_w < 0 ? 0 : span_w / str[1] + 1;
  const int64_t taps = kh * kw;
  if (off.dim(0) != n || off.dim(1) != offset_group * taps * 2 || off.dim(2) != oh || off.dim(3) != ow) {
    return ctx.fail(StatusCode::kShapeMismatch, "offset must have shape ({}, {}, {}, {}), got {}", n,
                    offset_group * taps * 2, oh, ow, shape_to_string(off.shape()));
  }
  std::vector<double> mask;
  if (ctx.has_input(4)) {
    const Tensor& m = ctx.input(4);
    if (m.dtype() != x.dtype() || m.shape() != Shape{n, offset_group * taps, oh, ow}) {
      return ctx.fail(StatusCode::kShapeMismatch, "mask must be {} of shape ({}, {}, {}, {}), got {} {}",
                      dtype_name(x.dtype()), n, offset_group * taps, oh, ow, dtype_name(m.dtype()),
                      shape_to_string(m.shape()));
    }
    VN_ASSIGN_OR_RETURN(mask, tensor_to_doubles(m));
  }
  std::vector<double> bias(static_cast<size_t>(oc), 0.0);
  if (ctx.has_input(3)) {
    const Tensor& b = ctx.input(3);
    if (b.dtype() != x.dtype() || b.shape() != Shape{oc}) {
      return ctx.fail(StatusCode::kShapeMismatch, "B must be {} of shape ({}), got {} {}", dtype_name(x.dtype()), oc,
                      dtype_name(b.dtype()), shape_to_string(b.shape()));
    }
    VN_ASSIGN_OR_RETURN(bias, tensor_to_doubles(b));
  }
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), {n, oc, oh, ow}));
    if (y->numel() == 0) return Status::OK();
    VN_ASSIGN_OR_RETURN(std::vector<double> xs, tensor_to_doubles(x));
    VN_ASSIGN_OR_RETURN(std::vector<double> ws, tensor_to_doubles(wt));
    VN_ASSIGN_OR_RETURN(std::vector<double> os, tensor_to_doubles(off));
    const int64_t cpg = c / group, ocpg = oc / group, cpog = c / offset_group, positions = oh * ow;
    // cols[ch][tap][position]: the moved, masked taps of one image (im2col with offsets).
    std::vector<double> cols(static_cast<size_t>(c * taps * positions));
    T* py = y->mutable_data<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t og = ch / cpog;
        const double* plane = xs.data() + static_cast<size_t>((b * c + ch) * h * w);
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t ki = t / kw, kj = t % kw;
          const double* dy = os.data() + static_cast<size_t>(((b * offset_group + og) * taps + t) * 2 * positions);
          const double* dx = dy + positions;
          const double* mk = mask.empty()
                                 ? nullptr
                                 : mask.data() + static_cast<size_t>(((b * offset_group + og) * taps + t) * positions);
          for (int64_t p = 0; p < positions; ++p) {
            const int64_t i = p / ow, j = p % ow;
            const double yy = static_cast<double>(i * str[0] - pads[0] + ki * dil[0]) + dy[p];
            const double xx = static_cast<double>(j * str[1] - pads[1] + kj * dil[1]) + dx[p];
            const double v = sample(plane, h, w, yy, xx);
            cols[static_cast<size_t>((ch * taps + t) * positions + p)] = mk ? v * mk[p] : v;
          }
        }
      }
      for (int64_t o = 0; o < oc; ++o) {
        const int64_t g = o / ocpg;
        for (int64_t p = 0; p < positions; ++p) {
          double acc = bias[static_cast<size_t>(o)];
          for (int64_t ci = 0; ci < cpg; ++ci) {
            const int64_t ch = g * cpg + ci;
            for (int64_t t = 0; t < taps; ++t) {
              acc += ws[static_cast<size_t>((o * cpg + ci) * taps + t)] *
                     cols[static_cast<size_t>((ch * taps + t) * positions + p)];
            }
          }
          py[(b * oc + o) * positions + p] = static_cast<T>(acc);
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_deform_conv_ops(OpRegistry& registry) {
  registry.add("DeformConv", 19, deform_conv<TypeList<float, double, Eigen::half>>);
  // Version 22 adds bfloat16.
  registry.add("DeformConv", 22, deform_conv<TypeList<float, double, Eigen::half, Eigen::bfloat16>>);
}

}  // namespace vn::ops
