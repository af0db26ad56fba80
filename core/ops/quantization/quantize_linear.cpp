// SPDX-License-Identifier: Apache-2.0
// Linear (de)quantization: QuantizeLinear y = saturate(round(x / scale) + zero_point) with round
// half to even (integer outputs, 8, 16, 4 and 2 bits) or y = cast(x / scale + zero_point) (float8
// and float4e2m1 outputs, with Cast's rounding and, from opset 19, its saturate), DequantizeLinear
// y = (x - zero_point) * scale; per tensor, per axis (opset 13) or per block along an axis (opset
// 21). DynamicQuantizeLinear derives a uint8 scale and zero point from the data's range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// Round half to even (std::nearbyint in the default rounding mode), then clamp to Q's range.
template <typename Q>
Q saturate_round(double v) {
  const double r = std::nearbyint(v);
  if (std::isnan(r)) return Q(0);
  return static_cast<Q>(std::clamp(r, static_cast<double>(std::numeric_limits<Q>::lowest()),
                                   static_cast<double>(std::numeric_limits<Q>::max())));
}

/// What a version of QuantizeLinear/DequantizeLinear reads beyond opset 10's per-tensor form.
struct QdqVersion {
  bool per_axis = false;      // 13: a 1-D scale along `axis`
  bool blocked = false;       // 21: block_size, a scale of x's rank
  bool output_dtype = false;  // Q 21, DQ 23
  bool saturate = false;      // Q 19: float8 outputs saturate or not
  bool precision = false;     // Q 23: the type the division is computed in
};

/// Scale and zero point of one (de)quantization, as x sees them: x is (outer, channels, inner)
/// around `axis`, and the scale of element (o, c, i) is scale[index(o, c, i)].
struct QuantParams {
  std::vector<double> scale;
  std::vector<double> zero_point;  // empty when omitted (zero)
  int64_t outer = 1, channels = 1, inner = 1;
  enum class Mode { kTensor, kAxis, kBlocked } mode = Mode::kTensor;
  int64_t block = 1, scale_channels = 1;

  size_t index(int64_t o, int64_t c, int64_t i) const {
    switch (mode) {
      case Mode::kTensor: return 0;
      case Mode::kAxis: return static_cast<size_t>(c);
      case Mode::kBlocked: return static_cast<size_t>((o * scale_channels + c / block) * inner + i);
    }
    return 0;
  }
};

/// Reads inputs 1 (scale) and 2 (zero point, optional) against x: a scalar scale (per tensor); with
/// `per_axis`, a 1-D scale of x.dim(axis) entries (opset 13); with `blocked` and block_size > 0, a
/// scale of x's rank whose axis dimension is ceil(x.dim(axis) / block_size) and whose other
/// dimensions are x's (opset 21). The zero point has the scale's shape.
Result<QuantParams> read_params(const KernelContext& ctx, const Tensor& x, const QdqVersion& v) {
  const Tensor& scale = ctx.input(1);
  if (dtype_is_narrow(scale.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "{} scales are not supported (float32, float16, bfloat16 are)",
                    dtype_name(scale.dtype()));
  }
  if (!dtype_is_float(scale.dtype())) {
    return ctx.fail(StatusCode::kInvalidModel, "scale must be a float tensor, got {}", dtype_name(scale.dtype()));
  }
  QuantParams q;
  q.inner = x.numel();
  const int64_t block_size = v.blocked ? ctx.attr_int("block_size", 0) : 0;
  if (block_size < 0) return ctx.fail(StatusCode::kInvalidModel, "block_size must be >= 0, got {}", block_size);
  const int64_t axis_attr = v.per_axis ? ctx.attr_int("axis", 1) : 1;
  const auto split_at = [&](int64_t axis) {
    q.outer = shape_product(x.shape(), 0, static_cast<size_t>(axis));
    q.channels = x.dim(axis);
    q.inner = shape_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  };
  if (block_size > 0) {
    if (x.rank() == 0 || scale.rank() != x.rank()) {
      return ctx.fail(StatusCode::kShapeMismatch, "blocked quantization needs a scale of the input's rank {}, got shape {}",
                      x.rank(), shape_to_string(scale.shape()));
    }
    VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, axis_attr, x.rank()));
    for (int64_t d = 0; d < x.rank(); ++d) {
      const int64_t want = d == axis ? (x.dim(d) + block_size - 1) / block_size : x.dim(d);
      if (scale.dim(d) != want) {
        return ctx.fail(StatusCode::kShapeMismatch,
                        "scale {} does not fit input {} with block_size {} along axis {} (dimension {} must be {})",
                        shape_to_string(scale.shape()), shape_to_string(x.shape()), block_size, axis, d, want);
      }
    }
    split_at(axis);
    q.mode = QuantParams::Mode::kBlocked;
    q.block = block_size;
    q.scale_channels = scale.dim(axis);
  } else if (scale.numel() != 1 || scale.rank() > 1) {
    if (!v.per_axis || scale.rank() != 1) {
      return ctx.fail(StatusCode::kShapeMismatch, "scale must be a scalar{}, got shape {}",
                      v.per_axis ? " or a 1-D tensor" : "", shape_to_string(scale.shape()));
    }
    if (x.rank() == 0) return ctx.fail(StatusCode::kShapeMismatch, "a 1-D scale needs an input of rank >= 1");
    VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, axis_attr, x.rank()));
    if (scale.dim(0) != x.dim(axis)) {
      return ctx.fail(StatusCode::kShapeMismatch, "scale has {} entries but axis {} of the input {} has {}",
                      scale.dim(0), axis, shape_to_string(x.shape()), x.dim(axis));
    }
    split_at(axis);
    q.mode = QuantParams::Mode::kAxis;
  }
  VN_ASSIGN_OR_RETURN(q.scale, tensor_to_doubles(scale));
  if (ctx.has_input(2)) {
    const Tensor& zp = ctx.input(2);
    // A per-tensor zero point may be a scalar or hold one element, whatever the scale's form.
    const bool both_single = zp.numel() == 1 && scale.numel() == 1 && zp.rank() <= 1 && scale.rank() <= 1;
    if (zp.shape() != scale.shape() && !both_single) {
      return ctx.fail(StatusCode::kShapeMismatch, "zero point {} must have the shape of scale {}",
                      shape_to_string(zp.shape()), shape_to_string(scale.shape()));
    }
    if (zp.dtype() == DType::kBool || zp.dtype() == DType::kString || dtype_is_float(zp.dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType, "zero point must be an integer, float8 or float4 tensor, got {}",
                      dtype_name(zp.dtype()));
    }
    VN_ASSIGN_OR_RETURN(q.zero_point, tensor_to_doubles(zp));
  }
  return q;
}

