// SPDX-License-Identifier: Apache-2.0
// Exact order statistics of comparison errors by radix selection (for compare.cpp): radix buckets
// of non-negative floats, their per-thread counts, the gather of some buckets' values, and the
// selection of ranks within them. Beside quantiles.h, whose select_ranks it runs on the gathered
// values.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/compare/quantiles.h"

namespace vn::radix {

// Radix buckets of non-negative floats: such floats sort as their bit patterns do, so the top
// bits order them by bucket (1/32 of an octave per bucket; exact zeros alone in bucket 0). Finer
// buckets mean fewer values to gather and select; 1/32 measured 9-13% faster than 1/16 on 1 and
// 64 MiB tensors and the same on 64 KiB ones, 1/64 slower on all.
constexpr int kRadixShift = 18;
constexpr size_t kRadixBuckets = (size_t{1} << (31 - kRadixShift)) + 1;
inline size_t radix_bucket(float v) {
  // The sign bit is clear by contract; masking it keeps a stray -0 inside the table.
  const uint32_t bits = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
  return (bits >> kRadixShift) + (bits != 0 ? 1 : 0);
}

// Adds the radix buckets of n abs and rel errors to four tables of kRadixBuckets: abs errors at
// even and odd indices, then rel errors likewise. Runs of equal errors (agreeing zeros) would
// otherwise make each increment wait on the one before; the tables are summed afterwards.
template <typename C>
void count_radix_buckets(const C* abs_errors, const C* rel_errors, int64_t n, uint32_t* tables) {
  uint32_t* abs_even = tables;
  uint32_t* abs_odd = tables + kRadixBuckets;
  uint32_t* rel_even = tables + 2 * kRadixBuckets;
  uint32_t* rel_odd = tables + 3 * kRadixBuckets;
  // The bucket numbers first, through SIMD lanes, 256 at a time; then the increments, which
  // cannot use lanes (two lanes may hit one bucket).
  constexpr int64_t kStep = 256;
  std::array<uint16_t, kStep> abs_bucket, rel_bucket;
  for (int64_t b = 0; b < n; b += kStep) {
    const int64_t m = std::min(kStep, n - b);
#pragma omp simd
    for (int64_t j = 0; j < m; ++j) {
      abs_bucket[static_cast<size_t>(j)] = static_cast<uint16_t>(radix_bucket(static_cast<float>(abs_errors[b + j])));
      rel_bucket[static_cast<size_t>(j)] = static_cast<uint16_t>(radix_bucket(static_cast<float>(rel_errors[b + j])));
    }
    int64_t j = 0;
    for (; j + 1 < m; j += 2) {
      ++abs_even[abs_bucket[static_cast<size_t>(j)]];
      ++abs_odd[abs_bucket[static_cast<size_t>(j + 1)]];
      ++rel_even[rel_bucket[static_cast<size_t>(j)]];
      ++rel_odd[rel_bucket[static_cast<size_t>(j + 1)]];
    }
    if (j < m) {
      ++abs_even[abs_bucket[static_cast<size_t>(j)]];
      ++rel_even[rel_bucket[static_cast<size_t>(j)]];
    }
  }
}

// The radix bucket counts of one comparison, in tables this thread keeps zeroed between
// comparisons: clearing four fresh 32 KiB tables per tensor cost more than comparing a small one.
// Each chunk of the pass counts into four tables of its own (see count_radix_buckets); fold() sums
// them into the first chunk's abs-even and rel-even tables and clears the others, and the
// destructor clears those two. Only buckets up to the largest error's are ever touched.
class RadixCounts {
 public:
  static constexpr size_t kTables = 4 * kRadixBuckets;

  // On the thread whose tables these are; the other methods may run on any thread.
  explicit RadixCounts(size_t chunks) : chunks_(chunks) {
    thread_local std::vector<uint32_t> tables;
    if (tables.size() < chunks * kTables) tables.resize(chunks * kTables);  // new ones are zero
    data_ = tables.data();
  }
  RadixCounts(const RadixCounts&) = delete;
  RadixCounts& operator=(const RadixCounts&) = delete;
  ~RadixCounts() {
    std::fill_n(data_, abs_end_, 0u);
    std::fill_n(data_ + 2 * kRadixBuckets, rel_end_, 0u);
  }

