// SPDX-License-Identifier: Apache-2.0
// Transpose: a strided copy with the input's strides permuted (default: reversed dims).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status transpose(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<size_t>(x.rank());
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (ctx.has_attr("perm")) perm = ctx.attr_ints("perm");
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (valid) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid) {
    std::string list;
    for (int64_t p : perm) list += (list.empty() ? "" : ", ") + std::to_string(p);
    return ctx.fail(StatusCode::kInvalidModel, "perm [{}] is not a permutation of the {} axes of input {}", list, rank,
                    shape_to_string(x.shape()));
  }
  const Shape in_strides = contiguous_strides(x.shape());
  Shape out_shape(rank);
  Shape strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x.dim(perm[i]);
    strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const Shape operand_strides[] = {strides};
    const StridedLoop loop(out_shape, operand_strides);
    const U* px = raw_data<U>(x);
    U* py = y->numel() > 0 ? raw_mutable_data<U>(*y) : nullptr;
    const int64_t n = loop.row_size();
    const int64_t s = loop.inner_stride(0);
    // A strided copy: rows shared among the threads when it is large (attention's head splits).
    parallel_chunks(ctx.num_threads(), loop.rows(), [&](int64_t first, int64_t last) {
      loop.for_rows(first, last, [&](int64_t dense, const int64_t* off) {
        const U* src = px + off[0];
        U* dst = py + dense;
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * s];
      });
    }, std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(n, 1)));
    return Status::OK();
  });
}

}  // namespace

void register_transpose_ops(OpRegistry& registry) {
  // 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {1, 13, 21, 23, 24, 25}) registry.add("Transpose", v, transpose);
}

}  // namespace vn::ops
