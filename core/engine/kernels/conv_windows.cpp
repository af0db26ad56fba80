// SPDX-License-Identifier: Apache-2.0
// The window arithmetic of the engine's Conv tactics (conv_windows.h).
#include "core/engine/kernels/conv_windows.h"

#include <algorithm>

namespace vn::engine::kernels {

template <typename T>
void im2col(const T* x, int64_t channels, const ops::WindowGeometry& g, T* col) {
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_hw = g.out[1] * g.out[2];
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_plane;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t off_w = kw * g.dilations[2] - g.pads_begin[2];
          const auto [lo, hi] = ops::outputs_inside(off_w, g.strides[2], g.in[2], g.out[2]);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
              T* dst = col + od * out_hw + oh * g.out[2];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill_n(dst, g.out[2], T{0});
                continue;
              }
              const T* src = xc + (id * g.in[1] + ih) * g.in[2];
              std::fill_n(dst, lo, T{0});
              if (g.strides[2] == 1) {
                std::copy(src + lo + off_w, src + hi + off_w, dst + lo);
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * g.strides[2] + off_w];
              }
              std::fill(dst + hi, dst + g.out[2], T{0});
            }
          }
          col += g.out[0] * out_hw;
        }
      }
    }
  }
}

void direct_plane(const float* x, const float* w, int64_t channels, const ops::WindowGeometry& g, float* y) {
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  for (int64_t c = 0; c < channels; ++c) {
    const float* xc = x + c * in_plane;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float wv = w[c * taps + (kd * g.kernel[1] + kh) * g.kernel[2] + kw];
          const int64_t off_w = kw * g.dilations[2] - g.pads_begin[2];
          const auto [lo, hi] = ops::outputs_inside(off_w, g.strides[2], g.in[2], g.out[2]);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.strides[0] - g.pads_begin[0] + kd * g.dilations[0];
            if (id < 0 || id >= g.in[0]) continue;
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const int64_t ih = oh * g.strides[1] - g.pads_begin[1] + kh * g.dilations[1];
              if (ih < 0 || ih >= g.in[1]) continue;
              const float* src = xc + (id * g.in[1] + ih) * g.in[2] + off_w;
              float* dst = y + (od * g.out[1] + oh) * g.out[2];
              const int64_t s = g.strides[2];
              for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow * s];
            }
          }
        }
      }
    }
  }
}

// ---- Winograd F(2x2, 3x3) transforms ----------------------------------------------------------

void winograd_kernel_transform(const float* g, double* u) {
  double t[4][3];
  for (int j = 0; j < 3; ++j) {
    const double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5 * (g0 + g1 + g2);
    t[2][j] = 0.5 * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int i = 0; i < 4; ++i) {
    u[i * 4 + 0] = t[i][0];
    u[i * 4 + 1] = 0.5 * (t[i][0] + t[i][1] + t[i][2]);
    u[i * 4 + 2] = 0.5 * (t[i][0] - t[i][1] + t[i][2]);
    u[i * 4 + 3] = t[i][2];
  }
}

void winograd_input_transform(const float d[4][4], float v[16]) {
  float t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[0][j] - d[2][j];
    t[1][j] = d[1][j] + d[2][j];
    t[2][j] = d[2][j] - d[1][j];
    t[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) {
    v[i * 4 + 0] = t[i][0] - t[i][2];
    v[i * 4 + 1] = t[i][1] + t[i][2];
    v[i * 4 + 2] = t[i][2] - t[i][1];
    v[i * 4 + 3] = t[i][1] - t[i][3];
  }
}

void winograd_output_transform(const float m[16], float y[2][2]) {
  float t[2][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = m[j] + m[4 + j] + m[8 + j];
    t[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
  }
  for (int i = 0; i < 2; ++i) {
    y[i][0] = t[i][0] + t[i][1] + t[i][2];
    y[i][1] = t[i][1] - t[i][2] - t[i][3];
  }
}

template void im2col<float>(const float*, int64_t, const ops::WindowGeometry&, float*);
template void im2col<int8_t>(const int8_t*, int64_t, const ops::WindowGeometry&, int8_t*);

}  // namespace vn::engine::kernels
