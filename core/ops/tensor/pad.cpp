// SPDX-License-Identifier: Apache-2.0
// Pad in constant, reflect, edge and (from opset 19) wrap modes. Pads come from the `paddings`
// (opset 1) or `pads` (opset 2) attribute with a float `value`, or from inputs (opset 11+), for the
// axes named by the optional `axes` input (opset 18+) or all of them. Negative pads crop.
// CenterCropPad crops or pads to a size around the centre.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/broadcast.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"

namespace vn::ops {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

/// For each output index along one axis, the input index it reads, or -1 for the constant value.
std::vector<int64_t> axis_map(int64_t dim, int64_t begin, int64_t out_dim, PadMode mode) {
  std::vector<int64_t> map(static_cast<size_t>(out_dim));
  for (int64_t i = 0; i < out_dim; ++i) {
    const int64_t src = i - begin;
    int64_t m = src;
    if (src < 0 || src >= dim) {
      switch (mode) {
        case PadMode::kConstant:
          m = -1;
          break;
        case PadMode::kEdge:
          m = src < 0 ? 0 : dim - 1;
          break;
        case PadMode::kWrap:
          m = ((src % dim) + dim) % dim;
          break;
        case PadMode::kReflect: {
          // numpy 'reflect' (edge not repeated), folding repeatedly when the pad exceeds dim - 1.
          if (dim == 1) {
            m = 0;
          } else {
            const int64_t period = 2 * (dim - 1);
            m = ((src % period) + period) % period;
            if (m >= dim) m = period - m;
          }
          break;
        }
      }
    }
    map[static_cast<size_t>(i)] = m;
  }
  return map;
}

/// Pads input 0 with `pads` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]); `value` is one
/// element of the input's dtype (used in constant mode).
Status pad_with(KernelContext& ctx, const std::vector<int64_t>& pads, const std::string& mode_name,
                const Tensor& value, bool allow_wrap = false) {
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<size_t>(x.rank());
  PadMode mode = PadMode::kConstant;
  if (mode_name == "reflect") {
    mode = PadMode::kReflect;
  } else if (mode_name == "edge") {
    mode = PadMode::kEdge;
  } else if (mode_name == "wrap" && allow_wrap) {
    mode = PadMode::kWrap;
  } else if (mode_name != "constant") {
    return ctx.fail(StatusCode::kInvalidModel, "mode '{}' is not one of constant, reflect, edge{}", mode_name,
                    allow_wrap ? ", wrap" : "");
  }
  if (pads.size() != 2 * rank) {
    return ctx.fail(StatusCode::kShapeMismatch, "pads has {} entries but input {} needs 2 * rank = {}", pads.size(),
                    shape_to_string(x.shape()), 2 * rank);
  }
  Shape out_shape(rank);
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t dim = x.shape()[a];
    out_shape[a] = dim + pads[a] + pads[rank + a];
    if (out_shape[a] < 0) {
      return ctx.fail(StatusCode::kShapeMismatch, "pads {} and {} crop axis {} of size {} below zero", pads[a],
                      pads[rank + a], a, dim);
    }
    if (mode != PadMode::kConstant && dim == 0 && out_shape[a] > 0) {
      return ctx.fail(StatusCode::kShapeMismatch, "{} padding of axis {} needs at least one input element, it has 0",
                      mode_name, a);
    }
    maps[a] = axis_map(dim, pads[a], out_shape[a], mode);
  }
  VN_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_for_overwrite(0, x.dtype(), out_shape));
  if (y->numel() == 0) return Status::OK();
  return dispatch_by_size(x.dtype(), [&]<typename U>() {
    const U* px = raw_data<U>(x);
    U* py = raw_mutable_data<U>(*y);
    const U fill = raw_data<U>(value)[0];
    if (rank == 0) {
      py[0] = px[0];
      return Status::OK();
    }
    const Shape in_strides = contiguous_strides(x.shape());
    const int64_t row_len = out_shape[rank - 1];
    const int64_t rows = y->numel() / row_len;
    const std::vector<int64_t>& last = maps[rank - 1];
    // The run of the last axis that reads consecutive input elements, copied as a block.
    int64_t run0 = 0;
    while (run0 < row_len && last[static_cast<size_t>(run0)] < 0) ++run0;
    int64_t run1 = std::min(run0 + 1, row_len);
    while (run1 < row_len && last[static_cast<size_t>(run1)] == last[static_cast<size_t>(run1 - 1)] + 1) ++run1;
    // Rows are independent: shared among the threads when there are many elements.
    parallel_chunks(ctx.num_threads(), rows, [&](int64_t first, int64_t end) {
      std::vector<int64_t> idx(rank - 1, 0);
      for (int64_t a = static_cast<int64_t>(rank) - 2, rest = first; a >= 0; --a) {
        idx[static_cast<size_t>(a)] = rest % out_shape[static_cast<size_t>(a)];
        rest /= out_shape[static_cast<size_t>(a)];
      }
      for (int64_t row = first; row < end; ++row) {
        bool outside = false;
        int64_t base = 0;
        for (size_t a = 0; a + 1 < rank; ++a) {
          const int64_t m = maps[a][static_cast<size_t>(idx[a])];
          outside = outside || m < 0;
          base += m * in_strides[a];
        }
        U* dst = py + row * row_len;
        if (outside) {
          std::fill_n(dst, row_len, fill);
        } else {
          const auto element = [&](int64_t j) {
            const int64_t s = last[static_cast<size_t>(j)];
            return s < 0 ? fill : px[base + s];
          };
          for (int64_t j = 0; j < run0; ++j) dst[j] = element(j);
          if (run0 < run1) std::copy_n(px + base + last[static_cast<size_t>(run0)], run1 - run0, dst + run0);
          for (int64_t j = run1; j < row_len; ++j) dst[j] = element(j);
        }
        for (size_t a = rank - 1; a-- > 0;) {
          if (++idx[a] < out_shape[a]) break;
          idx[a] = 0;
        }
      }
    }, std::max<int64_t>(1, kMemoryBoundGrain / std::max<int64_t>(row_len, 1)));
    return Status::OK();
  });
}

