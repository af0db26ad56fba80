// SPDX-License-Identifier: Apache-2.0
// Comparisons, boolean logic and bit shifts with numpy broadcasting: Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, Not, And, Or, Xor, BitShift, BitwiseAnd/Or/Xor/Not (integers only;
// BitShift takes signed ones from version 28). Opset 1 versions use the legacy
// broadcast/axis attributes. float16 and bfloat16 compare through Eigen's half types, whose
// operators convert to float, which is exact. Equal-19 compares strings too, byte for byte.
#include <functional>
#include <string>
#include <type_traits>

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

struct EqualOp {
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};
struct LessOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct GreaterOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct LessOrEqualOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};

/// NumericHalfBoolTypes plus strings, for Equal-19.
using EqualTypes19 = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                              Eigen::half, Eigen::bfloat16, bool, std::string>;

template <typename Op, typename Types, bool kLegacy>
Status compare(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "inputs A ({}) and B ({}) must have the same type",
                    dtype_name(a.dtype()), dtype_name(b.dtype()));
  }
  if constexpr (kLegacy) {
    VN_ASSIGN_OR_RETURN(b, legacy_broadcast_view(ctx, a, b));
  }
  return dispatch_types(Types{}, ctx, a.dtype(),
                        [&]<typename T>() { return binary_broadcast<T, T, bool>(ctx, a, b, Op{}); });
}

Status not_kernel(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(TypeList<bool>{}, ctx, ctx.input(0).dtype(),
                        [&]<typename T>() { return unary_scalar<bool>(ctx, [](bool v) { return !v; }); });
}

// ONNX BitShift as numpy shifts: a shift by the element width or more, or (signed types, from
// BitShift-28) by a negative amount, yields 0, and -1 for a right shift of a negative value; C++
// leaves those undefined. Signed right shifts are arithmetic, left shifts move the raw bits.
template <typename T, bool kLeft>
struct ShiftOp {
  T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    bool negative = false;
    if constexpr (std::is_signed_v<T>) negative = b < T(0);
    if (negative || static_cast<U>(b) >= sizeof(T) * 8) {
      if constexpr (std::is_signed_v<T>) {
        if (!kLeft && a < T(0)) return T(-1);
      }
      return T(0);
    }
    if constexpr (kLeft) {
      return static_cast<T>(static_cast<U>(static_cast<WrapType<T>>(static_cast<U>(a)) << b));
    } else {
      return static_cast<T>(a >> b);
    }
  }
};

template <typename Types>
Status bit_shift(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "inputs X ({}) and Y ({}) must have the same type",
                    dtype_name(a.dtype()), dtype_name(b.dtype()));
  }
  const std::string direction = ctx.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return ctx.fail(StatusCode::kInvalidModel, "attribute direction must be \"LEFT\" or \"RIGHT\", got \"{}\"",
                    direction);
  }
  const bool left = direction == "LEFT";
  return dispatch_types(Types{}, ctx, a.dtype(), [&]<typename T>() {
    return left ? binary_broadcast<T, T, T>(ctx, a, b, ShiftOp<T, true>{})
                : binary_broadcast<T, T, T>(ctx, a, b, ShiftOp<T, false>{});
  });
}

template <typename Op>
struct BitwiseOp {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(Op{}(a, b));
  }
};

template <typename Op>
Status bitwise(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.fail(StatusCode::kInvalidModel, "inputs A ({}) and B ({}) must have the same type",
                    dtype_name(a.dtype()), dtype_name(b.dtype()));
  }
  return dispatch_types(IntTypes{}, ctx, a.dtype(),
                        [&]<typename T>() { return binary_broadcast<T, T, T>(ctx, a, b, BitwiseOp<Op>{}); });
}

Status bitwise_not(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  return dispatch_types(IntTypes{}, ctx, ctx.input(0).dtype(),
                        [&]<typename T>() { return unary_scalar<T>(ctx, [](T v) { return static_cast<T>(~v); }); });
}

}  // namespace

void register_logical_ops(OpRegistry& registry) {
  registry.add("Equal", 1, compare<EqualOp, NumericBoolTypes, true>);
  for (int64_t v : {7, 11, 13}) registry.add("Equal", v, compare<EqualOp, NumericHalfBoolTypes, false>);
  registry.add("Equal", 19, compare<EqualOp, EqualTypes19, false>);
  registry.add("Less", 1, compare<LessOp, NumericTypes, true>);
  registry.add("Greater", 1, compare<GreaterOp, NumericTypes, true>);
  for (int64_t v : {7, 9, 13}) {
    registry.add("Less", v, compare<LessOp, NumericHalfTypes, false>);
    registry.add("Greater", v, compare<GreaterOp, NumericHalfTypes, false>);
  }
  for (int64_t v : {12, 16}) {
    registry.add("LessOrEqual", v, compare<LessOrEqualOp, NumericHalfTypes, false>);
    registry.add("GreaterOrEqual", v, compare<GreaterOrEqualOp, NumericHalfTypes, false>);
  }
  registry.add("And", 1, compare<AndOp, TypeList<bool>, true>);
  registry.add("Or", 1, compare<OrOp, TypeList<bool>, true>);
  registry.add("And", 7, compare<AndOp, TypeList<bool>, false>);
  registry.add("Or", 7, compare<OrOp, TypeList<bool>, false>);
  registry.add("Xor", 1, compare<XorOp, TypeList<bool>, true>);
  registry.add("Xor", 7, compare<XorOp, TypeList<bool>, false>);
  registry.add("BitShift", 11, bit_shift<TypeList<uint8_t, uint16_t, uint32_t, uint64_t>>);
  registry.add("BitShift", 28, bit_shift<IntTypes>);
  registry.add("BitwiseAnd", 18, bitwise<std::bit_and<>>);
  registry.add("BitwiseOr", 18, bitwise<std::bit_or<>>);
  registry.add("BitwiseXor", 18, bitwise<std::bit_xor<>>);
  registry.add("BitwiseNot", 18, bitwise_not);
  registry.add("Not", 1, not_kernel);
}

}  // namespace vn::ops
