// SPDX-License-Identifier: Apache-2.0
// The reference backend's float32 convolution, for other backends whose convolution computes the
// same thing (float32 products accumulated in float32): the engine's im2col + GEMM tactic.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/ir/tensor.h"
#include "core/ops/narrow.h"
#include "core/ops/spatial.h"

namespace vn::ops {

/// y = conv(x, w) (+ one bias per output channel when `bias` is non-null) over dense row-major
/// buffers: x is (n, c, geo.in...), w is (m, c / group, geo.kernel...), y is (n, m, geo.out...)
/// and is overwritten. `geo` spans 1 to 3 spatial dims; c and m divide by group. Runs on up to
/// `threads` threads: column tiles of im2col through a float32 GEMM, and a direct sum for
/// groups of few channels (conv_direct.h: depthwise, RegNet-like groups), in the GEMM's summation
/// order.
///
/// With `transform`, the products read w as transform makes it: it is called, from any of the
/// threads, on packed copies of the weights of blocks of output channels (sgemm.h's layout, zero
/// rows padding a block to kPackRows), and must treat every element alike (an engine rounding its
/// operands to a narrower format). A layer whose weights every tile of output positions reads
/// packs and transforms them once, a block at a time; one with a single tile per group transforms
/// a thread's channels 60 at a time, each chunk just before its products, so that no transformed
/// copy of all of a large layer's weights is made. The few weights of a direct sum are transformed
/// at once.
///
/// With `finish`, finish(img, channel0, channels, col0, width) is called, from any of the threads,
/// on each block of y that is final (image img, output channels [channel0, channel0 + channels),
/// output positions [col0, col0 + width) of each), while it is in that thread's cache: an engine's
/// residual add and activation. Every element of y is in exactly one block.
///
/// With `w_constant` (w lies in that constant of the model) and no transform, the weights' packed
/// form is kept for the next call (packed_weights in sgemm_driver.h) and read packed on every
/// path that packs or reads them in place. With a transform that rounds to the 16-bit format
/// `kept_as` (the engine's fp16 and bf16 layers), the rounded packed weights are kept in that
/// format (PackedWeights::rounded_conv_weights) and widened a chunk of output channels at a time
/// where the tiles' paths would pack and round them; y is the same either way.
using ConvFinish = std::function<void(int64_t img, int64_t channel0, int64_t channels, int64_t col0, int64_t width)>;
void conv_float32(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                  const float* w, const float* bias, float* y, int threads,
                  const std::function<void(std::span<float>)>* transform = nullptr, const ConvFinish* finish = nullptr,
                  const Tensor* w_constant = nullptr, Narrow kept_as = Narrow::kNone);

}  // namespace vn::ops
