// SPDX-License-Identifier: Apache-2.0
// Concat and Split along one axis: block copies over (outer, axis, inner) views.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

// ---- Concat ------------------------------------------------------------------------------------

template <bool kNegativeAxis>
Status concat_with_axis(KernelContext& ctx, int64_t axis_attr) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const Tensor& first = ctx.input(0);
  const int64_t rank = first.rank();
  if (!kNegativeAxis && axis_attr < 0) {
    return ctx.fail(StatusCode::kInvalidModel, "axis {} is not in valid range [0, {}] (negative axes need opset 11)",
                    axis_attr, rank - 1);
  }
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, axis_attr, rank));
  Shape out_shape = first.shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail(StatusCode::kInvalidModel, "input {} is missing", i);
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype()) {
      return ctx.fail(StatusCode::kInvalidModel, "input {} is {} but input 0 is {}", i, dtype_name(t.dtype()),
                      dtype_name(first.dtype()));
    }
    bool compatible = t.rank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d) compatible = d == axis || t.dim(d) == first.dim(d);
    if (!compatible) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "input {} has shape {} but input 0 has {}; all dims except axis {} must match", i,
                      shape_to_string(t.shape()), shape_to_string(first.shape()), axis);
    }
    out_shape[static_cast<size_t>(axis)] += t.dim(axis);
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, first.dtype(), out_shape));
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = shape_product(out_shape, 0, a);
  const int64_t inner = shape_product(out_shape, a + 1, out_shape.size());
  const int64_t out_block = out_shape[a] * inner;
  if (outer * out_block == 0) return Status::OK();
  return dispatch_by_size(first.dtype(), [&]<typename U>() {
    U* py = raw_mutable_data<U>(*y);
    // y is the inputs' blocks one after another (outer times each input's block in turn): a
    // memory-bound copy, split over the threads by ranges of y whatever the blocks, so that many
    // small inputs share them (DenseNet concatenates one image's growing features, up to 32
    // inputs of 6-100 KiB each: per-input splits left each copy to one thread).
    std::vector<int64_t> starts(ctx.input_count() + 1, 0);  // each input's column in a block of y
    for (size_t i = 0; i < ctx.input_count(); ++i) starts[i + 1] = starts[i] + ctx.input(i).dim(axis) * inner;
    parallel_chunks(ctx.num_threads(), outer * out_block, [&](int64_t b, int64_t e) {
      int64_t o = b / out_block, column = b % out_block;
      auto i = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), column) - starts.begin() - 1);
      while (b < e) {
        const int64_t from = column - starts[i], n = std::min(starts[i + 1] - column, e - b);
        std::copy_n(raw_data<U>(ctx.input(i)) + o * (starts[i + 1] - starts[i]) + from, n, py + b);
        b += n;
        column += n;
        if (column == starts[i + 1]) {
          ++i;
          if (i + 1 == starts.size()) i = 0, column = 0, ++o;
        }
      }
    });
    return Status::OK();
  });
}

// Concat-1: axis defaults to 1.
Status concat_1(KernelContext& ctx) { return concat_with_axis<false>(ctx, ctx.attr_int("axis", 1)); }

// Concat-4: axis is required; Concat-11 also accepts negative axes.
template <bool kNegativeAxis>
Status concat_4(KernelContext& ctx) {
  if (!ctx.has_attr("axis")) return ctx.fail(StatusCode::kInvalidModel, "attribute axis is required");
  return concat_with_axis<kNegativeAxis>(ctx, ctx.attr_int("axis", 0));
}

// ---- Split -------------------------------------------------------------------------------------

