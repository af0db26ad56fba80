// SPDX-License-Identifier: Apache-2.0
// conv_direct (conv_direct.h). A task (image, group, range of output rows) first copies its
// group's input channels into a scratch buffer with the padding written out as zeros and every
// row split into `stride` phases (stride 2: its even columns, then its odd ones), so that any tap
// of consecutive output columns reads consecutive floats, whatever the stride, the dilation or the
// edge. Blocks of output rows x columns, of channels, or of eight channels in the lanes of the
// vectors (conv_direct_blocks.h) are then summed in registers over all the taps, from a table of
// where each tap reads.
#include "core/ops/nn/conv_direct.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "core/common/parallel.h"
#include "core/ops/nn/conv_direct_blocks.h"
#include "core/ops/scratch.h"

namespace vn::ops {
namespace {

using direct::kChannels;
using direct::kLanes;
using direct::kMaxBlock;
using direct::kMaxChannelBlock;
using direct::kMaxVectors;

// A task's padded copy of its input, at most (unless one output row needs more): within L2 while
// its output channels read it (a stem's 24 channels over 224 x 224: 0.56 -> 0.46 ms against 1
// MiB), and never a large image's worth per thread.
constexpr int64_t kMaxCopyBytes = int64_t{1} << 18;

/// Where a task's padded input lies in its scratch buffer (one channel after another, each
/// `depth` slices of padded rows, each row `phases` runs of `row_w` floats) and where each tap
/// reads it, relative to the position of its output.
struct Layout {
  WindowGeometry g;  // lifted to 3-D
  int64_t cg = 0, mg = 0, taps = 0;
  int64_t row_w = 0, row_stride = 0;                // one phase of a padded row; a whole row
  int64_t chunk = 0, chunks = 0;                    // output rows per task; tasks per (image, group)
  int64_t slice = 0, plane = 0;                     // one depth slice of a task's rows; one channel
  std::vector<int64_t> offsets;                     // cg * taps, in (ic, kd, kh, kw) order
  std::vector<std::pair<int64_t, int64_t>> inside;  // per phase: the columns [lo, hi) that hold input
};

int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

Layout make_layout(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, int threads) {
  Layout l;
  l.g = lift_to_3d(geo);
  const WindowGeometry& g = l.g;
  l.cg = c / group;
  l.mg = m / group;
  l.taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t sw = g.strides[2];
  // Column j of phase p is padded column j * sw + p: output column ow's tap kw reads phase
  // (kw * dw) % sw at j = ow + (kw * dw) / sw; a block's last vector reads up to 7 columns past
  // the output's width.
  l.row_w = ceil_div(g.out[2], kLanes) * kLanes + (g.kernel[2] - 1) * g.dilations[2] / sw + 1;
  l.row_stride = sw * l.row_w;
  // With fewer (image, group) pairs than twice the threads, their output rows are cut into
  // chunks as well; each chunk copies the input rows it reads. So are the rows of large planes,
  // so that a task's copy stays within kMaxCopyBytes.
  const int64_t pairs = n * group;
  const int64_t depth = (g.out[0] - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1;
  const int64_t all_rows = (g.out[1] - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
  const int64_t copy_bytes = l.cg * depth * all_rows * l.row_stride * static_cast<int64_t>(sizeof(float));
  const int64_t wanted = std::max(threads > 1 && pairs < 2 * threads ? ceil_div(2 * threads, pairs) : 1,
                                  ceil_div(copy_bytes, kMaxCopyBytes));
  l.chunk = ceil_div(g.out[1], std::min(wanted, g.out[1]));
  l.chunks = ceil_div(g.out[1], l.chunk);
  l.slice = ((l.chunk - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1) * l.row_stride;
  l.plane = depth * l.slice;
  for (int64_t ic = 0; ic < l.cg; ++ic) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t col = kw * g.dilations[2];
          l.offsets.push_back(ic * l.plane + kd * g.dilations[0] * l.slice + kh * g.dilations[1] * l.row_stride +
                              col % sw * l.row_w + col / sw);
        }
      }
    }
  }
  const int64_t pad_w = g.pads_begin[2], in_w = g.in[2];
  for (int64_t p = 0; p < sw; ++p) {
    const int64_t lo = std::min(ceil_div(pad_w - p, sw), l.row_w);
    l.inside.emplace_back(lo, std::clamp(ceil_div(pad_w + in_w - p, sw), lo, l.row_w));
  }
  return l;
}

#if defined(__AVX2__) && defined(__FMA__)

/// The vector at p with the lanes from `n` on zeroed, reading no float past p[n - 1] where p + 8
/// passes `end` (masked loads cost more than loads and a mask).
__m256 load_first(const float* p, int64_t n, const float* end) {
  const __m256i mask = direct::first_lanes(n);
  if (p + kLanes <= end) return _mm256_and_ps(_mm256_loadu_ps(p), _mm256_castsi256_ps(mask));
  return _mm256_maskload_ps(p, mask);
}

/// dst[j] = src[j * Step] for j in [0, n), Step 1 or 2, reading no float at or past `end`. Whole
/// vectors are stored: up to 7 floats past dst[n - 1] are written as zeros (the caller's rows
/// leave room for them, see fill_padded).
template <int Step>
void copy_strided(const float* src, int64_t n, float* dst, const float* end) {
  if (n <= 0) return;  // src may then lie before the row
  int64_t j = 0;
  if constexpr (Step == 1) {
    for (; j + kLanes <= n; j += kLanes) _mm256_storeu_ps(dst + j, _mm256_loadu_ps(src + j));
    if (j < n) _mm256_storeu_ps(dst + j, load_first(src + j, n - j, end));
    return;
  }
  // Two vectors of input make one of output: the even lanes of each, then the 64-bit pairs
  // reordered (a0 a2 b0 b2 | a4 a6 b4 b6 -> a0 a2 a4 a6 b0 b2 b4 b6).
  const auto even = [](__m256 a, __m256 b) {
    const __m256 lanes = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(lanes), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  // A whole vector reads one float past its last output's: the last one reads 2 (n - j) - 1.
  for (; j + kLanes < n; j += kLanes) {
    _mm256_storeu_ps(dst + j, even(_mm256_loadu_ps(src + 2 * j), _mm256_loadu_ps(src + 2 * j + kLanes)));
  }
  const int64_t reads = 2 * (n - j) - 1;
  const float* p = src + 2 * j;
  _mm256_storeu_ps(dst + j, even(load_first(p, reads, end), load_first(p + kLanes, reads - kLanes, end)));
}

#else

template <int Step>
void copy_strided(const float* src, int64_t n, float* dst, const float*) {
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j * Step];
}

#endif

/// Copies `rows` input rows (`in_w` floats apart from src, the first one's column -pad_w) into
/// padded rows (`row_stride` apart from dst): the columns [lo, hi) of each phase that hold input,
/// and zeros past them. Step is the stride along the width (0: any, given by `phases`).
template <int Step>
void copy_rows(const Layout& l, const float* src, int64_t rows, int64_t in_w, float* dst, const float* end) {
  const int64_t phases = Step > 0 ? Step : static_cast<int64_t>(l.inside.size());
  for (int64_t y = 0; y < rows; ++y, src += in_w, dst += l.row_stride) {
    for (int64_t p = 0; p < phases; ++p) {
      // Phase p's column j reads input column j * phases + p - pad_w.
      const auto [lo, hi] = l.inside[static_cast<size_t>(p)];
      if constexpr (Step > 0) {
        copy_strided<Step>(src + lo * Step + p, hi - lo, dst + p * l.row_w + lo, end);
      } else {
        for (int64_t j = lo; j < hi; ++j) dst[p * l.row_w + j] = src[j * phases + p];
      }
    }
  }
}

/// Copies the group's cg input channels (`in_size` floats apart from xg; none read at or past
/// `end`) into `buf`: the padded rows that output rows [oh0, oh1) read, of every depth slice.
/// Only the columns of each phase that hold input are written (zeros in the rows of the top,
/// bottom, front and back padding), and zeros past them: the others are the left and right
/// padding, which the caller zeroed once for all its tasks. The rows that hold input are written
/// in the order of their addresses, so that the zeros a row's last vector writes into the next
/// row's columns are overwritten by that row.
void fill_padded(const Layout& l, const float* xg, int64_t in_size, const float* end, int64_t oh0, int64_t oh1,
                 float* buf) {
  const WindowGeometry& g = l.g;
  const int64_t in_h = g.in[1], in_w = g.in[2], pad_h = g.pads_begin[1];
  const int64_t y0 = oh0 * g.strides[1], y1 = (oh1 - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1;
  // Padded rows [ya, yb) hold input rows [ya - pad_h, yb - pad_h).
  const int64_t ya = std::clamp(pad_h, y0, y1), yb = std::clamp(pad_h + in_h, ya, y1);
  const auto zero_rows = [&](float* dst, int64_t rows) {
    for (int64_t y = 0; y < rows; ++y, dst += l.row_stride) {
      for (size_t p = 0; p < l.inside.size(); ++p) {
        std::fill(dst + static_cast<int64_t>(p) * l.row_w + l.inside[p].first,
                  dst + static_cast<int64_t>(p) * l.row_w + l.inside[p].second, 0.0f);
      }
    }
  };
  const int64_t depth = l.plane / l.slice;
  for (int64_t ic = 0; ic < l.cg; ++ic) {
    for (int64_t z = 0; z < depth; ++z) {
      float* dst = buf + ic * l.plane + z * l.slice;
      const int64_t id = z - g.pads_begin[0];
      if (id < 0 || id >= g.in[0]) {
        zero_rows(dst, y1 - y0);
        continue;
      }
      zero_rows(dst, ya - y0);
      const float* src = xg + ic * in_size + (id * in_h + ya - pad_h) * in_w - g.pads_begin[2];
      float* rows = dst + (ya - y0) * l.row_stride;
      switch (g.strides[2]) {
        case 1:
          copy_rows<1>(l, src, yb - ya, in_w, rows, end);
          break;
        case 2:
          copy_rows<2>(l, src, yb - ya, in_w, rows, end);
          break;
        default:
          copy_rows<0>(l, src, yb - ya, in_w, rows, end);
          break;
      }
      zero_rows(dst + (yb - y0) * l.row_stride, y1 - yb);
    }
  }
}

/// The weights of `channels` output channels (`count` each, channel after channel) as the lanes
/// blocks read them: eight channels at a time, by tap (tap i's eight at 8 i of their block).
std::vector<float> by_tap(const float* w, int64_t channels, int64_t count) {
  std::vector<float> out(static_cast<size_t>(channels * count));
  for (int64_t c8 = 0; c8 < channels; c8 += kLanes) {
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t o = 0; o < kLanes; ++o) out[static_cast<size_t>(c8 * count + i * kLanes + o)] = w[(c8 + o) * count + i];
    }
  }
  return out;
}