/// The range of an integer output type, or nullopt for the float8/float4 types.
std::optional<std::pair<double, double>> integer_range(DType t) {
  switch (t) {
    case DType::kUInt8: return std::pair{0.0, 255.0};
    case DType::kInt8: return std::pair{-128.0, 127.0};
    case DType::kUInt16: return std::pair{0.0, 65535.0};
    case DType::kInt16: return std::pair{-32768.0, 32767.0};
    case DType::kUInt4: return std::pair{0.0, 15.0};
    case DType::kInt4: return std::pair{-8.0, 7.0};
    case DType::kUInt2: return std::pair{0.0, 3.0};
    case DType::kInt2: return std::pair{-2.0, 1.0};
    default: return std::nullopt;
  }
}

/// The quotient x / scale in `precision` (float32, float16 or bfloat16: each quotient is rounded to
/// it, as numpy computes it in that type; float64 exactly).
double divide_in(DType precision, double x, double scale) {
  switch (precision) {
    case DType::kFloat32: return static_cast<float>(x) / static_cast<float>(scale);
    case DType::kFloat16:
      return static_cast<float>(Eigen::half(static_cast<float>(Eigen::half(static_cast<float>(x))) /
                                            static_cast<float>(Eigen::half(static_cast<float>(scale)))));
    case DType::kBFloat16:
      return static_cast<float>(Eigen::bfloat16(static_cast<float>(Eigen::bfloat16(static_cast<float>(x))) /
                                                static_cast<float>(Eigen::bfloat16(static_cast<float>(scale)))));
    default: return x / scale;
  }
}

/// The output type of QuantizeLinear: the zero point's, else output_dtype (opset 21), else uint8.
Result<DType> quantize_output_type(const KernelContext& ctx, const QdqVersion& v) {
  const int64_t attr = v.output_dtype ? ctx.attr_int("output_dtype", 0) : 0;
  std::optional<DType> from_attr;
  if (attr != 0) {
    from_attr = dtype_from_onnx(static_cast<int32_t>(attr));
    if (!from_attr) return ctx.fail(StatusCode::kUnsupportedDType, "output_dtype {} is not a type Vernier has", attr);
  }
  if (ctx.has_input(2)) {
    const DType zp = ctx.input(2).dtype();
    if (from_attr && *from_attr != zp) {
      return ctx.fail(StatusCode::kInvalidModel, "output_dtype {} differs from the zero point's type {}",
                      dtype_name(*from_attr), dtype_name(zp));
    }
    return zp;
  }
  return from_attr.value_or(DType::kUInt8);
}

