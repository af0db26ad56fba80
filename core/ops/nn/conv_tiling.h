// SPDX-License-Identifier: Apache-2.0
// How a float32 or Eigen convolution (conv.cpp) cuts its GEMMs into tasks for its threads.
// Internal to core/ops.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace vn::ops {

/// How a convolution's GEMMs are cut into tasks: each (image, group) is one GEMM, W_g (M/g x
/// C/g*K) times the im2col matrix; its columns (output positions) are cut into `tiles` tiles of
/// whole units of `unit` columns, at most `tile` wide, whose im2col block stays in cache, and,
/// with few tiles, its output channels into `blocks` blocks of `block` (a multiple of kPackRows).
/// A task is one (plane, block), where a plane is one (image, group, tile).
struct ConvTiling {
  int64_t unit = 0, units = 0, tile = 0, tiles = 0, block = 0, blocks = 0, planes = 0, tasks = 0;

  /// One plane's image, group and columns [c0, c1) (width c1 - c0) among `out_size`.
  struct Plane {
    int64_t img, gi, c0, c1, width;
  };
  Plane plane(int64_t index, int64_t group, int64_t out_size) const {
    const int64_t t = index % tiles;
    const int64_t c0 = t * units / tiles * unit, c1 = std::min((t + 1) * units / tiles * unit, out_size);
    return {index / (group * tiles), index / tiles % group, c0, c1, c1 - c0};
  }
};

/// The tiling of `images` GEMMs (images x groups) of `mg` output channels by `rows` (C/g*K)
/// over `out_size` positions, elements of `elem_bytes`, for `threads` threads. Tiles are whole
/// units of `unit` columns: the packed GEMM computes whole panels, so its tiles are cut at panel
/// boundaries, and only the plane's last panel computes columns that are not there.
ConvTiling conv_tiling(int64_t images, int64_t mg, int64_t rows, int64_t out_size, size_t elem_bytes, int threads,
                       int64_t unit);

}  // namespace vn::ops
