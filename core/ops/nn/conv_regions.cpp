// SPDX-License-Identifier: Apache-2.0
#include "core/ops/nn/conv_regions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/ops/kernel_util.h"
#include "core/ops/nn/conv_im2col.h"
#include "core/ops/scratch.h"
#include "core/ops/sgemm.h"
#include "core/ops/sgemm_driver.h"

namespace vn::ops {
namespace {

// A run of output positions along one axis whose live taps are [k0, k1).
struct Run {
  int64_t o0, o1, k0, k1;
};

constexpr size_t kMaxRuns = 4;
// Input channels per chunk of a block's weight gather: 12 rows x 64 channels x up to 27 live taps
// (81 KiB at most; 12 KiB for DeepLabV3's 3 x 3 kernels).
constexpr int64_t kGatherChannels = 64;
// Row blocks of output channels a job gathers and multiplies at most (96 rows).
constexpr int64_t kRegionBlocks = 8;

/// The runs of axis i, or none when some position has no live tap.
std::vector<Run> axis_runs(const WindowGeometry& g, size_t i) {
  std::vector<Run> runs;
  const int64_t d = g.dilations[i], s = g.strides[i];
  for (int64_t o = 0; o < g.out[i]; ++o) {
    // Tap k reads input position start + k * d.
    const int64_t start = o * s - g.pads_begin[i];
    int64_t k0 = 0, k1 = g.kernel[i];
    while (k0 < k1 && start + k0 * d < 0) ++k0;
    while (k1 > k0 && start + (k1 - 1) * d >= g.in[i]) --k1;
    if (k0 == k1) return {};
    if (!runs.empty() && runs.back().k0 == k0 && runs.back().k1 == k1) {
      runs.back().o1 = o + 1;
    } else {
      runs.push_back({o, o + 1, k0, k1});
    }
  }
  return runs;
}

}  // namespace

std::vector<ConvRegion> padding_regions(const WindowGeometry& g) {
  const size_t rank = g.rank();
  if (rank == 0 || shape_numel(g.out) == 0) return {};
  std::vector<std::vector<Run>> runs(rank);
  bool one_box = true;
  // Multiply-adds per input channel and output channel, all taps and live taps only.
  int64_t full = 1, live = 1;
  for (size_t i = 0; i < rank; ++i) {
    runs[i] = axis_runs(g, i);
    if (runs[i].empty()) return {};
    one_box = one_box && runs[i].size() == 1;
    int64_t axis_live = 0;
    for (const Run& r : runs[i]) axis_live += (r.o1 - r.o0) * (r.k1 - r.k0);
    full *= g.out[i] * g.kernel[i];
    live *= axis_live;
  }
  if (live == full) return {};
  if (!one_box) {
    for (const auto& r : runs) {
      if (r.size() > kMaxRuns) return {};
    }
    if (4 * live > 3 * full) return {};
  }
  // The boxes: one run per axis, the last axis's runs varying fastest.
  std::vector<ConvRegion> regions;
  std::vector<size_t> at(rank, 0);
  for (;;) {
    ConvRegion region;
    region.geo = g;
    region.out_begin.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      const Run& r = runs[i][at[i]];
      WindowGeometry& b = region.geo;
      region.out_begin[i] = r.o0;
      b.out[i] = r.o1 - r.o0;
      b.kernel[i] = r.k1 - r.k0;
      // Output r.o0's tap r.k0 reads input r.o0 * s - pads_begin + r.k0 * d.
      b.pads_begin[i] = g.pads_begin[i] - r.o0 * g.strides[i] - r.k0 * g.dilations[i];
      // One tap left: its dilation means nothing, and im2col copies rows of a dilation of 1 whole.
      if (b.kernel[i] == 1) b.dilations[i] = 1;
      b.pads_end[i] = (b.out[i] - 1) * b.strides[i] + b.effective_kernel(i) - g.in[i] - b.pads_begin[i];
    }
    // The live taps' indices into the full kernel, row-major.
    const int64_t count = shape_numel(region.geo.kernel);
    region.taps.resize(static_cast<size_t>(count));
    for (int64_t t = 0; t < count; ++t) {
      int64_t index = 0;
      for (size_t i = 0, rest = static_cast<size_t>(t); i < rank; ++i) {
        // Digit i of t in the box's kernel, most significant first.
        int64_t below = 1;
        for (size_t j = i + 1; j < rank; ++j) below *= region.geo.kernel[j];
        const int64_t digit = static_cast<int64_t>(rest) / below;
        rest -= static_cast<size_t>(digit * below);
        index = index * g.kernel[i] + runs[i][at[i]].k0 + digit;
      }
      region.taps[static_cast<size_t>(t)] = index;
    }
    regions.push_back(std::move(region));
    size_t i = rank;
    while (i > 0 && ++at[i - 1] == runs[i - 1].size()) at[--i] = 0;
    if (i == 0) break;
  }
  return regions;
}

