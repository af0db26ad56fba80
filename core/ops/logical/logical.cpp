// SPDX-License-Identifier: Apache-2.0
// Comparisons and boolean logic with numpy broadcasting: Equal, Less, Greater, Not, And, Or.
// Opset 1 versions use the legacy broadcast/axis attributes.
#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

struct EqualOp {
  template <typename T>
  bool operator()(T a, T b) const {
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
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};

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

}  // namespace

void register_logical_ops(OpRegistry& registry) {
  registry.add("Equal", 1, compare<EqualOp, NumericBoolTypes, true>);
  for (int64_t v : {7, 11, 13}) registry.add("Equal", v, compare<EqualOp, NumericBoolTypes, false>);
  registry.add("Less", 1, compare<LessOp, NumericTypes, true>);
  registry.add("Greater", 1, compare<GreaterOp, NumericTypes, true>);
  for (int64_t v : {7, 9, 13}) {
    registry.add("Less", v, compare<LessOp, NumericTypes, false>);
    registry.add("Greater", v, compare<GreaterOp, NumericTypes, false>);
  }
  registry.add("And", 1, compare<AndOp, TypeList<bool>, true>);
  registry.add("Or", 1, compare<OrOp, TypeList<bool>, true>);
  registry.add("And", 7, compare<AndOp, TypeList<bool>, false>);
  registry.add("Or", 7, compare<OrOp, TypeList<bool>, false>);
  registry.add("Not", 1, not_kernel);
}

}  // namespace vn::ops
