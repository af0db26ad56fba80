// SPDX-License-Identifier: Apache-2.0
// Quantized compute ops: QLinearMatMul and QLinearConv. Inputs are centred on their zero points
// and multiplied exactly in integers; the integer result is requantized with
// y = saturate(round(acc * x_scale * w_scale / y_scale) + y_zero_point), rounding half to even,
// with the multiplier evaluated in double precision.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/spatial.h"

namespace vn::ops {
namespace {

/// A quantized tensor's values minus its zero point(s), with its scale(s). Parameters hold one
/// value (per tensor) or `groups` values, the g-th applying to elements with
/// (flat index / group_stride) % groups == g.
struct Centered {
  std::vector<int32_t> values;
  std::vector<double> scale;
};

/// Reads data input `di` (int8/uint8) and its scale/zero point inputs `si`/`zi`. `groups` > 0
/// allows per-group parameters of that many entries (`group_stride` elements apart); `param_shape`
/// names the accepted shapes in errors.
Result<Centered> centered(const KernelContext& ctx, size_t di, size_t si, size_t zi, int64_t groups,
                          int64_t group_stride, std::string_view what, DType scale_type = DType::kFloat32) {
  const Tensor& t = ctx.input(di);
  const Tensor& scale = ctx.input(si);
  const Tensor& zp = ctx.input(zi);
  if (t.dtype() != DType::kInt8 && t.dtype() != DType::kUInt8) {
    return unsupported_dtype(ctx, t.dtype(), {DType::kInt8, DType::kUInt8});
  }
  if (zp.dtype() != t.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "{}_zero_point ({}) must have the type of {} ({})", what,
                    dtype_name(zp.dtype()), what, dtype_name(t.dtype()));
  }
  if (scale.dtype() != scale_type) {
    return ctx.fail(StatusCode::kInvalidModel, "{}_scale must be {}, got {}", what, dtype_name(scale_type),
                    dtype_name(scale.dtype()));
  }
  const int64_t n = scale.numel();
  if (n != zp.numel() || !(n == 1 || (groups > 0 && n == groups))) {
    return ctx.fail(StatusCode::kShapeMismatch, "{}_scale {} and {}_zero_point {} must both hold 1{} value(s)", what,
                    shape_to_string(scale.shape()), what, shape_to_string(zp.shape()),
                    groups > 0 ? fmt::format(" or {}", groups) : std::string());
  }
  Centered c;
  VN_ASSIGN_OR_RETURN(c.scale, tensor_to_doubles(scale));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> z, tensor_to_int64s(zp));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> v, tensor_to_int64s(t));
  c.values.resize(v.size());
  const int64_t stride = std::max<int64_t>(group_stride, 1);
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t g = n == 1 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / stride) % n);
    c.values[i] = static_cast<int32_t>(v[i] - z[g]);
  }
  return c;
}

/// The output's scale and zero point (inputs si, zi; scalars) and type.
struct OutputQuant {
  double scale = 1.0;
  int64_t zero_point = 0;
  DType dtype = DType::kUInt8;
};

Result<OutputQuant> output_quant(const KernelContext& ctx, size_t si, size_t zi, DType scale_type = DType::kFloat32) {
  const Tensor& scale = ctx.input(si);
  const Tensor& zp = ctx.input(zi);
  if (scale.numel() != 1 || zp.numel() != 1 || scale.dtype() != scale_type) {
    return ctx.fail(StatusCode::kShapeMismatch, "y_scale ({}) and y_zero_point must be scalars, got {} {} and {}",
                    dtype_name(scale_type), dtype_name(scale.dtype()), shape_to_string(scale.shape()),
                    shape_to_string(zp.shape()));
  }
  if (zp.dtype() != DType::kUInt8 && zp.dtype() != DType::kInt8) {
    return unsupported_dtype(ctx, zp.dtype(), {DType::kUInt8, DType::kInt8});
  }
  OutputQuant q;
  q.scale = tensor_to_doubles(scale).value()[0];
  q.zero_point = tensor_to_int64s(zp).value()[0];
  q.dtype = zp.dtype();
  if (!(q.scale > 0) || !std::isfinite(q.scale)) {
    return ctx.fail(StatusCode::kInvalidModel, "y_scale must be positive and finite, got {}", q.scale);
  }
  return q;
}

