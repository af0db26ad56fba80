// SPDX-License-Identifier: Apache-2.0
// The register blocks of conv_direct (conv_direct.cpp): sums over every tap of a window, read from
// a task's padded copy of its input (one channel after another, rows split into stride phases,
// so that the taps of consecutive output columns read consecutive floats). Each output's sum is
// one chain, the same in every block: the bias (or 0), then one multiply-add per tap in order,
// each fused into one rounding under AVX2/FMA. Internal to the Conv kernels.
#pragma once

#include <array>
#include <cstdint>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace vn::ops::direct {

inline constexpr int kLanes = 8;       // floats per vector
inline constexpr int kMaxBlock = 8;    // vectors summed at once by a block: rows x vectors per row
inline constexpr int kMaxVectors = 4;  // vectors per row of a block
// Output channels summed at once by a channel block where a group has that many, and the vectors
// of each of them: their sums, a tap's input vectors and its weight fill the 16 registers.
inline constexpr int kChannels = 4;
inline constexpr int kMaxChannelBlock = 3;

/// One output channel's block: `R` output rows (`ldy` floats apart in y, `row_step` apart in the
/// padded input) of `V` vectors, the last one `last` (1 to 8) columns wide. Tap i reads the
/// padded input at in + off[i] with weight w[i], for `count` taps.
using BlockFn = void (*)(const float* in, int64_t row_step, const int64_t* off, const float* w, int64_t count,
                         float bias, float* y, int64_t ldy, int last);
/// BlockFn for kChannels output channels at once: their weights `wstep` apart, their planes
/// `ystep` apart in y, their biases from `bias` (or none); each tap's input vectors are loaded once
/// for all of them.
using ChannelBlockFn = void (*)(const float* in, int64_t row_step, const int64_t* off, const float* w,
                                int64_t wstep, int64_t count, const float* bias, float* y, int64_t ystep,
                                int64_t ldy, int last);
/// Eight output channels in the lanes of each vector over P consecutive positions of one output
/// row: tap i's eight weights at w + 8 i, their eight biases from `bias` (or none), their planes
/// `ystep` apart in y. Over groups (one copy per channel), each position's input is broadcast;
/// interleaved (depthwise: eight channels' copies with each position's eight values together,
/// `off` counting floats of that layout), each position's vector is loaded.
using LanesBlockFn = void (*)(const float* in, const int64_t* off, const float* w, int64_t count, const float* bias,
                              float* y, int64_t ystep);

using BlockTable = std::array<std::array<BlockFn, kMaxBlock>, kMaxVectors>;  ///< [V - 1][R - 1], R V <= 8
using ChannelTable = std::array<std::array<ChannelBlockFn, kMaxChannelBlock>, kMaxChannelBlock>;  ///< R V <= 3
using LanesTable = std::array<LanesBlockFn, kLanes>;  ///< [P - 1]

/// The blocks for a window of `taps` taps (3x3, 5x5 and 7x7 windows unroll their taps); null
/// where R V passes the block's limit.
const BlockTable& blocks(int64_t taps);
const ChannelTable& channel_blocks(int64_t taps);

/// Whether conv_direct sums a group's channels in lanes blocks: whole blocks of eight, over rows
/// of more than two vectors. Narrower rows give a block too few positions, whose chains wait on
/// the multiply-add's latency: channel blocks took RegNetY's 7- and 14-wide rows 5% and 3% faster,
/// lanes blocks its 28-wide ones 20%. False without AVX2.
bool in_lanes(int64_t mg, int64_t out_w);
/// Whether conv_direct sums depthwise channels (one in, one out per group) eight at a time in
/// interleaved lanes blocks: the per-channel tasks of maps of 7 x 7 to 28 x 28 spent more on
/// their copies and calls than on their few multiply-adds (EfficientNetV2-S's 960 channels of
/// 14 x 14 at 3 GMAC/s). False without AVX2.
bool depthwise_in_lanes(int64_t cg, int64_t mg, int64_t group);

#if defined(__AVX2__) && defined(__FMA__)
/// The first n lanes (n clamped to [0, 8]), as a mask for maskload/maskstore.
__m256i first_lanes(int64_t n);
/// The lanes blocks for a window of `taps` taps, over groups or interleaved.
const LanesTable& lanes_blocks(int64_t taps, bool interleaved);
/// The `count` floats of each of eight planes (`plane` apart from src) interleaved into dst: the
/// eight values of position q at dst + 8 q, in plane order.
void interleave8(const float* src, int64_t plane, int64_t count, float* dst);
#endif

}  // namespace vn::ops::direct
