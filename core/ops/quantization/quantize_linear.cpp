// SPDX-License-Identifier: Apache-2.0
// Linear (de)quantization: QuantizeLinear y = saturate(round(x / scale) + zero_point) with round
// half to even, DequantizeLinear y = (x - zero_point) * scale, both per tensor or (opset 13) per
// axis; DynamicQuantizeLinear derives a uint8 scale and zero point from the data's range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

/// Scale and zero point of one (de)quantization: per tensor (one value) or per slice of `axis`.
struct QuantParams {
  std::vector<double> scale;
  std::vector<int64_t> zero_point;             // empty when omitted (zero)
  int64_t outer = 1, channels = 1, inner = 1;  // x seen as (outer, channels, inner)
};

/// Reads inputs 1 (scale) and 2 (zero point, optional) against x. With `per_axis`, a 1-D scale
/// of x.dim(axis) entries quantizes each slice of that axis separately (ONNX opset 13).
Result<QuantParams> read_params(const KernelContext& ctx, const Tensor& x, bool per_axis) {
  const Tensor& scale = ctx.input(1);
  if (!dtype_is_float(scale.dtype())) {
    return ctx.fail(StatusCode::kInvalidModel, "scale must be a float tensor, got {}", dtype_name(scale.dtype()));
  }
  QuantParams q;
  q.inner = x.numel();
  if (scale.numel() != 1 || scale.rank() > 1) {
    if (!per_axis || scale.rank() != 1) {
      return ctx.fail(StatusCode::kShapeMismatch, "scale must be a scalar{}, got shape {}",
                      per_axis ? " or a 1-D tensor" : "", shape_to_string(scale.shape()));
    }
    if (x.rank() == 0) return ctx.fail(StatusCode::kShapeMismatch, "a 1-D scale needs an input of rank >= 1");
    VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 1), x.rank()));
    if (scale.dim(0) != x.dim(axis)) {
      return ctx.fail(StatusCode::kShapeMismatch, "scale has {} entries but axis {} of the input {} has {}",
                      scale.dim(0), axis, shape_to_string(x.shape()), x.dim(axis));
    }
    q.outer = shape_product(x.shape(), 0, static_cast<size_t>(axis));
    q.channels = x.dim(axis);
    q.inner = shape_product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  }
  VN_ASSIGN_OR_RETURN(q.scale, tensor_to_doubles(scale));
  if (ctx.has_input(2)) {
    const Tensor& zp = ctx.input(2);
    if (zp.shape() != scale.shape()) {
      return ctx.fail(StatusCode::kShapeMismatch, "zero point {} must have the shape of scale {}",
                      shape_to_string(zp.shape()), shape_to_string(scale.shape()));
    }
    if (!dtype_is_integer(zp.dtype())) {
      return ctx.fail(StatusCode::kUnsupportedDType, "zero point must be an integer tensor, got {}",
                      dtype_name(zp.dtype()));
    }
    VN_ASSIGN_OR_RETURN(q.zero_point, tensor_to_int64s(zp));
  }
  return q;
}

Status quantize_with(KernelContext& ctx, bool per_axis) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(QuantParams q, read_params(ctx, x, per_axis));
  // The output type is the zero point's; uint8 when it is omitted.
  const DType out = ctx.has_input(2) ? ctx.input(2).dtype() : DType::kUInt8;
  if (out != DType::kUInt8 && out != DType::kInt8) return unsupported_dtype(ctx, out, {DType::kUInt8, DType::kInt8});
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x.shape()));
  using Types = TypeList<float, double, Eigen::half, Eigen::bfloat16, int32_t>;
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() {
    const T* px = x.numel() > 0 ? x.data<T>() : nullptr;
    return dispatch_types(TypeList<uint8_t, int8_t>{}, ctx, out, [&]<typename Q>() {
      Q* py = y->numel() > 0 ? y->mutable_data<Q>() : nullptr;
      for (int64_t o = 0; o < q.outer; ++o) {
        for (int64_t c = 0; c < q.channels; ++c) {
          const auto ci = static_cast<size_t>(c);
          const double zp = q.zero_point.empty() ? 0.0 : static_cast<double>(q.zero_point[ci]);
          const double scale = q.scale[ci];
          const int64_t base = (o * q.channels + c) * q.inner;
          for (int64_t i = 0; i < q.inner; ++i) {
            // x / scale is divided in float for float32 input, as ONNX's reference and runtimes do.
            double v;
            if constexpr (std::is_same_v<T, float>) {
              v = static_cast<double>(px[base + i] / static_cast<float>(scale));
            } else {
              v = static_cast<double>(px[base + i]) / scale;
            }
            py[base + i] = saturate_round<Q>(std::nearbyint(v) + zp);
          }
        }
      }
      return Status::OK();
    });
  });
}

Status quantize_linear_10(KernelContext& ctx) { return quantize_with(ctx, false); }
Status quantize_linear_13(KernelContext& ctx) { return quantize_with(ctx, true); }

Status dequantize_with(KernelContext& ctx, bool per_axis) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(QuantParams q, read_params(ctx, x, per_axis));
  if (ctx.has_input(2) && ctx.input(2).dtype() != x.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "zero point ({}) must have the type of x ({})",
                    dtype_name(ctx.input(2).dtype()), dtype_name(x.dtype()));
  }
  // The output has the scale's type (float32 up to opset 18).
  const DType out = ctx.input(1).dtype();
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x.shape()));
  return dispatch_types(TypeList<uint8_t, int8_t, int32_t>{}, ctx, x.dtype(), [&]<typename Q>() {
    const Q* px = x.numel() > 0 ? x.data<Q>() : nullptr;
    return dispatch_types(TypeList<float, double, Eigen::half, Eigen::bfloat16>{}, ctx, out, [&]<typename T>() {
      T* py = y->numel() > 0 ? y->mutable_data<T>() : nullptr;
      for (int64_t o = 0; o < q.outer; ++o) {
        for (int64_t c = 0; c < q.channels; ++c) {
          const auto ci = static_cast<size_t>(c);
          const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[ci];
          const auto scale = static_cast<float>(q.scale[ci]);
          const int64_t base = (o * q.channels + c) * q.inner;
          for (int64_t i = 0; i < q.inner; ++i) {
            py[base + i] = static_cast<T>(static_cast<float>(static_cast<int64_t>(px[base + i]) - zp) * scale);
          }
        }
      }
      return Status::OK();
    });
  });
}

Status dequantize_linear_10(KernelContext& ctx) { return dequantize_with(ctx, false); }
Status dequantize_linear_13(KernelContext& ctx) { return dequantize_with(ctx, true); }

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


// QuantizeLinear-19: saturate only decides how float8 outputs round out-of-range values, and
// Vernier has no float8 type (a float8 zero point is refused when the model is read).
Status quantize_linear_19(KernelContext& ctx) {
  ctx.ignore_attrs({"saturate"});
  return quantize_linear_13(ctx);
}

}  // namespace

void register_quantize_linear_ops(OpRegistry& registry) {
  registry.add("QuantizeLinear", 10, quantize_linear_10);
  registry.add("QuantizeLinear", 13, quantize_linear_13);
  registry.add("QuantizeLinear", 19, quantize_linear_19);
  registry.add("DequantizeLinear", 10, dequantize_linear_10);
  // DequantizeLinear-19 only added float8 inputs and float16/bfloat16 scales.
  for (int64_t v : {13, 19}) registry.add("DequantizeLinear", v, dequantize_linear_13);
  registry.add("DynamicQuantizeLinear", 11, dynamic_quantize_linear);
}

}  // namespace vn::ops