// Pad-1 (`paddings`) and Pad-2 (`pads`): attribute pads and a float `value`.
template <bool kPaddingsName>
Status pad_2(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 1));
  const char* name = kPaddingsName ? "paddings" : "pads";
  if (!ctx.has_attr(name)) return ctx.fail(StatusCode::kInvalidModel, "attribute {} is required", name);
  const Tensor& x = ctx.input(0);
  Result<Tensor> value = tensor_cast(Tensor::scalar<float>(ctx.attr_float("value", 0.0f)), x.dtype());
  if (!value.ok()) return ctx.fail(StatusCode::kUnsupportedDType, "cannot pad {} data", dtype_name(x.dtype()));
  return pad_with(ctx, ctx.attr_ints(name), ctx.attr_string("mode", "constant"), *value);
}

/// Pads given for `axes` only (Pad-18's axes input) spread over every axis of a rank-`rank` input.
Result<std::vector<int64_t>> pads_for_axes(const KernelContext& ctx, const std::vector<int64_t>& pads,
                                           const std::vector<int64_t>& axes, int64_t rank) {
  if (pads.size() != 2 * axes.size()) {
    return ctx.fail(StatusCode::kShapeMismatch, "pads has {} entries but axes names {} axes (2 per axis needed)",
                    pads.size(), axes.size());
  }
  std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    VN_ASSIGN_OR_RETURN(const int64_t a, normalize_axis(ctx, axes[i], rank));
    if (seen[static_cast<size_t>(a)]) return ctx.fail(StatusCode::kInvalidModel, "axes names axis {} twice", a);
    seen[static_cast<size_t>(a)] = true;
    full[static_cast<size_t>(a)] = pads[i];
    full[static_cast<size_t>(rank + a)] = pads[axes.size() + i];
  }
  return full;
}

// Pad-11+: pads and the optional constant_value are inputs; from 18 (kAxes) the optional axes
// input, and from 19 (kWrap) the wrap mode.
template <bool kAxes, bool kWrap>
Status pad_11(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, input_int64s(ctx, 1, "pads"));
  if constexpr (kAxes) {
    VN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, optional_input_int64s(ctx, 3, "axes"));
    if (axes) {
      VN_ASSIGN_OR_RETURN(pads, pads_for_axes(ctx, pads, *axes, x.rank()));
    }
  }
  Tensor value;
  if (ctx.has_input(2)) {
    value = ctx.input(2);
    if (value.dtype() != x.dtype() || value.numel() != 1) {
      return ctx.fail(StatusCode::kInvalidModel, "constant_value must be a {} scalar, got {} {}", dtype_name(x.dtype()),
                      dtype_name(value.dtype()), shape_to_string(value.shape()));
    }
  } else {
    VN_ASSIGN_OR_RETURN(value, Tensor::create(x.dtype(), {}));
  }
  return pad_with(ctx, pads, ctx.attr_string("mode", "constant"), value, kWrap);
}

/// CenterCropPad (opset 18): crops or zero-pads each axis in `axes` (all by default) to the size
/// `shape` gives it, keeping the centre; an odd difference leaves the extra element at the end.
Status center_crop_pad(KernelContext& ctx) {
  VN_RETURN_IF_ERROR(check_arity(ctx, 2));
  const Tensor& x = ctx.input(0);
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> target, input_int64s(ctx, 1, "shape"));
  std::vector<int64_t> axes;
  if (ctx.has_attr("axes")) {
    VN_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, ctx.attr_ints("axes"), x.rank()));
  } else {
    for (int64_t a = 0; a < x.rank(); ++a) axes.push_back(a);
  }
  if (target.size() != axes.size()) {
    return ctx.fail(StatusCode::kShapeMismatch, "shape has {} values for {} axes", target.size(), axes.size());
  }
  const auto rank = static_cast<size_t>(x.rank());
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<size_t>(axes[i]);
    if (target[i] < 0) return ctx.fail(StatusCode::kInvalidModel, "shape values must be >= 0, got {}", target[i]);
    // Negative pads crop; the begin side gets the smaller half of the difference.
    const int64_t diff = target[i] - x.shape()[a];
    const int64_t half = (diff < 0 ? -diff : diff) / 2;
    pads[a] = diff < 0 ? -half : half;
    pads[rank + a] = diff - pads[a];
  }
  VN_ASSIGN_OR_RETURN(Tensor zero, Tensor::create(x.dtype(), {}));
  return pad_with(ctx, pads, "constant", zero);
}

}  // namespace

void register_pad_ops(OpRegistry& registry) {
  registry.add("Pad", 1, pad_2<true>);
  registry.add("Pad", 2, pad_2<false>);
  for (int64_t v : {11, 13}) registry.add("Pad", v, pad_11<false, false>);
  registry.add("Pad", 18, pad_11<true, false>);
  // 21, 23, 24 and 25 only added element types Vernier refuses when it reads them.
  for (int64_t v : {19, 21, 23, 24, 25}) registry.add("Pad", v, pad_11<true, true>);
  registry.add("CenterCropPad", 18, center_crop_pad);
}

}  // namespace vn::ops
