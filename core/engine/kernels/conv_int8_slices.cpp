// SPDX-License-Identifier: Apache-2.0
// int8 convolutions of more than kFloatExactDepth products per sum that do not take the int8
// product (kernels.h, Int8ConvSlices): the float32 convolution over slices of the input channels,
// each slice's sums exact, added in int32.
#include <algorithm>
#include <memory>

#include "core/engine/kernels/kernels.h"

namespace vn::engine::kernels {

Int8ConvSlices slice_int8_conv_weights(const std::vector<int8_t>& w, int64_t m, int64_t channels, int64_t taps) {
  Int8ConvSlices out;
  if (taps > kFloatExactDepth || m <= 0 || channels <= 0) return out;
  const int64_t most = kFloatExactDepth / taps;
  const int64_t count = (channels + most - 1) / most;
  const int64_t rows = channels * taps;
  for (int64_t s = 0; s < count; ++s) {
    // Even slices (256 channels of 3x3: 86 + 85 + 85, not 113 + 113 + 30).
    const int64_t c0 = s * channels / count, c1 = (s + 1) * channels / count;
    Int8ConvSlices::Slice slice;
    slice.channel0 = c0;
    slice.channels = c1 - c0;
    slice.weights = Tensor(DType::kFloat32, Shape{m, slice.channels * taps});
    float* dst = slice.weights.mutable_data<float>();
    for (int64_t o = 0; o < m; ++o) {
      std::copy_n(w.begin() + o * rows + c0 * taps, slice.channels * taps, dst + o * slice.channels * taps);
    }
    out.slices.push_back(std::move(slice));
  }
  return out;
}

void conv_int8_slices(const ops::WindowGeometry& g, int64_t batch, int64_t channels, int64_t m, const float* x,
                      const Int8ConvSlices& weights, float* y, int threads, const ops::ConvFinish& finish) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  const size_t count = weights.slices.size();
  // Every element of these is written before it is read: no zero fill.
  CallBuffer<int32_t> sums(m * out_size);
  CallBuffer<float> part(count > 1 ? m * out_size : 0);
  for (int64_t img = 0; img < batch; ++img) {
    float* yi = y + img * m * out_size;
    for (size_t s = 0; s < count; ++s) {
      const Int8ConvSlices::Slice& slice = weights.slices[s];
      const bool last = s + 1 == count;
      float* out = last ? yi : part.get();
      // Each block of the slice's sums goes into the int32 sums while in cache; the last slice's
      // blocks become y's (float32 of the whole sums, as the int8 kernels give them), finished.
      const ops::ConvFinish add = [&](int64_t, int64_t channel0, int64_t chans, int64_t col0, int64_t width) {
        for (int64_t ch = channel0; ch < channel0 + chans; ++ch) {
          const int64_t at = ch * out_size + col0;
          int32_t* acc = sums.get() + at;
          const float* o = out + at;
          if (s == 0 && !last) {
            for (int64_t i = 0; i < width; ++i) acc[i] = static_cast<int32_t>(o[i]);
          } else if (!last) {
            for (int64_t i = 0; i < width; ++i) acc[i] += static_cast<int32_t>(o[i]);
          } else if (s > 0) {
            for (int64_t i = 0; i < width; ++i) yi[at + i] = static_cast<float>(acc[i] + static_cast<int32_t>(o[i]));
          }
        }
        if (last) finish(img, channel0, chans, col0, width);
      };
      ops::conv_float32(g, 1, slice.channels, m, 1, x + (img * channels + slice.channel0) * in_size,
                        slice.weights.data<float>(), nullptr, out, threads, nullptr, &add, &slice.weights);
    }
  }
}

}  // namespace vn::engine::kernels
