// SPDX-License-Identifier: Apache-2.0
// conv_direct's register blocks (conv_direct_blocks.h), and their tables by window and shape.
#include "core/ops/nn/conv_direct_blocks.h"

#include <algorithm>
#include <utility>

namespace vn::ops::direct {

#if defined(__AVX2__) && defined(__FMA__)
__m256i first_lanes(int64_t n) {
  alignas(32) static constexpr int32_t kMask[2 * kLanes] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + kLanes - std::clamp<int64_t>(n, 0, kLanes)));
}
#endif

namespace {

#if defined(__AVX2__) && defined(__FMA__)

/// step(i) for every tap i in [0, count), in order; K > 0 unrolls them K at a time (count is then a
/// multiple of K).
template <int K, typename F>
__attribute__((always_inline)) inline void for_each_tap(int64_t count, F&& step) {
  if constexpr (K > 0) {
    for (int64_t i = 0; i < count; i += K) {
#pragma GCC unroll 49
      for (int t = 0; t < K; ++t) step(i + t);
    }
  } else {
    for (int64_t i = 0; i < count; ++i) step(i);
  }
}

/// acc[r][v] += *w * the vector at rows[r] + o + v * 8, fused.
template <int R, int V>
__attribute__((always_inline)) inline void tap(__m256 (&acc)[R][V], const float* const (&rows)[R], int64_t o,
                                               const float* w) {
  const __m256 wv = _mm256_broadcast_ss(w);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(rows[r] + o + v * kLanes), acc[r][v]);
  }
}

template <int R, int V, int K>
void block(const float* in, int64_t row_step, const int64_t* off, const float* w, int64_t count, float bias, float* y,
           int64_t ldy, int last) {
  __m256 acc[R][V];
  const float* rows[R];
  for (int r = 0; r < R; ++r) {
    rows[r] = in + r * row_step;
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(bias);
  }
  for_each_tap<K>(count, [&](int64_t i) __attribute__((always_inline)) { tap<R, V>(acc, rows, off[i], w + i); });
  const __m256i mask = first_lanes(last);
  for (int r = 0; r < R; ++r) {
    float* yr = y + r * ldy;
    for (int v = 0; v + 1 < V; ++v) _mm256_storeu_ps(yr + v * kLanes, acc[r][v]);
    // The last vector's lanes past `last` belong to the next row, or to another task's plane.
    _mm256_maskstore_ps(yr + (V - 1) * kLanes, mask, acc[r][V - 1]);
  }
}

/// block() for kChannels output channels at once (their weights `wstep` apart, their planes
/// `ystep` apart in y, their biases from `bias`): each tap's input vectors are loaded once for
/// all of them, where a block per channel loaded them again for each (RegNetY's groups of 8 in
/// and 8 out ran at a third of the multiply-adds' rate, bound by loads). Each output's sum is the
/// same chain as block()'s.
template <int R, int V, int K>
void channel_block(const float* in, int64_t row_step, const int64_t* off, const float* w, int64_t wstep,
                   int64_t count, const float* bias, float* y, int64_t ystep, int64_t ldy, int last) {
  __m256 acc[kChannels][R][V];
  const float* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = in + r * row_step;
  for (int o = 0; o < kChannels; ++o) {
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) acc[o][r][v] = _mm256_set1_ps(bias ? bias[o] : 0.0f);
    }
  }
  const auto step = [&](int64_t i) __attribute__((always_inline)) {
    __m256 x[R][V];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) x[r][v] = _mm256_loadu_ps(rows[r] + off[i] + v * kLanes);
    }
#pragma GCC unroll 4
    for (int o = 0; o < kChannels; ++o) {
      const __m256 wv = _mm256_broadcast_ss(w + o * wstep + i);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[o][r][v] = _mm256_fmadd_ps(wv, x[r][v], acc[o][r][v]);
      }
    }
  };
  for_each_tap<K>(count, step);
  const __m256i mask = first_lanes(last);
  for (int o = 0; o < kChannels; ++o) {
    for (int r = 0; r < R; ++r) {
      float* yr = y + o * ystep + r * ldy;
      for (int v = 0; v + 1 < V; ++v) _mm256_storeu_ps(yr + v * kLanes, acc[o][r][v]);
      _mm256_maskstore_ps(yr + (V - 1) * kLanes, mask, acc[o][r][V - 1]);
    }
  }
}