namespace {

/// Whether no element of w[0, n) is infinite or NaN (all exponent bits set).
bool all_finite(const float* w, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, w + i, sizeof bits);
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

/// Everything of `g` that decides its regions, for the key of their kept weights.
std::string geometry_key(const WindowGeometry& g) {
  return fmt::format("{}/{}/{}/{}/{}/{}", fmt::join(g.in, ","), fmt::join(g.kernel, ","), fmt::join(g.strides, ","),
                     fmt::join(g.dilations, ","), fmt::join(g.pads_begin, ","), fmt::join(g.pads_end, ","));
}

/// Writes the live weights of `region` for row blocks [blk0, blk1) of group gi (mg output
/// channels of cg input channels x `taps` taps in w) into `out` in sgemm.h's packed layout for A,
/// block after block (cg x live taps deep each); rows past mg are zeros. Row by row, each weight
/// row read front to back, a chunk of input channels at a time so that the packed rows being
/// interleaved stay in L1.
void gather_live(const float* w, int64_t gi, int64_t mg, int64_t cg, int64_t taps, const ConvRegion& region,
                 int64_t blk0, int64_t blk1, float* out) {
  const std::vector<int64_t>& live = region.taps;
  const auto l = static_cast<int64_t>(live.size());
  for (int64_t blk = blk0; blk < blk1; ++blk) {
    float* packed = out + (blk - blk0) * cg * l * kPackRows;
    for (int64_t ch0 = 0; ch0 < cg; ch0 += kGatherChannels) {
      const int64_t ch1 = std::min(cg, ch0 + kGatherChannels);
      for (int64_t row = 0; row < kPackRows; ++row) {
        const int64_t oc = blk * kPackRows + row;
        float* a = packed + ch0 * l * kPackRows + row;
        if (oc >= mg) {
          for (int64_t i = 0; i < (ch1 - ch0) * l; ++i) a[i * kPackRows] = 0.0f;
          continue;
        }
        const float* src = w + ((gi * mg + oc) * cg + ch0) * taps;
        for (int64_t ch = ch0; ch < ch1; ++ch, src += taps) {
          for (int64_t t = 0; t < l; ++t, a += kPackRows) *a = src[live[static_cast<size_t>(t)]];
        }
      }
    }
  }
}

}  // namespace