  // Chunk k's four tables.
  uint32_t* chunk(size_t k) { return data_ + k * kTables; }

  // Sums every chunk's tables into abs() and rel(); abs errors fall in buckets below abs_end, rel
  // errors below rel_end.
  void fold(size_t abs_end, size_t rel_end) {
    abs_end_ = abs_end;
    rel_end_ = rel_end;
    for (size_t k = 0; k < chunks_; ++k) {
      fold_into(data_, chunk(k), k == 0, abs_end);
      fold_into(data_ + 2 * kRadixBuckets, chunk(k) + 2 * kRadixBuckets, k == 0, rel_end);
    }
  }
  const uint32_t* abs() const { return data_; }
  const uint32_t* rel() const { return data_ + 2 * kRadixBuckets; }

 private:
  // Adds the even and odd tables at `from` to `to` (which is `from` itself for the first chunk)
  // and clears them, over buckets [0, end).
  static void fold_into(uint32_t* to, uint32_t* from, bool same, size_t end) {
    uint32_t* odd = from + kRadixBuckets;
    if (same) {
#pragma omp simd
      for (size_t b = 0; b < end; ++b) to[b] += odd[b], odd[b] = 0;
    } else {
#pragma omp simd
      for (size_t b = 0; b < end; ++b) to[b] += from[b] + odd[b], from[b] = 0, odd[b] = 0;
    }
  }

  size_t chunks_;
  uint32_t* data_;
  size_t abs_end_ = 0, rel_end_ = 0;
};

// What BucketFilter::gather may write past the values it gathers.
constexpr size_t kGatherSlack = 8;

#if defined(__AVX2__)
// Per 8-bit lane mask: the lanes to move to the front, in order (AVX2 has no compress).
constexpr auto kLeftPack = [] {
  std::array<std::array<int32_t, 8>, 256> lut{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int lane = 0; lane < 8; ++lane) {
      if (m & (1 << lane)) lut[static_cast<size_t>(m)][static_cast<size_t>(k++)] = lane;
    }
  }
  return lut;
}();
#endif

// The values of some radix buckets, picked out of runs of values.
class BucketFilter {
 public:
  // `buckets`: the buckets to keep, ascending (repeats allowed); bucket 0, the zeros, never is.
  explicit BucketFilter(std::span<const size_t> buckets) {
    // The buckets as ranges (lo, hi) of bit patterns, exclusive, adjacent ones merged; values are
    // non-negative, so their patterns compare as signed integers.
    for (size_t k = 0; k < buckets.size(); ++k) {
      const size_t b = buckets[k];
      if (b == 0 || (k > 0 && b == buckets[k - 1])) continue;
      const auto first = static_cast<int32_t>(std::max<uint32_t>(1, static_cast<uint32_t>(b - 1) << kRadixShift));
      const auto end = static_cast<int32_t>(std::min<uint32_t>(static_cast<uint32_t>(b) << kRadixShift, 0x7fffffffu));
      if (!hi_.empty() && hi_.back() == first) {
        hi_.back() = end;
      } else {
        lo_.push_back(first - 1);
        hi_.push_back(end);
      }
    }
  }

  // Copies, in order, those of v[0, n) in the buckets to `out`, which has room for them plus
  // kGatherSlack; returns how many.
  size_t gather(const float* v, size_t n, float* out) const {
    size_t fill = 0, i = 0;
#if defined(__AVX2__)
    const __m256i sign_off = _mm256_set1_epi32(0x7fffffff);
    for (; i + 8 <= n; i += 8) {
      const __m256 x = _mm256_loadu_ps(v + i);
      const __m256i bits = _mm256_and_si256(_mm256_castps_si256(x), sign_off);
      __m256i in = _mm256_setzero_si256();
      for (size_t r = 0; r < lo_.size(); ++r) {
        in = _mm256_or_si256(in, _mm256_and_si256(_mm256_cmpgt_epi32(bits, _mm256_set1_epi32(lo_[r])),
                                                  _mm256_cmpgt_epi32(_mm256_set1_epi32(hi_[r]), bits)));
      }
      // Stored whether or not a lane is wanted: a branch on the mask would be mispredicted about
      // as often as a group holds a wanted value.
      const int mask = _mm256_movemask_ps(_mm256_castsi256_ps(in));
      const __m256i order =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLeftPack[static_cast<size_t>(mask)].data()));
      _mm256_storeu_ps(out + fill, _mm256_permutevar8x32_ps(x, order));
      fill += static_cast<size_t>(std::popcount(static_cast<unsigned>(mask)));
    }
