// SPDX-License-Identifier: Apache-2.0
// im2col into sgemm.h's packed panels (conv_im2col.h): gathers with lane masks under AVX2.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/ops/nn/conv_im2col.h"
#include "core/ops/sgemm.h"

namespace vn::ops {
namespace {

#if defined(__AVX2__)

/// Where the positions of one tile of output columns read the input, panel by panel: for each
/// position its input offset at kernel offset 0 before padding, and for each kernel offset along
/// each spatial dim a bit mask of the positions of each panel that land inside the input (none
/// past the tile's end). A panel row of the im2col matrix is then its kPackCols positions read at
/// offset + the kernel offset's shift, masked: contiguous reads when the panel's positions are
/// consecutive in the input (stride 1, output rows as wide as the input's); else, when the panel
/// is a few runs of positions 1 or 2 apart (output rows narrower than the input's, stride 2),
/// contiguous reads run by run; gathers otherwise.
class TileIndex {
 public:
  /// Positions `lanes` of a panel (bits) whose input offsets are base + step * lane.
  struct Run {
    uint32_t lanes;
    int32_t base, step;
  };
  // Runs per panel at most for the runs' reads (a 7-wide stride-2 output row: 5 per panel).
  static constexpr size_t kMostRuns = 6;

  /// Indexes columns [c0, c1) of the geometry; false when the input plane is too large for 32-bit
  /// offsets.
  bool build(const WindowGeometry& g, int64_t c0, int64_t c1) {
    const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
    if (in_plane >= (int64_t{1} << 30)) return false;
    panels_ = (c1 - c0 + kPackCols - 1) / kPackCols;
    base_.assign(static_cast<size_t>(panels_ * kPackCols), 0);
    consecutive_.assign(static_cast<size_t>(panels_), 1);
    for (int d = 0; d < 3; ++d) {
      first_[d] = d == 0 ? 0 : first_[d - 1] + g.kernel[static_cast<size_t>(d - 1)];
    }
    valid_.assign(static_cast<size_t>((g.kernel[0] + g.kernel[1] + g.kernel[2]) * panels_), 0);
    const int64_t out_h = g.out[1], out_w = g.out[2];
    for (int64_t pos = c0; pos < c1; ++pos) {
      const int64_t j = pos - c0, panel = j / kPackCols;
      const uint32_t bit = uint32_t{1} << (j % kPackCols);
      const int64_t o[3] = {pos / (out_h * out_w), pos / out_w % out_h, pos % out_w};
      int64_t offset = 0;
      for (int d = 0; d < 3; ++d) {
        const auto du = static_cast<size_t>(d);
        const int64_t start = o[d] * g.strides[du] - g.pads_begin[du];
        offset = offset * g.in[du] + o[d] * g.strides[du];
        for (int64_t k = 0; k < g.kernel[du]; ++k) {
          const int64_t i = start + k * g.dilations[du];
          if (i >= 0 && i < g.in[du]) valid_[static_cast<size_t>((first_[d] + k) * panels_ + panel)] |= bit;
        }
      }
      base_[static_cast<size_t>(j)] = static_cast<int32_t>(offset);
      if (j % kPackCols != 0 && offset != base_[static_cast<size_t>(j - 1)] + 1) {
        consecutive_[static_cast<size_t>(panel)] = 0;
      }
    }
    runs_.resize(static_cast<size_t>(panels_) * kMostRuns);
    run_count_.assign(static_cast<size_t>(panels_), 0);
    for (int64_t panel = 0; panel < panels_; ++panel) {
      if (consecutive(panel)) continue;
      // Greedy maximal runs of the panel's positions (those before c1) 1 or 2 apart; none kept
      // when there are more than kMostRuns.
      const int32_t* at = base(panel);
      const int count = static_cast<int>(std::min(kPackCols, c1 - c0 - panel * kPackCols));
      Run* runs = runs_.data() + panel * static_cast<int64_t>(kMostRuns);
      size_t n = 0;
      for (int j = 0; j < count && n <= kMostRuns;) {
        const int32_t step = j + 1 < count && at[j + 1] - at[j] == 2 ? 2 : 1;
        int end = j + 1;
        while (end < count && at[end] - at[end - 1] == step) ++end;
        if (n < kMostRuns) {
          runs[n] = {static_cast<uint32_t>((uint64_t{1} << end) - (uint64_t{1} << j)), at[j] - step * j, step};
        }
        ++n;
        j = end;
      }
      run_count_[static_cast<size_t>(panel)] = static_cast<uint8_t>(n <= kMostRuns ? n : 0);
    }
    return true;
  }

