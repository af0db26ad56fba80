// SPDX-License-Identifier: Apache-2.0
// The direct float32 convolution of the reference's Conv (conv.cpp) for groups of few channels:
// depthwise convolutions, the grouped ones of RegNet-like models and networks' stems, which
// im2col + GEMM runs poorly (tiny GEMMs, an im2col k*k times the input). Internal to the Conv
// kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/ops/spatial.h"

namespace vn::ops {

/// Whether conv_direct computes a convolution of `group` groups of `cg` input and `mg` output
/// channels over a window of `kernel` with `dilations` (spatial dims; no dilations means 1): one
/// input channel per group (depthwise, any channel multiplier), several groups of few channels
/// each, one group of up to 4 input and 32 output channels (a network's stem), or one group of up
/// to 64 output channels over an undilated 3 x 3 window, where it beats im2col + GEMM.
bool conv_direct_suits(int64_t group, int64_t cg, int64_t mg, std::span<const int64_t> kernel,
                       std::span<const int64_t> dilations);

/// y = conv(x, w) (+ one bias per output channel when `bias` is non-null) over dense row-major
/// buffers laid out as conv_float32's (conv.h), on up to `threads` OpenMP threads. Each output is
/// summed in one fixed order, whatever the thread count: the bias (or 0), then one multiply-add
/// per (input channel, kd, kh, kw) in that order, padding taps included (w * 0), each fused into
/// one rounding under AVX2/FMA. That is the order and the rounding of the float32 im2col + GEMM
/// path (sgemm.h), so the two give the same bits.
///
/// With `transform`, each task's copy of its input rows, padding included, is passed through it
/// in place before the sums, while in cache: it must map 0 to 0 and treat every value alike (the
/// engine's int8 layers quantize their input there, where a pass of its own read and wrote all of
/// it through memory).
void conv_direct(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                 const float* w, const float* bias, float* y, int threads,
                 const std::function<void(std::span<float>)>* transform = nullptr);

}  // namespace vn::ops
