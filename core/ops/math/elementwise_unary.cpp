// SPDX-License-Identifier: Apache-2.0
// Unary math: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Erf, Floor, Ceil, Round, Sign, IsNaN, IsInf,
// and the trigonometric and hyperbolic functions with their inverses. float16 and bfloat16 compute
// in float and round once (unary_widened), as numpy's float16 loops do. float32 Exp and Erf take
// vector_math.h's (correctly rounded in practice, where glibc's expf and erff are not always).
#include <cmath>
#include <type_traits>

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/vector_math.h"

namespace vn::ops {
namespace {

Status abs_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(NumericHalfTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [](T v) -> T {
      if constexpr (std::is_unsigned_v<T>) {
        return v;
      } else if constexpr (std::is_integral_v<T>) {
        // Two's complement wrap: |INT_MIN| is INT_MIN, as in numpy, without signed overflow.
        using U = std::make_unsigned_t<T>;
        return v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v;
      } else {
        return static_cast<T>(std::abs(static_cast<WideType<T>>(v)));
      }
    });
  });
}

Status neg(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(SignedHalfTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [](T v) -> T {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(U(0) - static_cast<U>(v));
      } else {
        return -v;
      }
    });
  });
}

// f is a libm call or as costly unless `grain` says otherwise (see parallel_chunks).
template <typename F>
Status float_unary(KernelContext& ctx, F f, int64_t grain = kComputeBoundGrain) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(),
                        [&]<typename T>() { return unary_widened<T>(ctx, f, grain); });
}

Status exp_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (ctx.input(0).dtype() == DType::kFloat32) {
    return unary_float_arrays(ctx, [](const float* x, float* y, int64_t n) { vmath::exp(x, y, n); });
  }
  return float_unary(ctx, [](auto v) { return std::exp(v); });
}
Status log_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::log(v); });
}
Status sqrt_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::sqrt(v); });
}
Status reciprocal(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return decltype(v)(1) / v; });
}
Status erf_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (ctx.input(0).dtype() == DType::kFloat32) {
    return unary_float_arrays(ctx, [](const float* x, float* y, int64_t n) { vmath::erf(x, y, n); });
  }
  return float_unary(ctx, [](auto v) { return std::erf(v); });
}
Status floor_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::floor(v); }, kMemoryBoundGrain);
}
Status ceil_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::ceil(v); }, kMemoryBoundGrain);
}

Status round_kernel(KernelContext& ctx) {
  // ONNX Round rounds halves to even (numpy.round). std::nearbyint does exactly that in the
  // default FE_TONEAREST mode, unlike std::round, which rounds halves away from zero.
  return float_unary(ctx, [](auto v) { return std::nearbyint(v); }, kMemoryBoundGrain);
}

Status sin_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::sin(v); });
}
Status cos_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::cos(v); });
}
Status tan_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::tan(v); });
}
Status asin_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::asin(v); });
}
Status acos_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::acos(v); });
}
Status atan_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::atan(v); });
}
Status sinh_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::sinh(v); });
}
Status cosh_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::cosh(v); });
}
Status asinh_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::asinh(v); });
}
Status acosh_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::acosh(v); });
}
Status atanh_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::atanh(v); });
}

Status sign_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(NumericHalfTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [](T v) -> T {
      if constexpr (kIsRealFloat<T>) {
        if (Eigen::numext::isnan(v)) return v;  // numpy.sign(nan) is nan
      }
      if constexpr (!std::is_unsigned_v<T>) {
        if (v < T(0)) return T(-1);
      }
      return v > T(0) ? T(1) : T(0);
    });
  });
}

Status is_nan(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [](T v) { return bool(Eigen::numext::isnan(v)); });
  });
}

Status is_inf(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const bool positive = ctx.attr_int("detect_positive", 1) != 0;
  const bool negative = ctx.attr_int("detect_negative", 1) != 0;
  return dispatch_types(RealFloatTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [positive, negative](T v) {
      return bool(Eigen::numext::isinf(v)) && (v > T(0) ? positive : negative);
    });
  });
}

}  // namespace

void register_elementwise_unary_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6, 13}) {
    registry.add("Abs", v, abs_kernel);
    registry.add("Neg", v, neg);
    registry.add("Exp", v, exp_kernel);
    registry.add("Log", v, log_kernel);
    registry.add("Sqrt", v, sqrt_kernel);
    registry.add("Reciprocal", v, reciprocal);
    registry.add("Floor", v, floor_kernel);
    registry.add("Ceil", v, ceil_kernel);
  }
  for (int64_t v : {9, 13}) registry.add("Erf", v, erf_kernel);
  for (int64_t v : {11, 22}) registry.add("Round", v, round_kernel);
  for (int64_t v : {9, 13}) registry.add("Sign", v, sign_kernel);
  // IsNaN-20 and IsInf-20 only added float8 (and for IsInf float16/bfloat16) inputs, which IsNaN
  // and IsInf refuse; the trigonometric ops' version 22 and Round-22 only added bfloat16.
  for (int64_t v : {9, 13, 20}) registry.add("IsNaN", v, is_nan);
  for (int64_t v : {10, 20}) registry.add("IsInf", v, is_inf);
  for (int64_t v : {7, 22}) {
    registry.add("Sin", v, sin_kernel);
    registry.add("Cos", v, cos_kernel);
    registry.add("Tan", v, tan_kernel);
    registry.add("Asin", v, asin_kernel);
    registry.add("Acos", v, acos_kernel);
    registry.add("Atan", v, atan_kernel);
  }
  for (int64_t v : {9, 22}) {
    registry.add("Sinh", v, sinh_kernel);
    registry.add("Cosh", v, cosh_kernel);
    registry.add("Asinh", v, asinh_kernel);
    registry.add("Acosh", v, acosh_kernel);
    registry.add("Atanh", v, atanh_kernel);
  }
}

}  // namespace vn::ops
