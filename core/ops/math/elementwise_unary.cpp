// SPDX-License-Identifier: Apache-2.0
// Unary math: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Erf, Floor, Ceil.
#include <cmath>
#include <type_traits>

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status abs_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(NumericTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
    return unary_scalar<T>(ctx, [](T v) -> T {
      if constexpr (std::is_unsigned_v<T>) {
        return v;
      } else if constexpr (std::is_integral_v<T>) {
        // Two's complement wrap: |INT_MIN| is INT_MIN, as in numpy, without signed overflow.
        using U = std::make_unsigned_t<T>;
        return v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v;
      } else {
        return std::abs(v);
      }
    });
  });
}

Status neg(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(SignedTypes{}, ctx, ctx.input(0).dtype(), [&]<typename T>() {
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

template <typename F>
Status float_unary(KernelContext& ctx, F f) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(FloatTypes{}, ctx, ctx.input(0).dtype(),
                        [&]<typename T>() { return unary_scalar<T>(ctx, [&f](T v) { return static_cast<T>(f(v)); }); });
}

Status exp_kernel(KernelContext& ctx) {
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
  return float_unary(ctx, [](auto v) { return std::erf(v); });
}
Status floor_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::floor(v); });
}
Status ceil_kernel(KernelContext& ctx) {
  return float_unary(ctx, [](auto v) { return std::ceil(v); });
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
}

}  // namespace vn::ops