/// Writes round-half-even(acc[i] * multiplier(i)) + zero_point, saturated, into y.
template <typename Multiplier>
Status requantize(KernelContext& ctx, const std::vector<int64_t>& acc, const OutputQuant& q, Tensor* y,
                  Multiplier&& multiplier) {
  return dispatch_types(TypeList<uint8_t, int8_t>{}, ctx, q.dtype, [&]<typename Q>() {
    Q* py = y->numel() > 0 ? y->mutable_data<Q>() : nullptr;
    for (size_t i = 0; i < acc.size(); ++i) {
      const double v = std::nearbyint(static_cast<double>(acc[i]) * multiplier(i)) + static_cast<double>(q.zero_point);
      py[i] = static_cast<Q>(std::clamp(v, static_cast<double>(std::numeric_limits<Q>::lowest()),
                                        static_cast<double>(std::numeric_limits<Q>::max())));
    }
    return Status::OK();
  });
}

// QLinearMatMul: numpy matmul of the centred a and b. a's parameters may be per row (M entries),
// b's per column (N entries). Version 21 (`kAnyScaleType`) takes float16 or bfloat16 scales
// besides float32, all three of one type; the multiplier is still evaluated in double.
template <bool kAnyScaleType>
Status qlinear_matmul(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 8));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  if (a.rank() < 1 || b.rank() < 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "a and b must have rank >= 1, got {} and {}",
                    shape_to_string(a.shape()), shape_to_string(b.shape()));
  }
  Shape sa = a.shape();
  Shape sb = b.shape();
  if (a.rank() == 1) sa.insert(sa.begin(), 1);
  if (b.rank() == 1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) {
    return ctx.fail(StatusCode::kShapeMismatch, "inner dimensions differ: a {} vs b {}", shape_to_string(a.shape()),
                    shape_to_string(b.shape()));
  }
  const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  Result<Shape> batch = broadcast_shapes(batch_a, batch_b);
  if (!batch.ok()) {
    return ctx.fail(StatusCode::kShapeMismatch, "batch dimensions of a {} and b {} do not broadcast",
                    shape_to_string(a.shape()), shape_to_string(b.shape()));
  }
  DType scale_type = DType::kFloat32;
  if (kAnyScaleType) {
    scale_type = ctx.input(1).dtype();
    if (scale_type != DType::kFloat32 && scale_type != DType::kFloat16 && scale_type != DType::kBFloat16) {
      return unsupported_dtype(ctx, scale_type, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    }
  }
  VN_ASSIGN_OR_RETURN(Centered ca, centered(ctx, 0, 1, 2, m, k, "a", scale_type));
  VN_ASSIGN_OR_RETURN(Centered cb, centered(ctx, 3, 4, 5, n, 1, "b", scale_type));
  VN_ASSIGN_OR_RETURN(OutputQuant q, output_quant(ctx, 6, 7, scale_type));
  Shape out_shape = *batch;
  if (a.rank() > 1) out_shape.push_back(m);
  if (b.rank() > 1) out_shape.push_back(n);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype, out_shape));
  std::vector<int64_t> acc(static_cast<size_t>(y->numel()), 0);
  if (!acc.empty()) {
    const Shape strides[] = {broadcast_strides(batch_a, *batch), broadcast_strides(batch_b, *batch)};
    const StridedLoop loop(*batch, strides);
    loop.for_each_row([&](int64_t dense, const int64_t* off) {
      for (int64_t r = 0; r < loop.row_size(); ++r) {
        const int32_t* pa = ca.values.data() + (off[0] + r * loop.inner_stride(0)) * m * k;
        const int32_t* pb = cb.values.data() + (off[1] + r * loop.inner_stride(1)) * k * n;
        int64_t* py = acc.data() + (dense + r) * m * n;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t p = 0; p < k; ++p) {
            const int64_t av = pa[i * k + p];
            for (int64_t j = 0; j < n; ++j) py[i * n + j] += av * pb[p * n + j];
          }
        }
      }
    });
  }
  return requantize(ctx, acc, q, y, [&](size_t i) {
    const size_t row = ca.scale.size() == 1 ? 0 : (i / static_cast<size_t>(n)) % static_cast<size_t>(m);
    const size_t col = cb.scale.size() == 1 ? 0 : i % static_cast<size_t>(n);
    return ca.scale[row] * cb.scale[col] / q.scale;
  });
}