/// The 8 x 8 floats of r transposed: r[j] holds what was lane j of r[0] to r[7].
inline void transpose8(__m256 (&r)[kLanes]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/// Eight output channels in the lanes of each vector, P consecutive positions of one output row
/// in P vectors: each tap loads its eight weights (`w` holds them by tap, tap i's at w + 8 i) once
/// and broadcasts each position's input, so every lane is used (rows of 7 or 14 positions left 1
/// of 8 or 2 of 16 lanes of block()'s vectors empty), and a tap costs 1 + P loads for P
/// multiply-adds. Each output's sum is block()'s chain. The sums are transposed into the eight
/// channels' planes (`ystep` apart) at the end. Interleaved (depthwise: output channel o reads
/// input channel o alone): the input holds the eight channels' values of each position together
/// (`off` counts floats of that layout), and each position's vector is loaded instead.
template <int P, int K, bool Interleaved>
void lanes_block(const float* in, const int64_t* off, const float* w, int64_t count, const float* bias, float* y,
                 int64_t ystep) {
  __m256 acc[kLanes];
  const __m256 start = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  for (int p = 0; p < kLanes; ++p) acc[p] = p < P ? start : _mm256_setzero_ps();
  const auto step = [&](int64_t i) __attribute__((always_inline)) {
    const __m256 wv = _mm256_loadu_ps(w + kLanes * i);
    const float* x = in + off[i];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const __m256 xv = Interleaved ? _mm256_loadu_ps(x + kLanes * p) : _mm256_broadcast_ss(x + p);
      acc[p] = _mm256_fmadd_ps(xv, wv, acc[p]);
    }
  };
  for_each_tap<K>(count, step);
  transpose8(acc);
  const __m256i mask = first_lanes(P);
  for (int o = 0; o < kLanes; ++o) {
    if constexpr (P == kLanes) {
      _mm256_storeu_ps(y + o * ystep, acc[o]);
    } else {
      _mm256_maskstore_ps(y + o * ystep, mask, acc[o]);
    }
  }
}

/// lanes_block<P, K, Interleaved> for P = 1 to 8, at index P - 1.
template <int K, bool Interleaved, int... Pm1>
constexpr LanesTable lanes_row(std::integer_sequence<int, Pm1...>) {
  return {&lanes_block<Pm1 + 1, K, Interleaved>...};
}
template <bool Interleaved>
const LanesTable& lanes_table(int64_t taps) {
  static constexpr auto kPositions = std::make_integer_sequence<int, kLanes>{};
  static constexpr auto k3x3 = lanes_row<9, Interleaved>(kPositions);
  static constexpr auto k5x5 = lanes_row<25, Interleaved>(kPositions);
  static constexpr auto k7x7 = lanes_row<49, Interleaved>(kPositions);
  static constexpr auto kAny = lanes_row<0, Interleaved>(kPositions);
  return taps == 9 ? k3x3 : taps == 25 ? k5x5 : taps == 49 ? k7x7 : kAny;
}

#else


/// Without AVX2 and FMA: the same sums in plain loops, each step written as sgemm.cpp's portable
/// kernel writes it (so that the compiler fuses both or neither).
template <int R, int V, int K>
void block(const float* in, int64_t row_step, const int64_t* off, const float* w, int64_t count, float bias, float* y,
           int64_t ldy, int last) {
  float acc[R][V * kLanes];
  for (int r = 0; r < R; ++r) std::fill_n(acc[r], V * kLanes, bias);
  for (int64_t i = 0; i < count; ++i) {
    const float wv = w[i];
    for (int r = 0; r < R; ++r) {
      const float* src = in + r * row_step + off[i];
      for (int l = 0; l < V * kLanes; ++l) acc[r][l] += wv * src[l];
    }
  }
  for (int r = 0; r < R; ++r) std::copy_n(acc[r], (V - 1) * kLanes + last, y + r * ldy);
}

