// SPDX-License-Identifier: Apache-2.0
// The window arithmetic of the engine's Conv tactics (conv_kernels.cpp): im2col, the direct
// plane-by-plane sums of conv__direct, and Winograd F(2x2, 3x3)'s transforms. Internal to
// core/engine/kernels.
#pragma once

#include <cstdint>

#include "core/ops/spatial.h"

namespace vn::engine::kernels {

/// im2col over a 3-D (lifted) geometry: one row per (channel, kd, kh, kw), one column per output
/// position; padding reads as 0. For float and int8_t.
template <typename T>
void im2col(const T* x, int64_t channels, const ops::WindowGeometry& g, T* col);

/// Direct convolution of one output plane of a 3-D (lifted) geometry: for each input channel and
/// kernel tap in order, the tap's contribution is added to every output position inside the
/// input (y must hold the sums so far: zeros to start).
void direct_plane(const float* x, const float* w, int64_t channels, const ops::WindowGeometry& g, float* y);

/// U = G g G^T for a 3x3 kernel g (row-major), into 16 values.
void winograd_kernel_transform(const float* g, double* u);
/// V = B^T d B for a 4x4 input tile d.
void winograd_input_transform(const float d[4][4], float v[16]);
/// Y = A^T m A: the 2x2 output tile of a 4x4 product tile m.
void winograd_output_transform(const float m[16], float y[2][2]);

}  // namespace vn::engine::kernels
