// SPDX-License-Identifier: Apache-2.0
// Variadic elementwise ops: Max, Min, Sum, Mean over one or more inputs. From opset 8 the inputs
// broadcast numpy-style; before that they must all have the same shape. float16 and bfloat16 use
// Eigen's half types, which compute each step in float and round the result back.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ops/elementwise.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

template <typename T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

using MaxMinTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                             Eigen::half, Eigen::bfloat16>;
using SumTypes = TypeList<float, double, Eigen::half, Eigen::bfloat16>;

// Max and Min propagate NaN like numpy.maximum/minimum; std::max would depend on argument order.
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      if (Eigen::numext::isnan(a)) return a;
      if (Eigen::numext::isnan(b)) return b;
    }
    return a < b ? b : a;
  }
};

struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      if (Eigen::numext::isnan(a)) return a;
      if (Eigen::numext::isnan(b)) return b;
    }
    return b < a ? b : a;
  }
};

struct SumOp {
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};

template <typename Op, typename Types, bool kBroadcast, bool kMean>
Status variadic(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const size_t count = ctx.input_count();
  std::vector<Shape> shapes;
  for (size_t i = 0; i < count; ++i) {
    if (!ctx.has_input(i)) return ctx.fail(StatusCode::kInvalidModel, "input {} is missing", i);
    const Tensor& t = ctx.input(i);
    if (t.dtype() != ctx.input(0).dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "input {} is {} but input 0 is {}; all inputs must have the same type",
                      i, dtype_name(t.dtype()), dtype_name(ctx.input(0).dtype()));
    }
    shapes.push_back(t.shape());
  }
  Shape out_shape = shapes[0];
  if constexpr (kBroadcast) {
    Result<Shape> s = broadcast_shapes(shapes);
    if (!s.ok()) return s.status().with_node(ctx.node().ref(ctx.node_index()));
    out_shape = *s;
  } else {
    for (size_t i = 1; i < count; ++i) {
      if (shapes[i] != shapes[0]) {
        return ctx.fail(StatusCode::kShapeMismatch,
                        "input {} has shape {} but input 0 has {}; before opset 8 all inputs must have the same shape",
                        i, shape_to_string(shapes[i]), shape_to_string(shapes[0]));
      }
    }
  }
  return dispatch_types(Types{}, ctx, ctx.input(0).dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, dtype_of<T>, out_shape));
    VN_RETURN_IF_ERROR(broadcast_copy(ctx.input(0), *y));
    for (size_t i = 1; i < count; ++i) binary_accumulate<T>(*y, ctx.input(i), Op{});
    if constexpr (kMean) {
      if (y->numel() > 0) ArrayMap<T>(y->mutable_data<T>(), y->numel()) /= static_cast<T>(count);
    }
    return Status::OK();
  });
}

}  // namespace

void register_variadic_ops(OpRegistry& registry) {
  for (int64_t v : {1, 6}) {
    registry.add("Max", v, variadic<MaxOp, MaxMinTypes, false, false>);
    registry.add("Min", v, variadic<MinOp, MaxMinTypes, false, false>);
    registry.add("Sum", v, variadic<SumOp, SumTypes, false, false>);
    registry.add("Mean", v, variadic<SumOp, SumTypes, false, true>);
  }
  for (int64_t v : {8, 12, 13}) {
    registry.add("Max", v, variadic<MaxOp, MaxMinTypes, true, false>);
    registry.add("Min", v, variadic<MinOp, MaxMinTypes, true, false>);
  }
  for (int64_t v : {8, 13}) {
    registry.add("Sum", v, variadic<SumOp, SumTypes, true, false>);
    registry.add("Mean", v, variadic<SumOp, SumTypes, true, true>);
  }
}

}  // namespace vn::ops