Status quantize_with(KernelContext& ctx, const QdqVersion& v) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(QuantParams q, read_params(ctx, x, v));
  VN_ASSIGN_OR_RETURN(DType out, quantize_output_type(ctx, v));
  const std::optional<std::pair<double, double>> range = integer_range(out);
  const std::optional<NarrowFormat> narrow = dtype_narrow_format(out);
  if (!range && !narrow) {
    return unsupported_dtype(ctx, out,
                             {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kUInt4, DType::kInt4,
                              DType::kUInt2, DType::kInt2, DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ,
                              DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ, DType::kFloat4E2M1});
  }
  if (out == DType::kFloat8E8M0) return unsupported_dtype(ctx, out, {DType::kUInt8, DType::kInt8});
  const DType xt = x.dtype();
  if (xt != DType::kFloat32 && xt != DType::kFloat16 && xt != DType::kBFloat16 && xt != DType::kInt32 &&
      xt != DType::kFloat64) {
    return unsupported_dtype(ctx, xt, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32});
  }
  // The division's type: `precision` (opset 23), else what numpy computes x / scale in: the
  // scale's type for float inputs of at most its width, float64 for int32 and float64 inputs.
  DType precision = ctx.input(1).dtype();
  if (xt == DType::kInt32 || xt == DType::kFloat64) precision = DType::kFloat64;
  if (xt == DType::kFloat32 && precision != DType::kFloat64) precision = DType::kFloat32;
  if (v.precision && ctx.attr_int("precision", 0) != 0) {
    const std::optional<DType> p = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("precision", 0)));
    if (!p || !dtype_is_float(*p)) {
      return ctx.fail(StatusCode::kUnsupportedDType, "precision {} is not a float type", ctx.attr_int("precision", 0));
    }
    precision = *p;
  }
  NarrowCastOptions cast;
  cast.saturate = !v.saturate || ctx.attr_int("saturate", 1) != 0;
  VN_ASSIGN_OR_RETURN(std::vector<double> xs, tensor_to_doubles(x));
  std::vector<double> ys(xs.size());
  for (int64_t o = 0; o < q.outer; ++o) {
    for (int64_t c = 0; c < q.channels; ++c) {
      for (int64_t i = 0; i < q.inner; ++i) {
        const size_t k = q.index(o, c, i);
        const auto e = static_cast<size_t>((o * q.channels + c) * q.inner + i);
        const double zp = q.zero_point.empty() ? 0.0 : q.zero_point[k];
        const double quotient = divide_in(precision, xs[e], q.scale[k]);
        if (range) {
          const double r = std::nearbyint(quotient) + zp;
          ys[e] = std::isnan(r) ? 0.0 : std::clamp(r, range->first, range->second);
        } else {
          ys[e] = quotient + zp;  // float8/float4: exact here, rounded once when encoded below
        }
      }
    }
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x.shape()));
  if (narrow) {
    auto* codes = static_cast<uint8_t*>(y->mutable_raw());
    for (size_t e = 0; e < ys.size(); ++e) codes[e] = narrow_encode(*narrow, ys[e], cast);
    return Status::OK();
  }
  return dispatch_types(TypeList<uint8_t, int8_t, uint16_t, int16_t>{}, ctx, out, [&]<typename Q>() {
    Q* py = y->numel() > 0 ? y->mutable_data<Q>() : nullptr;
    for (size_t e = 0; e < ys.size(); ++e) py[e] = static_cast<Q>(ys[e]);
    return Status::OK();
  });
}

Status dequantize_with(KernelContext& ctx, const QdqVersion& v) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(QuantParams q, read_params(ctx, x, v));
  if (ctx.has_input(2) && ctx.input(2).dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "zero point ({}) must have the type of x ({})",
                    dtype_name(ctx.input(2).dtype()), dtype_name(x.dtype()));
  }
  const DType xt = x.dtype();
  if (!dtype_is_integer(xt) && !dtype_is_narrow(xt)) {
    return ctx.fail(StatusCode::kUnsupportedDType, "x must be an integer, float8 or float4 tensor, got {}",
                    dtype_name(xt));
  }
  if (dtype_is_integer(xt) && xt != DType::kUInt8 && xt != DType::kInt8 && xt != DType::kInt32 &&
      xt != DType::kUInt16 && xt != DType::kInt16) {
    return unsupported_dtype(ctx, xt, {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32});
  }
  // The output has the scale's type, or output_dtype (opset 23).
  DType out = ctx.input(1).dtype();
  if (v.output_dtype && ctx.attr_int("output_dtype", 0) != 0) {
    const std::optional<DType> o = dtype_from_onnx(static_cast<int32_t>(ctx.attr_int("output_dtype", 0)));
    if (!o || !dtype_is_float(*o)) {
      return ctx.fail(StatusCode::kUnsupportedDType, "output_dtype {} is not a float type",
                      ctx.attr_int("output_dtype", 0));
    }
    out = *o;
  }
  VN_ASSIGN_OR_RETURN(std::vector<double> xs, tensor_to_doubles(x));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x.shape()));
  return dispatch_types(TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, ctx, out, [&]<typename T>() {
    T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
    for (int64_t o = 0; o < q.outer; ++o) {
      for (int64_t c = 0; c < q.channels; ++c) {
        for (int64_t i = 0; i < q.inner; ++i) {
          const size_t k = q.index(o, c, i);
          const auto e = static_cast<size_t>((o * q.channels + c) * q.inner + i);
          const double zp = q.zero_point.empty() ? 0.0 : q.zero_point[k];
          // (x - zero_point) in float32 times the scale in float32, as ONNX's reference computes it.
          py[e] = static_cast<T>(static_cast<float>(xs[e] - zp) * static_cast<float>(q.scale[k]));
        }
      }
    }
    return Status::OK();
  });
}