/// Calls f(in, at, r, v, last) on each block of output rows [oh0, oh1), every depth slice, in
/// blocks of up to `rows` rows of `per_row` vectors of 8 positions: `in` counts floats of l's
/// padded copy (of one channel) up to the block's first input, `at` floats of an output plane up
/// to its first output; the block is r rows of v vectors, the last one `last` positions wide.
template <typename F>
void for_each_block(const Layout& l, int64_t oh0, int64_t oh1, int64_t rows, int64_t per_row, F&& f) {
  const WindowGeometry& g = l.g;
  const int64_t out_h = g.out[1], out_w = g.out[2];
  const int64_t vectors = ceil_div(out_w, kLanes);
  const int last_width = static_cast<int>(out_w - (vectors - 1) * kLanes);
  const int64_t row_step = g.strides[1] * l.row_stride;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    for (int64_t oh = oh0; oh < oh1; oh += rows) {
      const int64_t r = std::min(rows, oh1 - oh);
      const int64_t in = od * g.strides[0] * l.slice + (oh - oh0) * row_step;
      const int64_t at = (od * out_h + oh) * out_w;
      for (int64_t v0 = 0; v0 < vectors; v0 += per_row) {
        const int64_t v = std::min(per_row, vectors - v0);
        f(in + v0 * kLanes, at + v0 * kLanes, r, v, v0 + v == vectors ? last_width : kLanes);
      }
    }
  }
}

