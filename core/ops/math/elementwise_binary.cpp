// SPDX-License-Identifier: Apache-2.0
// Binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Pow, Mod. Opset < 7 versions use
// the legacy broadcast/axis attributes instead. Mod-28 adds floor modulus for floating-point
// inputs (fmod = 0), as numpy.mod computes it.
//
// float16 and bfloat16 compute each element in float and round the result once to the element
// type (ComputeType), which is what ONNX's reference gets from numpy's float16 loops (and from
// ml_dtypes' bfloat16). For +, -, * and / that equals the exact result rounded once to the element
// type: rounding first to float32 cannot change the final rounding, because float32's 24
// significant bits are at least 2p + 2 for float16's p = 11 and bfloat16's p = 8 (Figueroa, "When
// is double rounding innocuous?", 1995); so ties go to even, overflow gives inf and tiny results
// round among the subnormals exactly as a direct float16 operation would.
//
// Integer semantics: Add/Sub/Mul wrap modulo 2^n. Div truncates toward zero like C and the ONNX
// reference implementation (numpy true division cast back to the integer type), which differs from
// numpy's floor division for negative operands; INT_MIN / -1 wraps to INT_MIN and division by zero
// is a kNumericFailure rather than a crash.
#include <cmath>
#include <type_traits>

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    } else {
      return a - b;
    }
  }
};

struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
};

struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
};

template <typename T>
Status check_no_zero_divisor(const KernelContext& ctx, const Tensor& b) {
  const T* p = b.data<T>();
  for (int64_t i = 0; i < b.numel(); ++i) {
    if (p[i] == T(0)) {
      return ctx.fail(StatusCode::kNumericFailure, "integer division by zero (divisor B is 0 at flat index {})", i);
    }
  }
  return Status::OK();
}

Status check_same_dtype(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "inputs A ({}) and B ({}) must have the same type",
                    dtype_name(a.dtype()), dtype_name(b.dtype()));
  }
  return Status::OK();
}

template <typename Op, bool kLegacy>
Status arithmetic(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  // B by reference: a copy would share its storage, and the output could not be written over a
  // dying B (an SE block's Mul(scale, x) allocated a fresh output: 3x the multiply's time).
  const Tensor* b = &ctx.input(1);
  VN_RETURN_IF_ERROR(check_same_dtype(ctx, a, *b));
  Tensor legacy;
  if constexpr (kLegacy) {
    VN_ASSIGN_OR_RETURN(legacy, legacy_broadcast_view(ctx, a, *b));
    b = &legacy;
  }
  return dispatch_types(NumericHalfTypes{}, ctx, a.dtype(), [&]<typename T>() -> Status {
    if constexpr (std::is_same_v<Op, DivOp> && std::is_integral_v<T>) {
      // With a non-empty A every element of B is used, so any zero divisor is reached.
      if (a.numel() > 0) VN_RETURN_IF_ERROR(check_no_zero_divisor<T>(ctx, *b));
    }
    return binary_broadcast<T, T, T>(ctx, a, *b, Op{});
  });
}

// ---- Pow ---------------------------------------------------------------------------------------

/// Integer power by squaring with wrapping multiplication. A negative exponent truncates 1/x^n
/// toward zero (1 for x = 1, ±1 for x = -1, 0 otherwise); 0 to a negative power sets *bad.
template <typename T>
struct IntPowOp {
  bool* bad;
  T operator()(T base, int64_t e) const {
    if (e < 0) {
      if (base == T(0)) {
        *bad = true;
        return T(0);
      }
      if (base == T(1)) return T(1);
      if constexpr (std::is_signed_v<T>) {
        if (base == T(-1)) return (e % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
    WrapType<T> result = 1;
    WrapType<T> b = static_cast<WrapType<T>>(base);
    for (uint64_t u = static_cast<uint64_t>(e); u != 0; u >>= 1) {
      if (u & 1) result = static_cast<WrapType<T>>(result * b);
      b = static_cast<WrapType<T>>(b * b);
    }
    return static_cast<T>(result);
  }
};

template <typename T>
struct FloatPowOp {
  T operator()(T a, T b) const {
    return static_cast<T>(std::pow(static_cast<ComputeType<T>>(a), static_cast<ComputeType<T>>(b)));
  }
};

/// Base of type T with an exponent converted to double (mixed-type Pow, opset 12+).
template <typename T>
struct MixedPowOp {
  T operator()(T a, double b) const { return saturate_cast<T>(std::pow(static_cast<double>(a), b)); }
};

/// Whether the one element of the float or integer tensor `b` equals 2.
bool scalar_is_two(const Tensor& b) {
  Result<Tensor> wide = tensor_cast(b, DType::kFloat64);
  return wide.ok() && wide->data<double>()[0] == 2.0;
}

template <bool kLegacy>
Status pow_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  if constexpr (kLegacy) {
    VN_RETURN_IF_ERROR(check_same_dtype(ctx, a, b));
    VN_ASSIGN_OR_RETURN(b, legacy_broadcast_view(ctx, a, b));
  }
  if (!dtype_is_float(b.dtype()) && !dtype_is_integer(b.dtype())) {
    return ctx.fail(StatusCode::kUnsupportedDType, "exponent of type {} is not supported", dtype_name(b.dtype()));
  }
  return dispatch_types(NumericHalfTypes{}, ctx, a.dtype(), [&]<typename T>() -> Status {
    if constexpr (std::is_integral_v<T>) {
      if (dtype_is_integer(b.dtype())) {
        VN_ASSIGN_OR_RETURN(Tensor e, tensor_cast(b, DType::kInt64));
        bool bad = false;
        VN_RETURN_IF_ERROR((binary_broadcast<T, int64_t, T>(ctx, a, e, IntPowOp<T>{&bad})));
        if (bad) return ctx.fail(StatusCode::kNumericFailure, "integer 0 raised to a negative power");
        return Status::OK();
      }
      VN_ASSIGN_OR_RETURN(Tensor e, tensor_cast(b, DType::kFloat64));
      return binary_broadcast<T, double, T>(ctx, a, e, MixedPowOp<T>{});
    } else {
      // A scalar exponent of 2 (LayerNormalization's variance as exported) is the exactly rounded
      // square, as PyTorch and ONNX Runtime compute it; pow would cost a library call per element.
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (b.numel() == 1 && b.rank() <= a.rank() && scalar_is_two(b)) {
          return unary_map<T>(ctx, [](const ConstArrayMap<T>& x) { return x * x; });
        }
      }
      if (b.dtype() == a.dtype()) return binary_broadcast<T, T, T>(ctx, a, b, FloatPowOp<T>{});
      if constexpr (std::is_floating_point_v<T>) {
        VN_ASSIGN_OR_RETURN(Tensor e, tensor_cast(b, DType::kFloat64));
        return binary_broadcast<T, double, T>(ctx, a, e, MixedPowOp<T>{});
      } else {
        // numpy raises a float16 base to an exponent of another type in the promoted type, and
        // rounds a float64 power to float16 directly: only an exponent of the base's own type is
        // computed here exactly as numpy does (in float, rounded once).
        return ctx.fail(StatusCode::kUnsupportedDType, "a {} base takes an exponent of its own type only, got {}",
                        dtype_name(a.dtype()), dtype_name(b.dtype()));
      }
    }
  });
}

// ---- Mod ---------------------------------------------------------------------------------------

/// Integer remainder. kFmod: the sign of the dividend (C's %); otherwise the sign of the divisor
/// (Python's %, ONNX fmod=0). x % -1 is 0 without evaluating INT_MIN % -1, which traps.
template <typename T, bool kFmod>
struct IntModOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    T r = static_cast<T>(a % b);
    if constexpr (!kFmod && std::is_signed_v<T>) {
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    }
    return r;
  }
};

