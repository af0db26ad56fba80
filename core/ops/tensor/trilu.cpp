// SPDX-License-Identifier: Apache-2.0
// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes and
// zeroes the rest.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status trilu(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) {
    return ctx.fail(StatusCode::kShapeMismatch, "input must have rank >= 2, got shape {}", shape_to_string(x.shape()));
  }
  int64_t k = 0;
  if (ctx.has_input(1)) {
    VN_ASSIGN_OR_RETURN(std::vector<int64_t> kv, input_int64s(ctx, 1, "k"));
    if (kv.size() != 1) return ctx.fail(StatusCode::kShapeMismatch, "k must hold one value, got {}", kv.size());
    k = kv[0];
  }
  const bool upper = ctx.attr_int("upper", 1) != 0;
  // Clamped so that j - i vs k cannot overflow; beyond the matrix size every k acts the same.
  const int64_t limit = x.dim(x.rank() - 2) + x.dim(x.rank() - 1);
  k = std::clamp(k, -limit, limit);
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
  const int64_t rows = x.dim(x.rank() - 2);
  const int64_t cols = x.dim(x.rank() - 1);
  const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    const U zero{};
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t base = (m * rows + i) * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          py[base + j] = keep ? px[base + j] : zero;
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

void register_trilu_ops(OpRegistry& registry) { registry.add("Trilu", 14, trilu); }

}  // namespace vn::ops