#if defined(__AVX2__) && defined(__FMA__)

/// Output rows [oh0, oh1) of eight depthwise channels (their weights by tap in `w`, tap i's eight
/// at w + 8 i; their planes `out_size` apart from y) from `lanes`, the eight channels' padded
/// copies interleaved (l's layout for one channel, each float eight). `off` holds l's tap
/// offsets times eight.
void depthwise_rows(const Layout& l, const float* lanes, const int64_t* off, int64_t oh0, int64_t oh1, const float* w,
                    const float* bias, float* y, int64_t out_size) {
  const direct::LanesTable& table = direct::lanes_blocks(l.taps, true);
  for_each_block(l, oh0, oh1, 1, 1, [&](int64_t in, int64_t at, int64_t, int64_t, int last) {
    table[static_cast<size_t>(last - 1)](lanes + in * kLanes, off, w, l.taps, bias, y + at, out_size);
  });
}

#endif

/// Output rows [oh0, oh1) of every depth slice of the group's mg output channels, from `buf`.
/// `lanes_w`, when given, holds the group's weights as lanes_block reads them, each block of eight
/// channels' count x 8 after the previous block's.
void compute_rows(const Layout& l, const float* buf, int64_t oh0, int64_t oh1, const float* w, const float* bias,
                  float* y, const float* lanes_w) {
  const WindowGeometry& g = l.g;
  const int64_t vectors = ceil_div(g.out[2], kLanes);
  const int64_t count = l.cg * l.taps;
  const int64_t row_step = g.strides[1] * l.row_stride;
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  int64_t o = 0;
#if defined(__AVX2__) && defined(__FMA__)
  if (lanes_w != nullptr) {
    const direct::LanesTable& table = direct::lanes_blocks(l.taps, false);
    for (; o + kLanes <= l.mg; o += kLanes) {
      const float* wl = lanes_w + o * count;
      const float* bo = bias ? bias + o : nullptr;
      float* yo = y + o * plane;
      for_each_block(l, oh0, oh1, 1, 1, [&](int64_t in, int64_t at, int64_t, int64_t, int last) {
        table[static_cast<size_t>(last - 1)](buf + in, l.offsets.data(), wl, count, bo, yo + at, plane);
      });
    }
  }
#else
  (void)lanes_w;  // null: in_lanes is false without AVX2
#endif
  if (l.mg >= kChannels) {
    const direct::ChannelTable& table = direct::channel_blocks(l.taps);
    const int64_t per_row = std::min<int64_t>(vectors, kMaxChannelBlock);
    for (; o + kChannels <= l.mg; o += kChannels) {
      const float* wo = w + o * count;
      const float* bo = bias ? bias + o : nullptr;
      float* yo = y + o * plane;
      for_each_block(l, oh0, oh1, kMaxChannelBlock / per_row, per_row,
                     [&](int64_t in, int64_t at, int64_t r, int64_t v, int last) {
                       table[static_cast<size_t>(v - 1)][static_cast<size_t>(r - 1)](
                           buf + in, row_step, l.offsets.data(), wo, count, count, bo, yo + at, plane, g.out[2], last);
                     });
    }
  }
  const direct::BlockTable& table = direct::blocks(l.taps);
  const int64_t per_row = std::min<int64_t>(vectors, kMaxVectors);
  for (; o < l.mg; ++o) {
    const float* wo = w + o * count;
    const float b = bias ? bias[o] : 0.0f;
    float* yo = y + o * plane;
    for_each_block(l, oh0, oh1, kMaxBlock / per_row, per_row, [&](int64_t in, int64_t at, int64_t r, int64_t v, int last) {
      table[static_cast<size_t>(v - 1)][static_cast<size_t>(r - 1)](buf + in, row_step, l.offsets.data(), wo, count, b,
                                                                    yo + at, g.out[2], last);
    });
  }
}

}  // namespace

