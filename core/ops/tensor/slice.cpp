// SPDX-License-Identifier: Apache-2.0
// Slice with numpy semantics: starts/ends/axes attributes (opset 1) or starts/ends/axes/steps
// inputs (opset 10+). A strided view of the input is copied out.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

int64_t clamp_to(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

Status slice_with(KernelContext& ctx, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                  std::optional<std::vector<int64_t>> axes_opt, std::optional<std::vector<int64_t>> steps_opt) {
  const Tensor& x = ctx.input(0);
  const size_t n = starts.size();
  std::vector<int64_t> axes(n);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  if (axes_opt) axes = *axes_opt;
  const std::vector<int64_t> steps = steps_opt ? *steps_opt : std::vector<int64_t>(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n) {
    return ctx.fail(StatusCode::kInvalidModel,
                    "starts, ends, axes and steps must have equal lengths, got {}, {}, {}, {}", n, ends.size(),
                    axes.size(), steps.size());
  }
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalize_axes(ctx, axes, x.rank()));
  const Shape in_strides = contiguous_strides(x.shape());
  Shape out_shape = x.shape();
  Shape strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(norm[i]);
    const int64_t dim = x.shape()[a];
    const int64_t step = steps[i];
    if (step == 0) return ctx.fail(StatusCode::kInvalidModel, "step for axis {} is 0", norm[i]);
    // ONNX Slice: negative starts/ends count from the end; then they clamp to [0, dim] for a
    // positive step and to [0, dim - 1] / [-1, dim - 1] for a negative one.
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    // The count divides in unsigned arithmetic so that steps near ±2^63 cannot overflow.
    uint64_t span = 0;
    if (dim == 0) {
      span = 0;
    } else if (step > 0) {
      start = clamp_to(start, 0, dim);
      end = clamp_to(end, 0, dim);
      span = end > start ? static_cast<uint64_t>(end - start) : 0;
    } else {
      start = clamp_to(start, 0, dim - 1);
      end = clamp_to(end, -1, dim - 1);
      span = start > end ? static_cast<uint64_t>(start - end) : 0;
    }
    const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
    const auto count = static_cast<int64_t>(span == 0 ? 0 : (span - 1) / magnitude + 1);
    out_shape[a] = count;
    if (count > 0) base += start * in_strides[a];
    strides[a] = count > 1 ? in_strides[a] * step : 0;
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const Shape operand_strides[] = {strides};
    const int64_t bases[] = {base};
    const StridedLoop loop(out_shape, operand_strides, bases);
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    const int64_t len = loop.row_size();
    const int64_t s = loop.inner_stride(0);
    // Rows shared among the threads when there are many elements; a row that reads consecutive
    // elements is copied whole (attention's query, key and value cut from one projection).
    parallel_chunks(
        ctx.num_threads(), loop.rows(),
        [&](int64_t first, int64_t last) {
          loop.for_rows(first, last, [&](int64_t dense, const int64_t* off) {
            const U* src = px + off[0];
            if constexpr (std::is_trivially_copyable_v<U>) {
              if (s == 1) {
                std::memcpy(py + dense, src, static_cast<size_t>(len) * sizeof(U));
                return;
              }
            }
            for (int64_t i = 0; i < len; ++i) py[dense + i] = src[i * s];
          });
        },
        std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(len, 1)));
    return Status::OK();
  });
}

Status slice_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  if (!ctx.has_attr("starts") || !ctx.has_attr("ends")) {
    return ctx.fail(StatusCode::kInvalidModel, "attributes starts and ends are required");
  }
  std::optional<std::vector<int64_t>> axes;
  if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes");
  return slice_with(ctx, ctx.attr_ints("starts"), ctx.attr_ints("ends"), axes, std::nullopt);
}

Status slice_10(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 3));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, input_int64s(ctx, 1, "starts"));
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> ends, input_int64s(ctx, 2, "ends"));
  VN_ASSIGN_OR_RETURN(auto axes, optional_input_int64s(ctx, 3, "axes"));
  VN_ASSIGN_OR_RETURN(auto steps, optional_input_int64s(ctx, 4, "steps"));
  return slice_with(ctx, starts, ends, std::move(axes), std::move(steps));
}

}  // namespace

void register_slice_ops(OpRegistry& registry) {
  registry.add("Slice", 1, slice_1);
  for (int64_t v : {10, 11, 13}) registry.add("Slice", v, slice_10);
}

}  // namespace vn::ops