// DynamicQuantizeLinear-11 (uint8): the range [min(0, min x), max(0, max x)] maps onto [0, 255];
// scale = range / 255 and zero_point = saturate(round(-min / scale)), in float as the spec's
// function body computes them. An all-zero input gets scale 0 and quantizes to zeros.
Status dynamic_quantize_linear(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1, 3));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32) return unsupported_dtype(ctx, x.dtype(), {DType::kFloat32});
  const float* px = x.numel() > 0 ? x.data<float>() : nullptr;
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(px[i])) return ctx.fail(StatusCode::kNumericFailure, "input holds NaN at flat position {}", i);
    lo = std::min(lo, px[i]);
    hi = std::max(hi, px[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const uint8_t zp = scale == 0.0f ? 0 : saturate_round<uint8_t>(static_cast<double>((0.0f - lo) / scale));
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kUInt8, x.shape()));
  uint8_t* py = x.numel() > 0 ? y->mutable_data<uint8_t>() : nullptr;
  for (int64_t i = 0; i < x.numel(); ++i) {
    py[i] = scale == 0.0f ? zp : saturate_round<uint8_t>(std::nearbyint(static_cast<double>(px[i] / scale)) + zp);
  }
  VN_ASSIGN_OR_RETURN(Tensor * ys, ctx.allocate_output(1, DType::kFloat32, {}));
  ys->mutable_data<float>()[0] = scale;
  VN_ASSIGN_OR_RETURN(Tensor * yz, ctx.allocate_output(2, DType::kUInt8, {}));
  yz->mutable_data<uint8_t>()[0] = zp;
  return Status::OK();
}


}  // namespace

void register_quantize_linear_ops(OpRegistry& registry) {
  // 19 added float8 outputs and saturate; 21 blocked quantization, output_dtype, int4/uint4 and
  // int16/uint16; 23 float4e2m1 and precision; 24 and 25 further types (float8e8m0 scales are not
  // supported and are refused by type, int2/uint2); 28's cases in ONNX 1.23's suite are what this
  // kernel computes.
  registry.add("QuantizeLinear", 10, [](KernelContext& ctx) { return quantize_with(ctx, {}); });
  registry.add("QuantizeLinear", 13, [](KernelContext& ctx) { return quantize_with(ctx, {.per_axis = true}); });
  registry.add("QuantizeLinear", 19,
               [](KernelContext& ctx) { return quantize_with(ctx, {.per_axis = true, .saturate = true}); });
  registry.add("QuantizeLinear", 21, [](KernelContext& ctx) {
    return quantize_with(ctx, {.per_axis = true, .blocked = true, .output_dtype = true, .saturate = true});
  });
  for (int64_t version : {23, 24, 25, 28}) {
    registry.add("QuantizeLinear", version, [](KernelContext& ctx) {
      return quantize_with(
          ctx, {.per_axis = true, .blocked = true, .output_dtype = true, .saturate = true, .precision = true});
    });
  }
  registry.add("DequantizeLinear", 10, [](KernelContext& ctx) { return dequantize_with(ctx, {}); });
  // DequantizeLinear-19 only added float8 inputs and float16/bfloat16 scales.
  for (int64_t version : {13, 19}) {
    registry.add("DequantizeLinear", version,
                 [](KernelContext& ctx) { return dequantize_with(ctx, {.per_axis = true}); });
  }
  registry.add("DequantizeLinear", 21,
               [](KernelContext& ctx) { return dequantize_with(ctx, {.per_axis = true, .blocked = true}); });
  for (int64_t version : {23, 24, 25, 28}) {
    registry.add("DequantizeLinear", version, [](KernelContext& ctx) {
      return dequantize_with(ctx, {.per_axis = true, .blocked = true, .output_dtype = true});
    });
  }
  registry.add("DynamicQuantizeLinear", 11, dynamic_quantize_linear);
}

}  // namespace vn::ops
