// SPDX-License-Identifier: Apache-2.0
// The im2col step of the reference's Conv (conv.cpp): rows of the im2col matrix in plain layout
// for any element type, and packed into sgemm.h's panels for float32. Internal to the Conv kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/ops/spatial.h"

namespace vn::ops {

/// Writes columns [c0, c1) of one row of the im2col matrix of the input plane `xc` (3-D geometry):
/// the row of kernel offset (kd, kh, kw), one column per output position in C order; padding
/// reads as 0.
template <typename T>
void im2col_row(const T* xc, const WindowGeometry& g, int64_t kd, int64_t kh, int64_t kw, int64_t c0, int64_t c1,
                T* dst) {
  const int64_t in_d = g.in[0], in_h = g.in[1], in_w = g.in[2];
  const int64_t out_h = g.out[1], out_w = g.out[2];
  const int64_t plane = out_h * out_w;
  const int64_t width = c1 - c0;
  // Output columns ow whose input column iw = ow*s - p + kw*d lands inside [0, in_w).
  const int64_t off_w = kw * g.dilations[2] - g.pads_begin[2];
  const int64_t sw = g.strides[2];
  const auto [ow_lo, ow_hi] = outputs_inside(off_w, sw, in_w, out_w);
  int64_t od = c0 / plane, oh = c0 % plane / out_w, ow = c0 % out_w;
  // One run per output row met by the columns: rows are where the input row changes.
  for (int64_t j = 0; j < width;) {
    const int64_t run = std::min(out_w - ow, width - j);
    const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
    const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
    if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) {
      std::fill_n(dst, run, T(0));
    } else {
      const T* src = xc + (id * in_h + ih) * in_w;
      const int64_t lo = std::clamp(ow_lo, ow, ow + run), hi = std::clamp(ow_hi, lo, ow + run);
      std::fill(dst, dst + (lo - ow), T(0));
      if (sw == 1) {
        std::copy(src + lo + off_w, src + hi + off_w, dst + (lo - ow));
      } else {
        for (int64_t o = lo; o < hi; ++o) dst[o - ow] = src[o * sw + off_w];
      }
      std::fill(dst + (hi - ow), dst + run, T(0));
    }
    dst += run;
    j += run;
    ow += run;
    if (ow == out_w) {
      ow = 0;
      if (++oh == out_h) {
        oh = 0;
        ++od;
      }
    }
  }
}

/// Writes columns [c0, c1) of the im2col matrix of `channels` input planes (3-D geometry) into
/// `col`: row-major, one row per (channel, kd, kh, kw) and c1 - c0 columns, one per output
/// position in C order; padding reads as 0.
template <typename T>
void im2col_tile(const T* x, int64_t channels, const WindowGeometry& g, int64_t c0, int64_t c1, T* col) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          im2col_row(x + c * in_size, g, kd, kh, kw, c0, c1, col);
          col += c1 - c0;
        }
      }
    }
  }
}

/// Writes the rows of `channels` input planes (3-D geometry), columns [c0, c1), of an im2col
/// matrix of `depth` rows into its packed panels (sgemm.h's layout for B), starting at row
/// `row0`; the columns of the last panel past c1 are zeroed.
void im2col_panels(const float* x, int64_t channels, const WindowGeometry& g, int64_t c0, int64_t c1, int64_t row0,
                   int64_t depth, float* panels);

}  // namespace vn::ops
