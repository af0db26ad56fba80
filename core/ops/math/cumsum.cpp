// SPDX-License-Identifier: Apache-2.0
// CumSum and CumProd (opset 26): running sums or products along one axis (an input, not an
// attribute), with the exclusive (starting from 0, or 1 for products) and reverse variants. Float
// accumulates in double, so a long axis of float32 keeps full precision (each output is the double
// result rounded once); integers wrap modulo 2^n. float16 and bfloat16 accumulate in double too.
#include <cstdint>
#include <type_traits>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

template <typename T, bool = std::is_integral_v<T>>
struct CumAccOf {
  using type = double;
};
template <typename T>
struct CumAccOf<T, true> {
  using type = WrapType<T>;
};
template <typename T>
using CumAcc = typename CumAccOf<T>::type;

template <typename Types, bool kProduct>
Status cumulate(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& axis_t = ctx.input(1);
  if ((axis_t.dtype() != DType::kInt32 && axis_t.dtype() != DType::kInt64) || axis_t.numel() != 1 ||
      axis_t.rank() > 1) {
    return ctx.fail(StatusCode::kInvalidModel, "axis must be an int32 or int64 scalar, got {} {}",
                    dtype_name(axis_t.dtype()), shape_to_string(axis_t.shape()));
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, tensor_to_int64s(axis_t));
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, axis_v[0], x.rank()));
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t len = x.dim(axis);
  const int64_t inner = shape_product(x.shape(), a + 1, x.shape().size());
  return dispatch_types(Types{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    using A = CumAcc<T>;
    VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::OK();
    const T* px = x.data<T>();
    T* py = y->mutable_data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        A acc = kProduct ? A(1) : A(0);
        for (int64_t step = 0; step < len; ++step) {
          const int64_t at = base + (reverse ? len - 1 - step : step) * inner;
          const A v = static_cast<A>(px[at]);
          if (exclusive) py[at] = static_cast<T>(acc);
          acc = static_cast<A>(kProduct ? acc * v : acc + v);
          if (!exclusive) py[at] = static_cast<T>(acc);
        }
      }
    }
    return Status::OK();
  });
}

using CumTypes14 = TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t, Eigen::half, Eigen::bfloat16>;

}  // namespace

void register_cumsum_ops(OpRegistry& registry) {
  registry.add("CumSum", 11, cumulate<TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>, false>);
  registry.add("CumSum", 14, cumulate<CumTypes14, false>);
  registry.add("CumProd", 26, cumulate<CumTypes14, true>);
}

}  // namespace vn::ops
