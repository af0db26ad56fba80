// SPDX-License-Identifier: Apache-2.0
// TopK: the k largest (or smallest) elements along an axis with their int64 indices. Ties keep the
// lower index first (ONNX TopK-11); NaN ranks above every number, as in numpy's sort. The results
// are always sorted, which also satisfies sorted=0 (order unspecified).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

/// Strict "a ranks before b" for values va, vb at indices ia, ib.
template <typename T, bool kLargest>
bool ranks_before(T va, int64_t ia, T vb, int64_t ib) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb) {
      if (na && nb) return ia < ib;
      return kLargest ? na : nb;  // NaN is the largest value
    }
  }
  if (va != vb) return kLargest ? va > vb : va < vb;
  return ia < ib;
}

template <bool kLargest, typename T>
void top_k(const T* x, int64_t outer, int64_t len, int64_t inner, int64_t k, T* values, int64_t* indices) {
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* col = x + o * len * inner + i;
      for (int64_t j = 0; j < len; ++j) order[static_cast<size_t>(j)] = j;
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        return ranks_before<T, kLargest>(col[a * inner], a, col[b * inner], b);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        const int64_t src = order[static_cast<size_t>(j)];
        values[at] = col[src * inner];
        indices[at] = src;
      }
    }
  }
}

Status top_k_run(KernelContext& ctx, int64_t k, int64_t axis_attr, bool largest) {
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, axis_attr, x.rank()));
  const int64_t len = x.dim(axis);
  if (k < 0 || k > len) {
    return ctx.fail(StatusCode::kInvalidModel, "k = {} is not in [0, {}] (the size of axis {} of {})", k, len, axis,
                    shape_to_string(x.shape()));
  }
  if (ctx.output_count() < 2) return ctx.fail(StatusCode::kInvalidModel, "expects 2 outputs (Values, Indices)");
  const auto a = static_cast<size_t>(axis);
  Shape out_shape = x.shape();
  out_shape[a] = k;
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t inner = shape_product(x.shape(), a + 1, x.shape().size());
  return dispatch_types(NumericTypes{}, ctx, x.dtype(), [&]<typename T>() -> Status {
    VN_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, x.dtype(), out_shape));
    VN_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DType::kInt64, out_shape));
    if (values->numel() == 0) return Status::OK();
    T* pv = values->mutable_data<T>();
    int64_t* pi = indices->mutable_data<int64_t>();
    if (largest) {
      top_k<true, T>(x.data<T>(), outer, len, inner, k, pv, pi);
    } else {
      top_k<false, T>(x.data<T>(), outer, len, inner, k, pv, pi);
    }
    return Status::OK();
  });
}

// TopK-1: k is an attribute.
Status top_k_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1, 2));
  if (!ctx.has_attr("k")) return ctx.fail(StatusCode::kInvalidModel, "attribute k is required");
  return top_k_run(ctx, ctx.attr_int("k", 0), ctx.attr_int("axis", -1), true);
}

// TopK-10: k is a 1-element int64 input. TopK-11 adds `largest` and `sorted`.
Status top_k_10(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2, 2));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> k, input_int64s(ctx, 1, "K"));
  if (k.size() != 1) return ctx.fail(StatusCode::kShapeMismatch, "K must hold one value, got {}", k.size());
  // sorted=0 leaves the order unspecified, so the sorted order the kernel always gives is one.
  ctx.ignore_attrs({"sorted"});
  return top_k_run(ctx, k[0], ctx.attr_int("axis", -1), ctx.attr_int("largest", 1) != 0);
}

}  // namespace

void register_topk_ops(OpRegistry& registry) {
  registry.add("TopK", 1, top_k_1);
  // TopK-24 only added bfloat16.
  for (int64_t v : {10, 11, 24}) registry.add("TopK", v, top_k_10);
}

}  // namespace vn::ops
