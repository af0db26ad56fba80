// SPDX-License-Identifier: Apache-2.0
// The parts of a convolution's output over which the same kernel taps read padding: a dilated
// convolution with padding as wide as its dilation (DeepLabV3's ASPP at rate 12 over a 20x20 map)
// multiplies zeros for most of its taps, at different taps for the corners, the edges and the
// middle of the output. Each part is then a smaller convolution with only its live taps.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/ir/tensor.h"
#include "core/ops/narrow.h"
#include "core/ops/spatial.h"

namespace vn::ops {

/// A box of output positions, and the convolution that computes it from the same input with only
/// the kernel taps that read inside the input at every position of the box.
struct ConvRegion {
  Shape out_begin;            ///< the box's first output position along each spatial axis
  WindowGeometry geo;         ///< the box's convolution: out is the box's size, kernel its live taps
  std::vector<int64_t> taps;  ///< the live taps, as row-major indices into the full kernel, in order
};

/// The boxes of `g`'s output positions (together all of them, each once) over which the taps that
/// read only padding are the same, with their convolutions, when leaving those taps out saves
/// enough work to pay for cutting the output: every tap dead for all positions (one box), or at
/// least a quarter of the multiply-adds in at most 4 runs of positions per axis. Empty otherwise,
/// and when some position reads only padding. A box's geometry may have a negative pads_begin (its
/// first live tap starts inside the input).
std::vector<ConvRegion> padding_regions(const WindowGeometry& g);

/// conv_float32 (conv.h, same arguments) box by box over padding_regions(geo), when there are
/// regions and every weight is finite. Returns false otherwise: y is then left with some or none
/// of its values, for the caller to compute in full. Each box's im2col holds only its live taps,
/// and each chunk of output channels (up to 96) gathers its live weights box by box from rows of
/// w it has just read. A dead tap would add w * 0 to each sum, which leaves the sum as it is (up
/// to the sign of an all-zero sum after a bias of -0) when w is finite, and the live ones are
/// summed in the order of the whole convolution (input channel, then tap): the outputs have its
/// bits. With a non-finite weight the taps all stay (inf * 0 is NaN, as ONNX's zero padding makes
/// it).
///
/// When w lies in the constant `w_constant` and there is no transform, or one that rounds to the
/// 16-bit format `kept_as` (as conv_float32's; checked when they are gathered, as PackedWeights'
/// rounded entries: any other transform keeps nothing), the live weights of every box, gathered
/// (and rounded), are kept from call to call in float32 (PackedWeights::derived_weights): the
/// gathers read each weight once per box and chunk, 5.4 times the weights' size per chunk for
/// DeepLabV3's rate-6 boxes.
bool conv_float32_by_regions(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                             const float* w, const float* bias, float* y, int threads,
                             const std::function<void(std::span<float>)>* transform,
                             const Tensor* w_constant = nullptr, Narrow kept_as = Narrow::kNone);

}  // namespace vn::ops
