// SPDX-License-Identifier: Apache-2.0
#include "core/ops/nn/conv_tiling.h"

#include "core/ops/sgemm.h"

namespace vn::ops {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

ConvTiling conv_tiling(int64_t images, int64_t mg, int64_t rows, int64_t out_size, size_t elem_bytes, int threads,
                       int64_t unit) {
  ConvTiling t;
  t.unit = unit;
  t.units = ceil_div(out_size, unit);
  // About 1 MiB of im2col per tile, so that it stays in L2 while the GEMM sweeps it, but 384 to
  // 1024 columns whatever the rows: narrower tiles of short W blocks ran at half speed under
  // Eigen's GEMM (64 x 576 x 256 at 43 GFLOP/s, x 320 at 100). The tiles are then evened out, in
  // a multiple of the thread count when there are more tiles than threads.
  const int64_t per_tile = std::clamp<int64_t>((int64_t{1} << 20) / static_cast<int64_t>(elem_bytes) / rows, 384, 1024);
  const int64_t units_per_tile = std::max<int64_t>(per_tile / unit, 1);
  const int64_t cached_tiles = std::max<int64_t>(ceil_div(t.units, units_per_tile), 1);
  t.tiles = cached_tiles;
  // With fewer tiles than threads for all the images and groups, narrower tiles first, down to
  // kMinTileColumns, before the output channels are cut into blocks: blocks share one im2col
  // among threads and come out uneven (DenseNet-121's 3x3 layers, 32 output channels over 56x56
  // positions, on 16 threads: 9 tiles of 2 blocks, of 24 and 8 rows, 2.8 ms a layer against 1.1
  // on 4 threads).
  constexpr int64_t kMinTileColumns = 128;
  const int64_t wanted = ceil_div(threads, images);
  if (t.tiles < wanted) t.tiles = std::max(t.tiles, std::min(wanted, t.units * unit / kMinTileColumns));
  if (t.tiles > threads) t.tiles = ceil_div(t.tiles, threads) * threads;
  t.tiles = std::min(t.tiles, t.units);
  t.blocks = 1;
  if (images * t.tiles < threads) {
    // Still fewer planes than threads (deep layers: few output positions): the output channels
    // are cut into blocks as well, of 16 rows at least, since each block reads all of its tile's
    // im2col. Tiles (as many as above at most, as the cache wants at least) and blocks are chosen
    // together for the least work on the busiest thread, the fewest blocks and tiles among equals:
    // Inception-v3's 35 x 35 layers of 64 and 96 output channels on 16 threads took 9 tiles of 2
    // blocks, 18 tasks, two threads doing two each; 8 tiles of 2 blocks make 16.
    const int64_t most_tiles = t.tiles, most_blocks = std::max<int64_t>(mg / 16, 1);
    int64_t least = -1;
    for (int64_t b = 1; b <= most_blocks; ++b) {
      const int64_t block = ceil_div(ceil_div(mg, b), kPackRows) * kPackRows;
      const int64_t blocks = ceil_div(mg, block);
      for (int64_t tiles = std::min(cached_tiles, most_tiles); tiles <= most_tiles; ++tiles) {
        const int64_t work = ceil_div(images * tiles * blocks, threads) * ceil_div(t.units, tiles) * block;
        if (least < 0 || work < least) least = work, t.tiles = tiles, t.blocks = blocks;
      }
    }
  }
  t.tile = ceil_div(t.units, t.tiles) * unit;
  t.planes = images * t.tiles;
  t.block = ceil_div(ceil_div(mg, t.blocks), kPackRows) * kPackRows;
  t.blocks = ceil_div(mg, t.block);
  t.tasks = t.planes * t.blocks;
  return t;
}

}  // namespace vn::ops