/// Floating-point fmod; float16 and bfloat16 are computed in float, where fmod is exact.
template <typename T>
struct FloatModOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      return static_cast<T>(std::fmod(static_cast<float>(a), static_cast<float>(b)));
    }
  }
};

/// Floating-point floor modulus (Python's %, numpy.mod, Mod-28 with fmod=0): fmod moved into the
/// divisor's sign, and a zero remainder carries the divisor's sign.
template <typename T>
struct FloatFloorModOp {
  T operator()(T a, T b) const {
    using F = ComputeType<T>;
    const F fb = static_cast<F>(b);
    F r = std::fmod(static_cast<F>(a), fb);
    if (r != F(0)) {
      if ((fb < F(0)) != (r < F(0))) r += fb;
    } else {
      r = std::copysign(F(0), fb);
    }
    return static_cast<T>(r);
  }
};

/// Mod before version 28 requires fmod = 1 for floating-point inputs; version 28 gives them
/// fmod = 0 too, with floor semantics (`kFloatFloor`).
template <bool kFloatFloor>
Status mod_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  VN_RETURN_IF_ERROR(check_same_dtype(ctx, a, b));
  const bool fmod = ctx.attr_int("fmod", 0) != 0;
  return dispatch_types(NumericHalfTypes{}, ctx, a.dtype(), [&]<typename T>() -> Status {
    if constexpr (std::is_integral_v<T>) {
      if (a.numel() > 0) VN_RETURN_IF_ERROR(check_no_zero_divisor<T>(ctx, b));
      if (fmod) return binary_broadcast<T, T, T>(ctx, a, b, IntModOp<T, true>{});
      return binary_broadcast<T, T, T>(ctx, a, b, IntModOp<T, false>{});
    } else {
      if (!fmod) {
        if constexpr (kFloatFloor) return binary_broadcast<T, T, T>(ctx, a, b, FloatFloorModOp<T>{});
        return ctx.fail(StatusCode::kInvalidModel,
                        "fmod must be 1 for floating-point inputs ({}), got 0 (0 needs Mod-28)", dtype_name(a.dtype()));
      }
      return binary_broadcast<T, T, T>(ctx, a, b, FloatModOp<T>{});
    }
  });
}

}  // namespace

void register_elementwise_binary_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6}) {
    registry.add("Add", v, arithmetic<AddOp, true>);
    registry.add("Sub", v, arithmetic<SubOp, true>);
    registry.add("Mul", v, arithmetic<MulOp, true>);
    registry.add("Div", v, arithmetic<DivOp, true>);
  }
  for (int64_t v : {7, 13, 14}) {
    registry.add("Add", v, arithmetic<AddOp, false>);
    registry.add("Sub", v, arithmetic<SubOp, false>);
    registry.add("Mul", v, arithmetic<MulOp, false>);
    registry.add("Div", v, arithmetic<DivOp, false>);
  }
  registry.add("Pow", 1, pow_kernel<true>);
  for (int64_t v : {7, 12, 13, 15}) registry.add("Pow", v, pow_kernel<false>);
  for (int64_t v : {10, 13}) registry.add("Mod", v, mod_kernel<false>);
  registry.add("Mod", 28, mod_kernel<true>);
}

}  // namespace vn::ops
