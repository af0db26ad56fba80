// SPDX-License-Identifier: Apache-2.0
// Sliding-window geometry shared by Conv and the pooling ops: strides, dilations, explicit pads or
// auto_pad, and the resulting output size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/common/status.h"
#include "core/ir/tensor.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// The window over the spatial dimensions (everything after N and C) of one op application.
/// All vectors have one entry per spatial dimension.
struct WindowGeometry {
  Shape in;      ///< input spatial dims
  Shape kernel;  ///< kernel dims (undilated)
  Shape strides;
  Shape dilations;
  Shape pads_begin;
  Shape pads_end;
  Shape out;  ///< output spatial dims

  size_t rank() const { return in.size(); }
  /// (kernel - 1) * dilation + 1 along dim i.
  int64_t effective_kernel(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

/// Reads `strides`, `pads`, `auto_pad` and (when `use_dilations`) `dilations` from the node and
/// computes the output size for input spatial dims `in` and window `kernel`.
///
/// auto_pad NOTSET uses the explicit pads; VALID uses none; SAME_UPPER/SAME_LOWER pad so that
/// out = ceil(in / stride), putting the odd cell at the end (UPPER) or the beginning (LOWER).
/// With `ceil_mode` (pooling, NOTSET/VALID only) the output rounds up, but a last window that would
/// start inside the end padding is dropped, as PyTorch does and ONNX opset 19 documents.
/// Fails with kInvalidModel for malformed attributes and kShapeMismatch when the (padded) input is
/// smaller than the dilated kernel.
Result<WindowGeometry> window_geometry(const KernelContext& ctx, const Shape& in, const Shape& kernel, bool ceil_mode,
                                       bool use_dilations);

/// The outputs [lo, hi) along one dim whose input position o * stride + off lies inside [0, in),
/// of `out` outputs; `off` is a tap's offset, k * dilation - pads_begin. Window loops add a tap to
/// this range of outputs at once.
struct OutputRange {
  int64_t lo, hi;
};
inline OutputRange outputs_inside(int64_t off, int64_t stride, int64_t in, int64_t out) {
  const int64_t lo = std::min(off >= 0 ? 0 : (-off + stride - 1) / stride, out);
  const int64_t hi = std::clamp(in - off <= 0 ? 0 : (in - off + stride - 1) / stride, lo, out);
  return {lo, hi};
}

/// The same geometry with 1-D and 2-D windows lifted to 3-D by leading unit dims (kernel 1,
/// stride 1, no padding), so kernels need one 3-D loop nest. Precondition: rank() <= 3.
WindowGeometry lift_to_3d(const WindowGeometry& g);

}  // namespace vn::ops