#endif
    // Branch-free: every value is written, and the next write overwrites it unless it was wanted.
    for (; i < n; ++i) {
      const auto bits = static_cast<int32_t>(std::bit_cast<uint32_t>(v[i]) & 0x7fffffffu);
      bool in = false;
      for (size_t r = 0; r < lo_.size(); ++r) in = in || (bits > lo_[r] && bits < hi_[r]);
      out[fill] = v[i];
      fill += in ? 1 : 0;
    }
    return fill;
  }

 private:
  std::vector<int32_t> lo_, hi_;
};

// Exact order statistics of one kind of error (abs or rel: non-negative, NaN-free) by radix
// selection: the counts per radix bucket locate each wanted rank's bucket, one pass gathers the
// errors of those buckets, and selection runs on them alone, a few percent of the tensor instead
// of all of it. The buckets order the values, so a rank within one bucket is a rank within the
// union of the gathered ones.
class RadixSelection {
 public:
  // `ranks` (ascending, distinct) of errors whose bucket counts are `counts`.
  RadixSelection(const uint32_t* counts, std::vector<size_t> ranks) : ranks_(std::move(ranks)) {
    // Per rank: its bucket and the rank of the bucket's first value, in one scan of the counts
    // that steps over groups of buckets wholly below the rank (the median of small errors lies a
    // few thousand buckets up).
    std::vector<size_t> bucket(ranks_.size()), base(ranks_.size());
    constexpr size_t kGroup = 16;
    size_t below = 0, b = 0;
    for (size_t k = 0; k < ranks_.size(); ++k) {
      while (b + kGroup <= kRadixBuckets) {
        uint32_t group = 0;
#pragma omp simd reduction(+ : group)
        for (size_t j = 0; j < kGroup; ++j) group += counts[b + j];
        if (below + group > ranks_[k]) break;
        below += group;
        b += kGroup;
      }
      while (below + counts[b] <= ranks_[k]) below += counts[b++];
      bucket[k] = b;
      base[k] = below;
    }
    // Bucket 0 holds only zeros (ReLU outputs that agree make it most of a tensor): never
    // gathered. Per other rank: its rank among the gathered values, whose buckets come in
    // ascending order.
    for (size_t k = 0; k < ranks_.size(); ++k) {
      if (bucket[k] == 0) {
        ++zeros_;
        continue;
      }
      if (k == 0 || bucket[k] != bucket[k - 1]) total_ += counts[bucket[k]];
      local_.push_back(total_ - counts[bucket[k]] + (ranks_[k] - base[k]));
    }
    filter_.emplace(bucket);
  }

  const std::vector<size_t>& ranks() const { return ranks_; }
  // How many errors the gather keeps.
  size_t total() const { return total_; }
  const BucketFilter& filter() const { return *filter_; }

  // The values of the ranks, from the gathered errors (reordered). NaN if the gather did not
  // find what the counts promised, which would be a defect of this file.
  std::vector<float> select(std::vector<float>& gathered) const {
    if (gathered.size() != total_) return std::vector<float>(ranks_.size(), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> at(ranks_.size(), 0.0f);
    if (!local_.empty()) select_ranks<float>(gathered, local_, at.data() + zeros_);
    return at;
  }

 private:
  std::vector<size_t> ranks_;
  size_t zeros_ = 0, total_ = 0;
  std::vector<size_t> local_;
  std::optional<BucketFilter> filter_;
};

}  // namespace vn::radix