// QLinearConv-10: Conv of the centred x and w (w's parameters may be per output channel) plus an
// optional int32 bias quantized with scale x_scale * w_scale and zero point 0. Padding reads as
// x's zero point, i.e. 0 after centring.
Status qlinear_conv(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 8));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(3);
  if (x.rank() < 3 || w.rank() != x.rank()) {
    return ctx.fail(StatusCode::kShapeMismatch,
                    "x must be (N, C, D1, ...) and w (M, C/group, k1, ...) of the same rank, got {} and {}",
                    shape_to_string(x.shape()), shape_to_string(w.shape()));
  }
  const size_t spatial = static_cast<size_t>(x.rank() - 2);
  if (spatial > 3)
    return ctx.fail(StatusCode::kUnsupportedAttr, "{}-D convolution is not supported (1-D to 3-D are)", spatial);
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t batch = x.dim(0), c = x.dim(1), m = w.dim(0);
  if (group < 1 || c % group != 0 || m % group != 0 || w.dim(1) * group != c) {
    return ctx.fail(StatusCode::kShapeMismatch, "x has {} channels and w {} with group={} do not match", c,
                    shape_to_string(w.shape()), group);
  }
  const Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel) {
    return ctx.fail(StatusCode::kShapeMismatch, "kernel_shape attribute disagrees with w's spatial dims {}",
                    shape_to_string(kernel));
  }
  const Shape in(x.shape().begin() + 2, x.shape().end());
  VN_ASSIGN_OR_RETURN(WindowGeometry geo, window_geometry(ctx, in, kernel, false, true));
  VN_ASSIGN_OR_RETURN(Centered cx, centered(ctx, 0, 1, 2, 0, 1, "x"));
  VN_ASSIGN_OR_RETURN(Centered cw, centered(ctx, 3, 4, 5, m, shape_numel(w.shape()) / std::max<int64_t>(m, 1), "w"));
  VN_ASSIGN_OR_RETURN(OutputQuant q, output_quant(ctx, 6, 7));
  std::vector<int64_t> bias(static_cast<size_t>(m), 0);
  if (ctx.has_input(8)) {
    const Tensor& b = ctx.input(8);
    if (b.dtype() != DType::kInt32 || b.shape() != Shape{m}) {
      return ctx.fail(StatusCode::kShapeMismatch, "B must be a 1-D int32 tensor of {} elements, got {} {}", m,
                      dtype_name(b.dtype()), shape_to_string(b.shape()));
    }
    VN_ASSIGN_OR_RETURN(bias, tensor_to_int64s(b));
  }
  Shape out_shape = {batch, m};
  out_shape.insert(out_shape.end(), geo.out.begin(), geo.out.end());
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype, out_shape));
  const WindowGeometry g = lift_to_3d(geo);
  const int64_t cg = c / group, mg = m / group;
  const int64_t id = g.in[0], ih = g.in[1], iw = g.in[2];
  const int64_t kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const int64_t od = g.out[0], oh = g.out[1], ow = g.out[2];
  std::vector<int64_t> acc(static_cast<size_t>(y->numel()), 0);
  int64_t o = 0;
  for (int64_t img = 0; img < batch; ++img) {
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t gi = oc / mg;
      for (int64_t z = 0; z < od; ++z) {
        for (int64_t yy = 0; yy < oh; ++yy) {
          for (int64_t xx = 0; xx < ow; ++xx, ++o) {
            int64_t sum = bias[static_cast<size_t>(oc)];
            for (int64_t ic = 0; ic < cg; ++ic) {
              const int32_t* px = cx.values.data() + ((img * c + gi * cg + ic) * id) * ih * iw;
              const int32_t* pw = cw.values.data() + ((oc * cg + ic) * kd) * kh * kw;
              for (int64_t a = 0; a < kd; ++a) {
                const int64_t sz = z * g.strides[0] - g.pads_begin[0] + a * g.dilations[0];
                if (sz < 0 || sz >= id) continue;
                for (int64_t bq = 0; bq < kh; ++bq) {
                  const int64_t sy = yy * g.strides[1] - g.pads_begin[1] + bq * g.dilations[1];
                  if (sy < 0 || sy >= ih) continue;
                  for (int64_t cq = 0; cq < kw; ++cq) {
                    const int64_t sx = xx * g.strides[2] - g.pads_begin[2] + cq * g.dilations[2];
                    if (sx < 0 || sx >= iw) continue;
                    sum += static_cast<int64_t>(px[(sz * ih + sy) * iw + sx]) * pw[(a * kh + bq) * kw + cq];
                  }
                }
              }
            }
            acc[static_cast<size_t>(o)] = sum;
          }
        }
      }
    }
  }
  const auto plane = static_cast<size_t>(od * oh * ow);
  return requantize(ctx, acc, q, y, [&](size_t i) {
    const size_t oc = cw.scale.size() == 1 ? 0 : (i / std::max<size_t>(plane, 1)) % static_cast<size_t>(m);
    return cx.scale[0] * cw.scale[oc] / q.scale;
  });
}

}  // namespace

void register_qlinear_ops(OpRegistry& registry) {
  registry.add("QLinearConv", 10, qlinear_conv);
  registry.add("QLinearMatMul", 10, qlinear_matmul<false>);
  // QLinearMatMul-21 added float16/bfloat16 scales and float8 operands (refused as operands).
  registry.add("QLinearMatMul", 21, qlinear_matmul<true>);
}

}  // namespace vn::ops