bool conv_direct_suits(int64_t group, int64_t cg, int64_t mg, std::span<const int64_t> kernel,
                       std::span<const int64_t> dilations) {
  // Measured against im2col + GEMM on one thread (3x3 to 7x7 windows, 7x7 to 112x112 outputs):
  // 1.15-1.4x faster at 8 channels in and out per group (RegNetY's), 2-3x at 4; even at 12, 0.9x
  // at 16 in and out. A network's stem on Zen 3 (3 channels in, 3 x 3 at stride 2): 1.6x faster
  // at 24 out over 224 x 224, 2.2x at 16 over 320 x 320, 1.4x at 32; ResNet's 7 x 7 to 64 out
  // 1.2x slower.
  if (cg == 1 || (group > 1 && cg <= 16 && mg <= 8) || (group == 1 && cg <= 4 && mg <= 32)) return true;
  // One group of few output channels over a 3 x 3 window: the GEMM's im2col copies each input
  // value nine times for only mg multiply-adds each, and its stores were 60% of its time on
  // Inception-v3's 32 -> 32 over 147 x 147 (Zen 3, one thread: 9.0 -> 6.4 ms directly; 32 -> 64
  // 14.2 -> 12.3; ResNet's 64 -> 64 over 56 x 56 3.6 -> 3.2, DenseNet's 128 -> 32 4.0 -> 3.4, at
  // stride 2 1.18 -> 1.12; at two threads 0.97-1.0x on DenseNet's over 28 x 28, faster on the
  // others). Slower directly: 96 or more output channels (1.1-1.25x), 5 x 5 windows (1.1x), 1 x 1
  // (1.7x). Dilated windows leave taps that read only padding to conv_float32's boxes of live taps.
  const bool three_by_three = std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1 || k == 3; }) &&
                              std::count(kernel.begin(), kernel.end(), 3) == 2;
  const bool undilated = std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d == 1; });
  return group == 1 && mg <= 64 && three_by_three && undilated;
}