/// channel_block() without AVX2 and FMA: block() for each channel.
template <int R, int V, int K>
void channel_block(const float* in, int64_t row_step, const int64_t* off, const float* w, int64_t wstep,
                   int64_t count, const float* bias, float* y, int64_t ystep, int64_t ldy, int last) {
  for (int o = 0; o < kChannels; ++o) {
    block<R, V, K>(in, row_step, off, w + o * wstep, count, bias ? bias[o] : 0.0f, y + o * ystep, ldy, last);
  }
}

#endif

/// The blocks for a tap count K: [V - 1][R - 1], R * V <= kMaxBlock (null elsewhere).
template <int K, int V, int... Rm1>
constexpr std::array<BlockFn, kMaxBlock> block_row(std::integer_sequence<int, Rm1...>) {
  return {((Rm1 + 1) * V <= kMaxBlock ? &block < (Rm1 + 1) * V <= kMaxBlock ? Rm1 + 1 : 1, V, K > : nullptr)...};
}
template <int K>
constexpr BlockTable block_table() {
  constexpr auto rows = std::make_integer_sequence<int, kMaxBlock>{};
  return {block_row<K, 1>(rows), block_row<K, 2>(rows), block_row<K, 3>(rows), block_row<K, 4>(rows)};
}
template <int K, int V, int... Rm1>
constexpr std::array<ChannelBlockFn, kMaxChannelBlock> channel_row(std::integer_sequence<int, Rm1...>) {
  return {((Rm1 + 1) * V <= kMaxChannelBlock
               ? &channel_block < (Rm1 + 1) * V <= kMaxChannelBlock ? Rm1 + 1 : 1, V, K >
               : nullptr)...};
}
template <int K>
constexpr ChannelTable channel_table() {
  constexpr auto rows = std::make_integer_sequence<int, kMaxChannelBlock>{};
  return {channel_row<K, 1>(rows), channel_row<K, 2>(rows), channel_row<K, 3>(rows)};
}
constexpr auto kChannels3x3 = channel_table<9>();
constexpr auto kChannels5x5 = channel_table<25>();
constexpr auto kChannels7x7 = channel_table<49>();
constexpr auto kChannelsAny = channel_table<0>();
constexpr auto kBlocks3x3 = block_table<9>();
constexpr auto kBlocks5x5 = block_table<25>();
constexpr auto kBlocks7x7 = block_table<49>();
constexpr auto kBlocksAny = block_table<0>();

}  // namespace

const BlockTable& blocks(int64_t taps) { return taps == 9 ? kBlocks3x3 : taps == 25 ? kBlocks5x5 : taps == 49 ? kBlocks7x7 : kBlocksAny; }

const ChannelTable& channel_blocks(int64_t taps) {
  return taps == 9 ? kChannels3x3 : taps == 25 ? kChannels5x5 : taps == 49 ? kChannels7x7 : kChannelsAny;
}

#if defined(__AVX2__) && defined(__FMA__)

bool in_lanes(int64_t mg, int64_t out_w) { return mg % kLanes == 0 && out_w > 2 * kLanes; }

bool depthwise_in_lanes(int64_t cg, int64_t mg, int64_t group) { return cg == 1 && mg == 1 && group >= kLanes; }

const LanesTable& lanes_blocks(int64_t taps, bool interleaved) {
  return interleaved ? lanes_table<true>(taps) : lanes_table<false>(taps);
}

void interleave8(const float* src, int64_t plane, int64_t count, float* dst) {
  int64_t q = 0;
  for (; q + kLanes <= count; q += kLanes) {
    __m256 r[kLanes];
    for (int ch = 0; ch < kLanes; ++ch) r[ch] = _mm256_loadu_ps(src + ch * plane + q);
    transpose8(r);
    for (int j = 0; j < kLanes; ++j) _mm256_storeu_ps(dst + (q + j) * kLanes, r[j]);
  }
  for (; q < count; ++q) {
    for (int ch = 0; ch < kLanes; ++ch) dst[q * kLanes + ch] = src[ch * plane + q];
  }
}

#else

bool in_lanes(int64_t, int64_t) { return false; }

bool depthwise_in_lanes(int64_t, int64_t, int64_t) { return false; }

#endif

}  // namespace vn::ops::direct