Status split_with(KernelContext& ctx, const std::optional<std::vector<int64_t>>& sizes_opt) {
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank()));
  const size_t outputs = ctx.output_count();
  if (outputs == 0) return ctx.fail(StatusCode::kInvalidModel, "has no outputs");
  const int64_t dim = x.dim(axis);
  std::vector<int64_t> sizes;
  if (sizes_opt) {
    sizes = *sizes_opt;
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.fail(StatusCode::kInvalidModel, "split sizes must be non-negative, got {}", s);
      total += s;
    }
    if (sizes.size() != outputs || total != dim) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "split has {} sizes summing to {}, but there are {} outputs and axis {} has size {}",
                      sizes.size(), total, outputs, axis, dim);
    }
  } else {
    if (dim % static_cast<int64_t>(outputs) != 0) {
      return ctx.fail(StatusCode::kShapeMismatch,
                      "axis {} of size {} cannot be split evenly into {} outputs; give explicit split sizes", axis, dim,
                      outputs);
    }
    sizes.assign(outputs, dim / static_cast<int64_t>(outputs));
  }
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = shape_product(x.shape(), 0, a);
  const int64_t inner = shape_product(x.shape(), a + 1, x.shape().size());
  const int64_t in_block = dim * inner;
  return dispatch_by_size(x.dtype(), [&]<typename U>() -> Status {
    const U* px = raw_data<U>(x);
    int64_t column = 0;
    for (size_t i = 0; i < outputs; ++i) {
      Shape shape = x.shape();
      shape[a] = sizes[i];
      VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(i, x.dtype(), shape));
      const int64_t block = sizes[i] * inner;
      U* py = raw_mutable_data<U>(*y);
      for (int64_t o = 0; o < outer; ++o) std::copy_n(px + o * in_block + column, block, py + o * block);
      column += block;
    }
    return Status::OK();
  });
}

// Split-1: sizes from the optional second input or the `split` attribute.
Status split_1(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto sizes, optional_input_int64s(ctx, 1, "split"));
  if (!sizes && ctx.has_attr("split")) sizes = ctx.attr_ints("split");
  return split_with(ctx, sizes);
}

// Split-2 and -11: sizes from the `split` attribute.
Status split_2(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  std::optional<std::vector<int64_t>> sizes;
  if (ctx.has_attr("split")) sizes = ctx.attr_ints("split");
  return split_with(ctx, sizes);
}

// Split-13: sizes from the optional second input.
Status split_13(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto sizes, optional_input_int64s(ctx, 1, "split"));
  return split_with(ctx, sizes);
}

// Split-18: without the split input, num_outputs parts of ceil(dim / num_outputs) elements, the
// last one smaller when the axis does not divide evenly.
Status split_18(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  VN_ASSIGN_OR_RETURN(auto sizes, optional_input_int64s(ctx, 1, "split"));
  if (!ctx.has_attr("num_outputs")) return split_with(ctx, sizes);
  const int64_t parts = ctx.attr_int("num_outputs", 0);
  if (sizes) return ctx.fail(StatusCode::kInvalidModel, "split and num_outputs cannot both be given");
  if (parts < 1 || parts != static_cast<int64_t>(ctx.output_count())) {
    return ctx.fail(StatusCode::kInvalidModel, "num_outputs is {} but the node has {} outputs", parts,
                    ctx.output_count());
  }
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank()));
  const int64_t dim = x.dim(axis);
  const int64_t part = (dim + parts - 1) / parts;
  std::vector<int64_t> even(static_cast<size_t>(parts));
  for (int64_t i = 0; i < parts; ++i) even[static_cast<size_t>(i)] = std::clamp<int64_t>(dim - i * part, 0, part);
  return split_with(ctx, even);
}

}  // namespace

void register_concat_split_ops(OpRegistry& registry) {
  registry.add("Concat", 1, concat_1);
  registry.add("Concat", 4, concat_4<false>);
  for (int64_t v : {11, 13}) registry.add("Concat", v, concat_4<true>);
  registry.add("Split", 1, split_1);
  for (int64_t v : {2, 11}) registry.add("Split", v, split_2);
  registry.add("Split", 13, split_13);
  registry.add("Split", 18, split_18);
}

}  // namespace vn::ops