void conv_direct(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                 const float* w, const float* bias, float* y, int threads,
                 const std::function<void(std::span<float>)>* transform) {
  const Layout l = make_layout(geo, n, c, m, group, threads);
  const int64_t in_size = shape_numel(geo.in), out_size = shape_numel(geo.out);
  // Depthwise channels eight at a time where they make blocks of eight (as groups of 8 in and 8
  // out: l8's copies hold the eight), the rest one at a time.
  const int64_t blocks8 = direct::depthwise_in_lanes(l.cg, l.mg, group) ? group / kLanes : 0;
  std::optional<Layout> l8;
  std::vector<float> w8;
  std::vector<int64_t> off8;
  if (blocks8 > 0) {
    l8 = make_layout(geo, n, blocks8 * kLanes, blocks8 * kLanes, blocks8, threads);
    for (int64_t i = 0; i < l.taps; ++i) off8.push_back(l8->offsets[static_cast<size_t>(i)] * kLanes);
    w8 = by_tap(w, blocks8 * kLanes, l.taps);
  }
  const int64_t first = blocks8 * kLanes;  // the first group summed alone
  const int64_t tasks8 = blocks8 > 0 ? n * blocks8 * l8->chunks : 0;
  const int64_t tasks = tasks8 + n * (group - first) * l.chunks;
  // The weights by tap, eight channels at a time (never across groups: mg is a multiple of 8).
  const std::vector<float> lanes = direct::in_lanes(l.mg, l.g.out[2]) ? by_tap(w, m, l.cg * l.taps) : std::vector<float>();
  parallel_loop(threads, tasks, [&](LoopIndices& claims) {
    std::optional<Scratch<float>> scratch, scratch8;
    for (int64_t task; claims.next(task);) {
#if defined(__AVX2__) && defined(__FMA__)
      if (task < tasks8) {
        const int64_t copies = kLanes * l8->plane;
        if (!scratch8) {
          // The copies (zeros past the last as in `scratch`), then them interleaved.
          scratch8.emplace(static_cast<size_t>(2 * copies + kLanes), ScratchSlot::kInterleaved);
          std::fill_n(scratch8->data(), copies + kLanes, 0.0f);
        }
        const int64_t pair = task / l8->chunks, img = pair / blocks8, b = pair % blocks8;
        const int64_t oh0 = task % l8->chunks * l8->chunk, oh1 = std::min(oh0 + l8->chunk, l.g.out[1]);
        fill_padded(*l8, x + (img * c + b * kLanes) * in_size, in_size, x + n * c * in_size, oh0, oh1,
                    scratch8->data());
        if (transform) (*transform)(std::span<float>(scratch8->data(), static_cast<size_t>(copies)));
        float* lanes8 = scratch8->data() + copies + kLanes;
        direct::interleave8(scratch8->data(), l8->plane, l8->plane, lanes8);
        depthwise_rows(*l8, lanes8, off8.data(), oh0, oh1, w8.data() + b * kLanes * l.taps,
                       bias ? bias + b * kLanes : nullptr, y + (img * m + b * kLanes) * out_size, out_size);
        continue;
      }
#endif
      if (!scratch) {
        // The last row's copy may write zeros up to 7 floats past the end (copy_strided).
        scratch.emplace(static_cast<size_t>(l.cg * l.plane + kLanes), ScratchSlot::kTile);
        // The left and right padding, which no task writes but as zeros.
        std::fill_n(scratch->data(), l.cg * l.plane + kLanes, 0.0f);
      }
      const int64_t pair = (task - tasks8) / l.chunks, img = pair / (group - first), gi = first + pair % (group - first);
      const int64_t oh0 = (task - tasks8) % l.chunks * l.chunk, oh1 = std::min(oh0 + l.chunk, l.g.out[1]);
      fill_padded(l, x + (img * c + gi * l.cg) * in_size, in_size, x + n * c * in_size, oh0, oh1, scratch->data());
      if (transform) (*transform)(std::span<float>(scratch->data(), static_cast<size_t>(l.cg * l.plane)));
      compute_rows(l, scratch->data(), oh0, oh1, w + gi * l.mg * l.cg * l.taps, bias ? bias + gi * l.mg : nullptr,
                   y + (img * m + gi * l.mg) * out_size, lanes.empty() ? nullptr : lanes.data() + gi * l.mg * l.cg * l.taps);
    }
  });
}

}  // namespace vn::ops