bool conv_float32_by_regions(const WindowGeometry& geo, int64_t n, int64_t c, int64_t m, int64_t group, const float* x,
                             const float* w, const float* bias, float* y, int threads,
                             const std::function<void(std::span<float>)>* transform, const Tensor* w_constant,
                             Narrow kept_as) {
  const std::vector<ConvRegion> regions = padding_regions(geo);
  if (regions.empty()) return false;
  const int64_t cg = c / group, mg = m / group, taps = shape_numel(geo.kernel);
  const int64_t in_size = shape_numel(geo.in), out_size = shape_numel(geo.out);
  const auto count = static_cast<int64_t>(regions.size());
  // Per box: its positions, rows of im2col (cg x live taps) and where its panels start for each
  // (image, group) plane; planes one after another.
  std::vector<int64_t> positions(regions.size()), depth(regions.size()), at(regions.size() + 1, 0);
  // Per box, its geometry in 3-D and its first output position there.
  std::vector<WindowGeometry> box_geo(regions.size());
  std::vector<Shape> begin(regions.size());
  int64_t most_positions = 0, most_depth = 0;
  for (size_t r = 0; r < regions.size(); ++r) {
    box_geo[r] = lift_to_3d(regions[r].geo);
    begin[r].assign(3 - regions[r].out_begin.size(), 0);
    begin[r].insert(begin[r].end(), regions[r].out_begin.begin(), regions[r].out_begin.end());
    positions[r] = shape_numel(regions[r].geo.out);
    depth[r] = cg * static_cast<int64_t>(regions[r].taps.size());
    at[r + 1] = at[r] + packed_b_size(depth[r], positions[r]);
    most_positions = std::max(most_positions, positions[r]);
    most_depth = std::max(most_depth, depth[r]);
  }
  const int64_t planes = n * group, per_plane = at.back();
  const WindowGeometry full = lift_to_3d(geo);
  threads = threads_for_work(threads, planes * mg * per_plane, kProductGrain);
  Scratch<float> panel_scratch(static_cast<size_t>(planes * per_plane), ScratchSlot::kSharedPanels);
  float* panels = panel_scratch.data();
  const int64_t row_blocks = (mg + kPackRows - 1) / kPackRows;
  const int64_t chunks = std::min<int64_t>(cg, 4 * threads);
  std::atomic<bool> non_finite{false};
  // Each box's im2col, in chunks of input channels.
  parallel_for(threads, planes * count * chunks, [&](int64_t job) {
    const int64_t plane = job / (count * chunks), r = job / chunks % count, part = job % chunks;
    const int64_t img = plane / group, gi = plane % group;
    const int64_t ch0 = cg * part / chunks, ch1 = cg * (part + 1) / chunks;
    const auto ru = static_cast<size_t>(r);
    const auto live = static_cast<int64_t>(regions[ru].taps.size());
    im2col_panels(x + (img * c + gi * cg + ch0) * in_size, ch1 - ch0, box_geo[ru], 0, positions[ru], ch0 * live,
                  depth[ru], panels + plane * per_plane + at[ru]);
  });
  // Constant weights are gathered once, every box's for every row block (group by group, box by
  // box: box r of group gi at (gi * row_blocks * kPackRows * sum of depths) + row_blocks *
  // kPackRows * (depths before r)), and kept; a non-finite weight keeps nothing.
  std::vector<int64_t> gathered_at(regions.size() + 1, 0);
  for (size_t r = 0; r < regions.size(); ++r) gathered_at[r + 1] = gathered_at[r] + row_blocks * kPackRows * depth[r];
  std::shared_ptr<const float[]> gathered;
  if (w_constant && (!transform || kept_as != Narrow::kNone)) {
    gathered = packed_weights().derived_weights(
        *w_constant, w,
        fmt::format("regions:{}:{}:{}:{}:{}", group, mg, cg, geometry_key(geo), transform ? narrow_name(kept_as) : ""),
        group * gathered_at.back(), [&](float* out) {
          if (!all_finite(w, group * mg * cg * taps)) return false;
          std::atomic<bool> rounds{true};
          parallel_for(threads, group * count, [&](int64_t job) {
            const int64_t gi = job / count, r = job % count;
            const int64_t size = row_blocks * kPackRows * depth[static_cast<size_t>(r)];
            float* box_weights = out + gi * gathered_at.back() + gathered_at[static_cast<size_t>(r)];
            gather_live(w, gi, mg, cg, taps, regions[static_cast<size_t>(r)], 0, row_blocks, box_weights);
            if (!transform) return;
            // Kept only when the transform is the rounding to kept_as, as PackedWeights' rounded
            // entries: their key names no other transform.
            std::vector<uint16_t> narrowed(static_cast<size_t>(size));
            std::vector<float> want(static_cast<size_t>(size));
            narrow(kept_as, box_weights, size, narrowed.data());
            widen(kept_as, narrowed.data(), size, want.data());
            (*transform)(std::span<float>(box_weights, static_cast<size_t>(size)));
            if (std::memcmp(want.data(), box_weights, want.size() * sizeof(float)) != 0) rounds = false;
          });
          return rounds.load();
        });
  }
  // Chunks of output channels, up to kRegionBlocks row blocks each: their live weights (gathered
  // here box by box into sgemm's packed layout, unless kept), then each box's product into a
  // buffer and its rows into y.
  // Of one group, as many chunks as threads (or a multiple) when they can be even.
  int64_t per_group = std::max((row_blocks + kRegionBlocks - 1) / kRegionBlocks, (threads + group - 1) / group);
  if (group == 1) per_group = (per_group + threads - 1) / threads * threads;
  per_group = std::min(row_blocks, per_group);
  parallel_loop(threads, group * per_group, [&](LoopIndices& claims) {
    std::optional<Scratch<float>> block, box;
    for (int64_t job; claims.next(job);) {
      const int64_t gi = job / per_group, chunk = job % per_group;
      const int64_t blk0 = row_blocks * chunk / per_group, blk1 = row_blocks * (chunk + 1) / per_group;
      const int64_t r0 = blk0 * kPackRows, rows = std::min(blk1 * kPackRows, mg) - r0;
      if (!box) {
        const int64_t most_rows = (row_blocks + per_group - 1) / per_group * kPackRows;
        if (!gathered) block.emplace(static_cast<size_t>(most_rows * most_depth), ScratchSlot::kWeights);
        box.emplace(static_cast<size_t>(most_rows * most_positions), ScratchSlot::kTile);
      }
      // Checked here rather than before, where it was a pass over all weights from memory of
      // its own: this one brings the chunk's rows into cache for the gathers.
      if (!gathered && !all_finite(w + (gi * mg + r0) * cg * taps, rows * cg * taps)) {
        non_finite.store(true, std::memory_order_relaxed);
        continue;
      }
      for (size_t r = 0; r < regions.size(); ++r) {
        const float* a = nullptr;
        if (gathered) {
          a = gathered.get() + gi * gathered_at.back() + gathered_at[r] + blk0 * kPackRows * depth[r];
        } else {
          gather_live(w, gi, mg, cg, taps, regions[r], blk0, blk1, block->data());
          if (transform) {
            (*transform)(std::span<float>(block->data(), static_cast<size_t>((blk1 - blk0) * kPackRows * depth[r])));
          }
          a = block->data();
        }
        const WindowGeometry& g = box_geo[r];
        const Shape& b0 = begin[r];
        for (int64_t img = 0; img < n; ++img) {
          const int64_t plane = img * group + gi;
          sgemm_packed(rows, positions[r], depth[r], a, 0, panels + plane * per_plane + at[r],
                       bias ? bias + gi * mg + r0 : nullptr, box->data(), positions[r]);
          for (int64_t row = 0; row < rows; ++row) {
            const float* src = box->data() + row * positions[r];
            float* dst = y + (img * m + gi * mg + r0 + row) * out_size;
            for (int64_t z = 0; z < g.out[0]; ++z) {
              for (int64_t h = 0; h < g.out[1]; ++h, src += g.out[2]) {
                std::copy_n(src, g.out[2], dst + ((b0[0] + z) * full.out[1] + b0[1] + h) * full.out[2] + b0[2]);
              }
            }
          }
        }
      }
    }
  });
  return !non_finite.load();
}

}  // namespace vn::ops
