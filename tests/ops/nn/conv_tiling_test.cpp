// SPDX-License-Identifier: Apache-2.0
// How convolutions cut their GEMMs for their threads (conv_tiling), and the shared im2col panels
// a many-threaded convolution keeps from call to call.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/ops/nn/conv.h"
#include "core/ops/nn/conv_tiling.h"
#include "core/ops/sgemm.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(ConvTiling, TilesAndBlocksCoverTheProductOnce) {
  struct Case {
    int64_t images, mg, rows, out_size;
    int threads;
  };
  const Case cases[] = {
      {1, 64, 1200, 1225, 16}, {1, 96, 576, 1225, 16}, {1, 192, 1344, 289, 16}, {1, 320, 1728, 64, 16},
      {2, 40, 216, 900, 2},    {1, 32, 1152, 3136, 16}, {1, 512, 4608, 49, 2},  {3, 8, 9, 25, 4},
      {1, 64, 576, 3136, 1},   {6, 12, 27, 121, 2},     {1, 7, 5, 1, 16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.images << " x " << c.mg << " x " << c.rows << " x " << c.out_size
                                      << " on " << c.threads);
    const ConvTiling t = conv_tiling(c.images, c.mg, c.rows, c.out_size, sizeof(float), c.threads, kPackCols);
    EXPECT_EQ(t.planes, c.images * t.tiles);
    EXPECT_EQ(t.tasks, t.planes * t.blocks);
    // Blocks of whole row blocks of the kernel, covering the output channels, none empty.
    EXPECT_EQ(t.block % kPackRows, 0);
    EXPECT_GE(t.block * t.blocks, c.mg);
    EXPECT_LT(t.block * (t.blocks - 1), c.mg);
    if (c.threads == 1) {
      EXPECT_EQ(t.blocks, 1);
    }
    // Each image's tiles cover its positions once, in order, in whole units, at most `tile` wide.
    int64_t next = 0;
    for (int64_t i = 0; i < t.tiles; ++i) {
      const ConvTiling::Plane p = t.plane(i, 1, c.out_size);
      EXPECT_EQ(p.c0, next);
      EXPECT_EQ(p.c0 % kPackCols, 0);
      EXPECT_GT(p.width, 0);
      EXPECT_LE(p.width, t.tile);
      next = p.c1;
    }
    EXPECT_EQ(next, c.out_size);
  }
}

TEST(ConvTiling, FewPlanesForManyThreadsGiveATaskAThread) {
  // Inception-v3's 35 x 35 layers on 16 threads: 48 -> 64 channels over 5 x 5 windows (1200 rows)
  // and 64 -> 96 over 3 x 3 ones made 9 tiles of 2 blocks, 18 tasks, two threads doing two each.
  // Tiles and blocks chosen together give 16 tasks of even work.
  for (const int64_t mg : {64, 96}) {
    const ConvTiling t = conv_tiling(1, mg, mg == 64 ? 1200 : 576, 1225, sizeof(float), 16, kPackCols);
    SCOPED_TRACE(mg);
    EXPECT_EQ(t.tiles, 8);
    EXPECT_EQ(t.blocks, 2);
    EXPECT_EQ(t.tasks, 16);
  }
  // Fewer planes than threads with one tile: blocks of output channels, one a thread.
  const ConvTiling deep = conv_tiling(1, 512, 4608, 49, sizeof(float), 2, kPackCols);
  EXPECT_EQ(deep.tiles, 1);
  EXPECT_EQ(deep.tasks, 2);
}

TEST(Conv, ManyThreadsKeepTheirSharedPanelsFromCallToCall) {
  // 48 -> 64 channels over 35 x 35 positions on 16 threads: 8 tiles whose im2col panels (1200
  // rows of 160 columns each, 6 MiB) all threads make and read. Freed at every call, they were
  // faulted in anew at every call.
  WindowGeometry geo;
  geo.in = {35, 35};
  geo.kernel = {5, 5};
  geo.out = {35, 35};
  geo.strides = {1, 1};
  geo.dilations = {1, 1};
  geo.pads_begin = geo.pads_end = {2, 2};
  const std::vector<float> x = random_floats(48 * 35 * 35, 71);
  const std::vector<float> w = random_floats(64 * 48 * 25, 72);
  std::vector<float> first(64 * 35 * 35), second(first.size());
  const auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  conv_float32(geo, 1, 48, 64, 1, x.data(), w.data(), nullptr, first.data(), 16);
  const long before = minor_faults();
  conv_float32(geo, 1, 48, 64, 1, x.data(), w.data(), nullptr, second.data(), 16);
  EXPECT_LT(minor_faults() - before, 6 * 256 / 4);  // a quarter of the panels' pages
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace vn::ops::testing