  int64_t panels() const { return panels_; }
  const int32_t* base(int64_t panel) const { return base_.data() + panel * kPackCols; }
  bool consecutive(int64_t panel) const { return consecutive_[static_cast<size_t>(panel)] != 0; }
  /// The runs of a panel that is not consecutive; none when it has too many (gathered).
  std::span<const Run> runs(int64_t panel) const {
    return {runs_.data() + panel * static_cast<int64_t>(kMostRuns), run_count_[static_cast<size_t>(panel)]};
  }
  /// Positions of `panel` inside the input at kernel offset (kd, kh, kw).
  uint32_t valid(int64_t kd, int64_t kh, int64_t kw, int64_t panel) const {
    const auto at = [&](int d, int64_t k) { return valid_[static_cast<size_t>((first_[d] + k) * panels_ + panel)]; };
    return at(0, kd) & at(1, kh) & at(2, kw);
  }

 private:
  int64_t panels_ = 0;
  int64_t first_[3] = {};
  std::vector<int32_t> base_;
  std::vector<uint8_t> consecutive_;
  std::vector<Run> runs_;            // kMostRuns places per panel
  std::vector<uint8_t> run_count_;  // per panel: its runs in runs_
  std::vector<uint32_t> valid_;
};

/// Lanes [8q, 8q + 8) of `bits` as an all-ones-or-zero lane mask.
inline __m256i lane_mask(uint32_t bits, int q) {
  const __m256i select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i v = _mm256_set1_epi32(static_cast<int>((bits >> (8 * q)) & 0xFF));
  return _mm256_cmpeq_epi32(_mm256_and_si256(v, select), select);
}

/// Lanes 0-3 of `bits` at the even lanes of an eight-float lane mask: the floats of a vector that
/// positions two apart read (the odd lanes' 16 is never among the bits).
inline __m256i even_lane_mask(uint32_t bits) {
  const __m256i select = _mm256_setr_epi32(1, 16, 2, 16, 4, 16, 8, 16);
  const __m256i v = _mm256_set1_epi32(static_cast<int>(bits & 0xF));
  return _mm256_cmpeq_epi32(_mm256_and_si256(v, select), select);
}

/// The even lanes of a, then those of b.
inline __m256 even_lanes(__m256 a, __m256 b) {
  const __m256 lanes = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(lanes), _MM_SHUFFLE(3, 1, 2, 0)));
}

#endif

}  // namespace

/// Writes the rows of `channels` input planes (3-D geometry), columns [c0, c1), of an im2col
/// matrix of `depth` rows into its packed panels (sgemm.h's layout for B), starting at row
/// `row0`; the columns of the last panel past c1 are zeroed.
void im2col_panels(const float* x, int64_t channels, const WindowGeometry& g, int64_t c0, int64_t c1, int64_t row0,
                   int64_t depth, float* panels) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t width = c1 - c0;
