// SPDX-License-Identifier: Apache-2.0
// Tile: repeats the input along every axis (opset 6+, `repeats` input) or along one axis (opset 1,
// `tiles` and `axis` inputs).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

Status tile_with(KernelContext& ctx, const std::vector<int64_t>& repeats) {
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<size_t>(x.rank());
  if (repeats.size() != rank) {
    return ctx.fail(StatusCode::kShapeMismatch, "repeats has {} entries but the input {} has rank {}", repeats.size(),
                    shape_to_string(x.shape()), rank);
  }
  Shape out_shape(rank);
  for (size_t a = 0; a < rank; ++a) {
    if (repeats[a] < 0) return ctx.fail(StatusCode::kInvalidModel, "repeats[{}] is negative ({})", a, repeats[a]);
    if (x.shape()[a] != 0 &&
        static_cast<uint64_t>(repeats[a]) > kMaxTensorBytes / static_cast<uint64_t>(x.shape()[a])) {
      return ctx.fail(StatusCode::kShapeMismatch, "repeats[{}] = {} makes axis {} too large", a, repeats[a], a);
    }
    out_shape[a] = x.shape()[a] * repeats[a];
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    if (rank == 0) {
      py[0] = px[0];
      return Status::OK();
    }
    // Each output row (last axis) is the matching input row repeated; rows of the outer axes map
    // to input rows by index modulo the input dimension.
    const int64_t in_row = x.shape()[rank - 1];
    const int64_t out_row = out_shape[rank - 1];
    const int64_t rows = y->numel() / out_row;
    std::vector<int64_t> idx(rank - 1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t src_row = 0;
      for (size_t a = 0; a + 1 < rank; ++a) src_row = src_row * x.shape()[a] + idx[a] % x.shape()[a];
      const U* src = px + src_row * in_row;
      U* dst = py + r * out_row;
      for (int64_t k = 0; k < repeats[rank - 1]; ++k) std::copy_n(src, in_row, dst + k * in_row);
      for (size_t a = rank - 1; a-- > 0;) {
        if (++idx[a] < out_shape[a]) break;
        idx[a] = 0;
      }
    }
    return Status::OK();
  });
}

// Tile-1: `tiles` copies along the scalar `axis`.
Status tile_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, input_int64s(ctx, 1, "tiles"));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> axis, input_int64s(ctx, 2, "axis"));
  if (tiles.size() != 1 || axis.size() != 1) {
    return ctx.fail(StatusCode::kShapeMismatch, "tiles and axis must hold one value each, got {} and {}", tiles.size(),
                    axis.size());
  }
  VN_ASSIGN_OR_RETURN(int64_t a, normalize_axis(ctx, axis[0], ctx.input(0).rank()));
  std::vector<int64_t> repeats(static_cast<size_t>(ctx.input(0).rank()), 1);
  repeats[static_cast<size_t>(a)] = tiles[0];
  return tile_with(ctx, repeats);
}

Status tile_6(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, input_int64s(ctx, 1, "repeats"));
  return tile_with(ctx, repeats);
}

}  // namespace

void register_tile_ops(OpRegistry& registry) {
  registry.add("Tile", 1, tile_1);
  for (int64_t v : {6, 13}) registry.add("Tile", v, tile_6);
}

}  // namespace vn::ops