#if defined(__AVX2__)
  thread_local TileIndex index;
  if (index.build(g, c0, c1)) {
    static_assert(kPackCols == 32, "a panel row is four 8-float vectors");
    // Per kernel offset: its shift in the input plane, and (per panel) the positions it keeps.
    const int64_t k_size = g.kernel[0] * g.kernel[1] * g.kernel[2];
    thread_local std::vector<int32_t> shifts;
    thread_local std::vector<uint32_t> masks;
    shifts.resize(static_cast<size_t>(k_size));
    masks.resize(static_cast<size_t>(k_size));
    for (int64_t kd = 0, k = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++k) {
          shifts[static_cast<size_t>(k)] = static_cast<int32_t>(
              ((kd * g.dilations[0] - g.pads_begin[0]) * g.in[1] + (kh * g.dilations[1] - g.pads_begin[1])) * g.in[2] +
              kw * g.dilations[2] - g.pads_begin[2]);
        }
      }
    }
    // Panel by panel, so that each panel is written front to back.
    for (int64_t panel = 0; panel < index.panels(); ++panel) {
      for (int64_t kd = 0, k = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++k) masks[static_cast<size_t>(k)] = index.valid(kd, kh, kw, panel);
        }
      }
      const int32_t* base = index.base(panel);
      float* dst = panels + (panel * depth + row0) * kPackCols;
      if (index.consecutive(panel)) {
        for (int64_t c = 0; c < channels; ++c) {
          // Masked lanes are never read, so the pointer may point before or past the plane.
          const float* src = x + c * in_size + base[0];
          for (int64_t k = 0; k < k_size; ++k, dst += kPackCols) {
            const uint32_t bits = masks[static_cast<size_t>(k)];
            const float* from = src + shifts[static_cast<size_t>(k)];
            for (int q = 0; q < 4; ++q) {
              _mm256_storeu_ps(dst + 8 * q, _mm256_maskload_ps(from + 8 * q, lane_mask(bits, q)));
            }
          }
        }
      } else if (const std::span<const TileIndex::Run> runs = index.runs(panel); !runs.empty()) {
        // Run by run, masked contiguous reads, two vectors' even lanes for positions two apart:
        // gathers cost Zen 3 about a cycle a float. Each position is in one run, and the others'
        // reads leave its lane zero.
        for (int64_t c = 0; c < channels; ++c) {
          const float* xc = x + c * in_size;
          for (int64_t k = 0; k < k_size; ++k, dst += kPackCols) {
            const uint32_t bits = masks[static_cast<size_t>(k)];
            const int32_t shift = shifts[static_cast<size_t>(k)];
            __m256 out[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            for (const TileIndex::Run& run : runs) {
              const float* from = xc + run.base + shift;
              for (int q = 0; q < 4; ++q) {
                const uint32_t lanes = (bits & run.lanes) >> (8 * q) & 0xFF;
                if (lanes == 0) continue;
                if (run.step == 1) {
                  out[q] = _mm256_or_ps(out[q], _mm256_maskload_ps(from + 8 * q, lane_mask(lanes, 0)));
                } else {
                  const __m256 lo = _mm256_maskload_ps(from + 16 * q, even_lane_mask(lanes));
                  const __m256 hi = _mm256_maskload_ps(from + 16 * q + 8, even_lane_mask(lanes >> 4));
                  out[q] = _mm256_or_ps(out[q], even_lanes(lo, hi));
                }
              }
            }
            for (int q = 0; q < 4; ++q) _mm256_storeu_ps(dst + 8 * q, out[q]);
          }
        }
      } else {
        __m256i at[4];
        for (int q = 0; q < 4; ++q) at[q] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 8 * q));
        for (int64_t c = 0; c < channels; ++c) {
          const float* xc = x + c * in_size;
          for (int64_t k = 0; k < k_size; ++k, dst += kPackCols) {
            const uint32_t bits = masks[static_cast<size_t>(k)];
            const __m256i shift = _mm256_set1_epi32(shifts[static_cast<size_t>(k)]);
            for (int q = 0; q < 4; ++q) {
              _mm256_storeu_ps(dst + 8 * q,
                               _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xc, _mm256_add_epi32(at[q], shift),
                                                        _mm256_castsi256_ps(lane_mask(bits, q)), 4));
            }
          }
        }
      }
    }
    return;
  }
#endif
  // Rows built whole, then cut into the panels.
  thread_local std::vector<float> line;
  if (line.size() < static_cast<size_t>(width)) line.resize(static_cast<size_t>(width));
  int64_t row = row0;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
          im2col_row(x + c * in_size, g, kd, kh, kw, c0, c1, line.data());
          float* dst = panels + row * kPackCols;
          for (int64_t j = 0; j < width; j += kPackCols, dst += depth * kPackCols) {
            const int64_t n = std::min(kPackCols, width - j);
            std::copy_n(line.data() + j, n, dst);
            std::fill(dst + n, dst + kPackCols, 0.0f);
          }
        }
      }
    }
  }
}

}  // namespace vn::ops
