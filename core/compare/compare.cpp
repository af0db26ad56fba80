// SPDX-License-Identifier: Apache-2.0
#include "core/compare/compare.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <omp.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/compare/quantiles.h"

namespace vn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// numpy's float64 epsilon, which Polygraphy substitutes for exact zeros in the denominator.
constexpr double kZeroDenominator = 2.220446049250313e-16;
// Below this many elements, quantiles select in place instead of by radix (measured: in place
// wins at 2K elements, radix at 4K by 2x).
constexpr size_t kRadixMin = 4096;
// From this many elements, the abs and rel selections run on two threads.
constexpr int64_t kParallelSelect = int64_t{1} << 15;

template <typename Map>
auto lookup(const Map& map, std::string_view name, typename Map::mapped_type fallback) {
  if (auto it = map.find(name); it != map.end()) return it->second;
  if (auto it = map.find(""); it != map.end()) return it->second;
  return fallback;
}

// Radix buckets of non-negative floats: such floats sort as their bit patterns do, so the top
// bits order them by bucket (1/16 of an octave per bucket; exact zeros alone in bucket 0).
constexpr int kRadixShift = 19;
constexpr size_t kRadixBuckets = (size_t{1} << (31 - kRadixShift)) + 1;
inline size_t radix_bucket(float v) {
  // The sign bit is clear by contract; masking it keeps a stray -0 inside the table.
  const uint32_t bits = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
  return (bits >> kRadixShift) + (bits != 0 ? 1 : 0);
}

// The radix bucket counts of both error buffers, as four tables of kRadixBuckets: abs errors at
// even and odd indices, then rel errors likewise. Runs of equal errors (agreeing zeros) would
// otherwise make each increment wait on the one before; the tables are summed afterwards.
void count_radix_buckets(const float* abs_errors, const float* rel_errors, int64_t lo, int64_t hi, uint32_t* tables) {
  uint32_t* abs_even = tables;
  uint32_t* abs_odd = tables + kRadixBuckets;
  uint32_t* rel_even = tables + 2 * kRadixBuckets;
  uint32_t* rel_odd = tables + 3 * kRadixBuckets;
  // The bucket numbers first, through SIMD lanes, 256 at a time; then the increments, which
  // cannot use lanes (two lanes may hit one bucket).
  constexpr int64_t kStep = 256;
  std::array<uint16_t, kStep> abs_bucket, rel_bucket;
  for (int64_t b = lo; b < hi; b += kStep) {
    const int64_t n = std::min(kStep, hi - b);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      abs_bucket[static_cast<size_t>(j)] = static_cast<uint16_t>(radix_bucket(abs_errors[b + j]));
      rel_bucket[static_cast<size_t>(j)] = static_cast<uint16_t>(radix_bucket(rel_errors[b + j]));
    }
    int64_t j = 0;
    for (; j + 1 < n; j += 2) {
      ++abs_even[abs_bucket[static_cast<size_t>(j)]];
      ++abs_odd[abs_bucket[static_cast<size_t>(j + 1)]];
      ++rel_even[rel_bucket[static_cast<size_t>(j)]];
      ++rel_odd[rel_bucket[static_cast<size_t>(j + 1)]];
    }
    if (j < n) {
      ++abs_even[abs_bucket[static_cast<size_t>(j)]];
      ++rel_even[rel_bucket[static_cast<size_t>(j)]];
    }
  }
}

// The radix bucket counts of one comparison, in tables this thread keeps zeroed between
// comparisons: clearing four fresh 16 KiB tables per tensor cost more than comparing a small one.
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
    std::fill_n(data(), abs_end_, 0u);
    std::fill_n(data() + 2 * kRadixBuckets, rel_end_, 0u);
  }

  // Chunk k's four tables.
  uint32_t* chunk(size_t k) { return data() + k * kTables; }

  // Sums every chunk's tables into abs() and rel(); abs errors fall in buckets below abs_end, rel
  // errors below rel_end.
  void fold(size_t abs_end, size_t rel_end) {
    abs_end_ = abs_end;
    rel_end_ = rel_end;
    for (size_t k = 0; k < chunks_; ++k) {
      fold_into(data(), chunk(k), k == 0, abs_end);
      fold_into(data() + 2 * kRadixBuckets, chunk(k) + 2 * kRadixBuckets, k == 0, rel_end);
    }
  }
  const uint32_t* abs() { return data(); }
  const uint32_t* rel() { return data() + 2 * kRadixBuckets; }

 private:
  uint32_t* data() { return data_; }

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

// What gather_buckets may write past the values it gathers.
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

// Copies, in order, the values whose radix bucket is marked in `wanted` to `out`, which has room
// for them plus kGatherSlack. `buckets` lists the marked buckets, ascending (repeats allowed);
// bucket 0, the zeros, is never marked.
void gather_buckets(std::span<const float> values, const std::array<uint8_t, kRadixBuckets>& wanted,
                    std::span<const size_t> buckets, float* out) {
  size_t fill = 0, i = 0;
#if defined(__AVX2__)
  // The wanted buckets as at most four ranges [lo, hi) of bit patterns, adjacent ones merged;
  // values are non-negative, so their patterns compare as signed integers.
  std::array<int32_t, 4> lo, hi;
  lo.fill(std::numeric_limits<int32_t>::max());
  hi.fill(0);
  size_t ranges = 0;
  bool fits = true;
  for (size_t k = 0; k < buckets.size(); ++k) {
    const size_t b = buckets[k];
    if (b == 0 || (k > 0 && b == buckets[k - 1])) continue;
    const auto first = static_cast<int32_t>(std::max<uint32_t>(1, static_cast<uint32_t>(b - 1) << kRadixShift));
    const auto end = static_cast<int32_t>(std::min<uint32_t>(static_cast<uint32_t>(b) << kRadixShift, 0x7fffffffu));
    if (ranges > 0 && hi[ranges - 1] == first) {
      hi[ranges - 1] = end;
    } else if (ranges < lo.size()) {
      lo[ranges] = first - 1;  // compared with >
      hi[ranges] = end;
      ++ranges;
    } else {
      fits = false;
    }
  }
  if (fits) {
    const __m256i sign_off = _mm256_set1_epi32(0x7fffffff);
    for (; i + 8 <= values.size(); i += 8) {
      const __m256 v = _mm256_loadu_ps(values.data() + i);
      const __m256i bits = _mm256_and_si256(_mm256_castps_si256(v), sign_off);
      __m256i in = _mm256_setzero_si256();
      for (size_t r = 0; r < ranges; ++r) {
        in = _mm256_or_si256(in, _mm256_and_si256(_mm256_cmpgt_epi32(bits, _mm256_set1_epi32(lo[r])),
                                                  _mm256_cmpgt_epi32(_mm256_set1_epi32(hi[r]), bits)));
      }
      // Stored whether or not a lane is wanted: a branch on the mask would be mispredicted about
      // as often as a group holds a wanted value.
      const int mask = _mm256_movemask_ps(_mm256_castsi256_ps(in));
      const __m256i order = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLeftPack[static_cast<size_t>(mask)].data()));
      _mm256_storeu_ps(out + fill, _mm256_permutevar8x32_ps(v, order));
      fill += static_cast<size_t>(std::popcount(static_cast<unsigned>(mask)));
    }
  }
#endif
  // Branch-free: every value is written, and the next write overwrites it unless it was wanted.
  for (; i < values.size(); ++i) {
    out[fill] = values[i];
    fill += wanted[radix_bucket(values[i])];
  }
}

// Exact order statistics of non-negative, NaN-free floats by radix selection: the counts per
// radix bucket locate each wanted rank's bucket, one pass gathers the values of those buckets, and
// selection runs on them alone, a few percent of the tensor instead of all of it. The buckets
// order the values, so a rank within one bucket is a rank within the union of the gathered ones.
//
// Fills out[k] with the value of ranks[k] (ascending, distinct) of `values`, whose radix bucket
// counts are `counts` (kRadixBuckets of them).
void radix_select(std::span<const float> values, const uint32_t* counts, std::span<const size_t> ranks, float* out) {
  // Per rank: its bucket and the rank of the bucket's first value, in one scan of the counts that
  // steps over groups of buckets wholly below the rank (the median of small errors lies a
  // couple of thousand buckets up).
  std::vector<size_t> bucket(ranks.size()), base(ranks.size());
  constexpr size_t kGroup = 16;
  size_t below = 0, b = 0;
  for (size_t k = 0; k < ranks.size(); ++k) {
    while (b + kGroup <= kRadixBuckets) {
      uint32_t group = 0;
#pragma omp simd reduction(+ : group)
      for (size_t j = 0; j < kGroup; ++j) group += counts[b + j];
      if (below + group > ranks[k]) break;
      below += group;
      b += kGroup;
    }
    while (below + counts[b] <= ranks[k]) below += counts[b++];
    bucket[k] = b;
    base[k] = below;
  }
  // Bucket 0 holds only zeros (ReLU outputs that agree make it most of a tensor): never gathered.
  std::array<uint8_t, kRadixBuckets> wanted{};
  for (size_t b : bucket) wanted[b] = b != 0 ? 1 : 0;
  // Per rank: its rank among the gathered values, whose buckets come in ascending order.
  std::vector<size_t> local;
  size_t total = 0, first = 0;
  for (size_t k = 0; k < ranks.size(); ++k) {
    if (bucket[k] == 0) {
      out[first++] = 0.0f;
      continue;
    }
    if (k == 0 || bucket[k] != bucket[k - 1]) total += counts[bucket[k]];
    local.push_back(total - counts[bucket[k]] + (ranks[k] - base[k]));
  }
  if (local.empty()) return;
  std::vector<float> gathered(total + kGatherSlack);
  gather_buckets(values, wanted, bucket, gathered.data());
  gathered.resize(total);
  select_ranks<float>(gathered, local, out + first);
}

// numpy.quantile with linear interpolation over NaN-free, non-negative `values` (reordered in
// place), for each q: by radix selection when the values' bucket counts are given, else by
// selection in place.
std::vector<double> quantiles(std::vector<float>& values, const uint32_t* radix_counts, std::initializer_list<double> qs) {
  if (values.empty()) return std::vector<double>(qs.size(), 0.0);
  return quantiles_by<float>(values.size(), qs, [&](std::span<const size_t> ranks, float* out) {
    if (radix_counts != nullptr) {
      radix_select(values, radix_counts, ranks, out);
    } else {
      select_ranks<float>(values, ranks, out);
    }
  });
}

bool exceeds(double value, double tolerance) { return std::isnan(value) || value > tolerance; }

// What one pass over a range of elements gathers; ranges are merged in order.
struct Partial {
  double abs_sum = 0, rel_sum = 0, dot = 0, test_sq = 0, ref_sq = 0, err_sq = 0;
  bool abs_nan = false, rel_nan = false;
  double min_atol = 0, min_rtol = 0;
  double abs_max = 0, rel_max = 0;
  int64_t worst = -1, mismatches = 0;
  int64_t nan_test = 0, nan_ref = 0, inf_test = 0, inf_ref = 0;

  // Folds in the partial of the range that follows this one: the same result as one pass over
  // both ranges, but for the rounding of the sums.
  void merge(const Partial& o) {
    abs_sum += o.abs_sum, rel_sum += o.rel_sum, dot += o.dot, test_sq += o.test_sq, ref_sq += o.ref_sq;
    err_sq += o.err_sq;
    // The worst element is the first NaN error, else the first largest error.
    if (!abs_nan && o.worst >= 0 && (o.abs_nan || worst < 0 || o.abs_max > abs_max)) {
      abs_max = o.abs_max;
      worst = o.worst;
    }
    abs_nan = abs_nan || o.abs_nan;
    rel_nan = rel_nan || o.rel_nan;
    rel_max = std::max(rel_max, o.rel_max);
    min_atol = std::max(min_atol, o.min_atol);
    min_rtol = std::max(min_rtol, o.min_rtol);
    mismatches += o.mismatches;
    nan_test += o.nan_test, nan_ref += o.nan_ref, inf_test += o.inf_test, inf_ref += o.inf_ref;
  }
};

// The type element errors are computed in, Polygraphy's: half formats are cast up to float32 and
// float32 stays float32 (numpy computes |a - b| and |a - b| / |b| in the outputs' type); float64
// stays float64. Integers and bools are read as double, exact up to 2^53. Sums, means and the
// signal metrics accumulate in double whatever the type.
template <typename T>
using ErrorType = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Eigen::half> ||
                                         std::is_same_v<T, Eigen::bfloat16>,
                                     float, double>;

// One pass over elements [lo, hi), element errors in ErrorType<T>. Each error meets the tolerances
// rounded to its type, as numpy compares a float32 array with a Python float.
template <typename T>
Partial accumulate_scalar(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol, bool inf_equal,
                         float* abs_errors, float* rel_errors) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  using C = ErrorType<T>;
  const auto atol = static_cast<C>(tol.atol), rtol = static_cast<C>(tol.rtol);
  double abs_sum = 0, rel_sum = 0, dot = 0, test_sq = 0, ref_sq = 0, err_sq = 0;
  bool abs_nan = false, rel_nan = false;
  C min_atol = 0, min_rtol = 0;
  C abs_max = 0, rel_max = 0;
  int64_t worst = -1, mismatches = 0;
  Partial p;
  for (int64_t i = lo; i < hi; ++i) {
    const C a = static_cast<C>(test[i]);
    const C b = static_cast<C>(ref[i]);
    if constexpr (kFloat) {
      // The common case, both finite and no NaN seen yet: branch-free updates, locals only.
      if (std::isfinite(a) && std::isfinite(b) && !abs_nan) {
        const C abs_err = std::abs(a - b);
        const C denom = b == C(0) ? static_cast<C>(kZeroDenominator) : std::abs(b);
        const C rel_err = abs_err / denom;
        if (abs_err > abs_max || worst < 0) {
          abs_max = abs_err;
          worst = i;
        }
        rel_max = std::max(rel_max, rel_err);
        abs_sum += static_cast<double>(abs_err);
        rel_sum += static_cast<double>(rel_err);
        abs_errors[i] = static_cast<float>(abs_err);
        rel_errors[i] = static_cast<float>(rel_err);
        const bool abs_fails = abs_err > atol;
        const bool rel_fails = rel_err > rtol;
        mismatches += (abs_fails && rel_fails) ? 1 : 0;
        min_atol = std::max(min_atol, rel_fails ? abs_err : C(0));
        min_rtol = std::max(min_rtol, abs_fails ? rel_err : C(0));
        const auto ad = static_cast<double>(a), bd = static_cast<double>(b);
        dot += ad * bd;
        test_sq += ad * ad;
        ref_sq += bd * bd;
        err_sq += (ad - bd) * (ad - bd);
        continue;
      }
    }
    C abs_err;
    if constexpr (kBool) {
      abs_err = (test[i] != ref[i]) ? 1.0 : 0.0;
    } else {
      abs_err = (inf_equal && std::isinf(a) && a == b) ? C(0) : std::abs(a - b);
    }
    C denom = std::abs(b);
    if (kFloat && denom == C(0)) denom = static_cast<C>(kZeroDenominator);
    const C rel_err = abs_err / denom;  // integer refs of 0 give inf (or NaN for 0/0), as numpy does

    if constexpr (kFloat) {
      if (std::isnan(a)) ++p.nan_test;
      if (std::isnan(b)) ++p.nan_ref;
      if (std::isinf(a)) ++p.inf_test;
      if (std::isinf(b)) ++p.inf_ref;
    }
    if (std::isnan(abs_err)) {
      if (!abs_nan) worst = i;
      abs_nan = true;
    } else if (!abs_nan && (worst < 0 || abs_err > abs_max)) {
      abs_max = abs_err;
      worst = i;
    }
    if (std::isnan(rel_err)) {
      rel_nan = true;
    } else if (rel_err > rel_max) {
      rel_max = rel_err;
    }
    abs_sum += static_cast<double>(abs_err);
    rel_sum += static_cast<double>(rel_err);
    abs_errors[i] = static_cast<float>(abs_err);
    rel_errors[i] = static_cast<float>(rel_err);

    const bool abs_fails = std::isnan(abs_err) || abs_err > atol;
    const bool rel_fails = std::isnan(rel_err) || rel_err > rtol;
    if (abs_fails && rel_fails) ++mismatches;
    // The element must be covered by atol when rtol does not cover it, and vice versa.
    if (rel_fails) min_atol = std::isnan(abs_err) ? std::numeric_limits<C>::infinity() : std::max(min_atol, abs_err);
    if (abs_fails) min_rtol = std::isnan(rel_err) ? std::numeric_limits<C>::infinity() : std::max(min_rtol, rel_err);

    if (std::isfinite(a) && std::isfinite(b)) {
      const auto ad = static_cast<double>(a), bd = static_cast<double>(b);
      dot += ad * bd;
      test_sq += ad * ad;
      ref_sq += bd * bd;
      err_sq += (ad - bd) * (ad - bd);
    }
  }
  p.abs_sum = abs_sum, p.rel_sum = rel_sum, p.dot = dot, p.test_sq = test_sq, p.ref_sq = ref_sq, p.err_sq = err_sq;
  p.abs_nan = abs_nan, p.rel_nan = rel_nan, p.min_atol = min_atol, p.min_rtol = min_rtol;
  p.abs_max = abs_max, p.rel_max = rel_max, p.worst = worst, p.mismatches = mismatches;
  return p;
}

// Whether v[lo, hi) of float32 or float64 values holds no NaN or infinity. Tested on the bits (an
// exponent field of all ones), this vectorizes.
template <typename T>
bool all_finite(const T* v, int64_t lo, int64_t hi) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kExponent = static_cast<Bits>(sizeof(T) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
  int not_finite = 0;
#pragma omp simd reduction(| : not_finite)
  for (int64_t i = lo; i < hi; ++i) not_finite |= static_cast<int>((std::bit_cast<Bits>(v[i]) & kExponent) == kExponent);
  return not_finite == 0;
}

// Elements [lo, hi) of float32 or float64 tensors when all of them are finite: the same quantities
// as accumulate_scalar's common case, in SIMD lanes of T. The lanes' sums reassociate, as the merge
// of thread partials does; maxima and counts are exact. Returns false, having changed nothing but
// the error buffers, when an element is not finite (or the two differ by more than T holds).
template <typename T>
bool accumulate_finite_block(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol,
                             float* abs_errors, float* rel_errors, Partial& p) {
  constexpr T kMax = std::numeric_limits<T>::max();
  const auto atol = static_cast<T>(tol.atol), rtol = static_cast<T>(tol.rtol);
  // Two loops over the block (it stays in L1): one accumulator set each keeps the lanes in
  // registers instead of spilling them. The first also looks for what is not finite: an infinite
  // or NaN element makes its error or its |ref| so.
  T abs_max = 0, rel_max = 0, min_atol = 0, min_rtol = 0;
  double abs_sum = 0, rel_sum = 0;
  int mismatches = 0, not_finite = 0;
#pragma omp simd reduction(+ : abs_sum, rel_sum, mismatches, not_finite) \
    reduction(max : abs_max, rel_max, min_atol, min_rtol)
  for (int64_t i = lo; i < hi; ++i) {
    const T b = ref[i];
    const T abs_b = std::abs(b);
    const T abs_err = std::abs(test[i] - b);
    const T rel_err = abs_err / (b == T(0) ? static_cast<T>(kZeroDenominator) : abs_b);
    not_finite += static_cast<int>(!(abs_err <= kMax)) | static_cast<int>(!(abs_b <= kMax));
    abs_errors[i] = static_cast<float>(abs_err);
    rel_errors[i] = static_cast<float>(rel_err);
    abs_max = std::max(abs_max, abs_err);
    rel_max = std::max(rel_max, rel_err);
    abs_sum += static_cast<double>(abs_err);
    rel_sum += static_cast<double>(rel_err);
    const bool abs_fails = abs_err > atol;
    const bool rel_fails = rel_err > rtol;
    mismatches += (abs_fails && rel_fails) ? 1 : 0;
    min_atol = std::max(min_atol, rel_fails ? abs_err : T(0));
    min_rtol = std::max(min_rtol, abs_fails ? rel_err : T(0));
  }
  if (not_finite != 0) return false;
  // The signal sums in double, in two interleaved halves: each sum is then two chains of
  // additions, and the additions' latency no longer sets the pace.
  const int64_t half = (hi - lo) / 2;
  double dot0 = 0, test_sq0 = 0, ref_sq0 = 0, err_sq0 = 0, dot1 = 0, test_sq1 = 0, ref_sq1 = 0, err_sq1 = 0;
#pragma omp simd reduction(+ : dot0, test_sq0, ref_sq0, err_sq0, dot1, test_sq1, ref_sq1, err_sq1)
  for (int64_t j = 0; j < half; ++j) {
    const double a0 = static_cast<double>(test[lo + j]), b0 = static_cast<double>(ref[lo + j]);
    const double a1 = static_cast<double>(test[lo + half + j]), b1 = static_cast<double>(ref[lo + half + j]);
    dot0 += a0 * b0, test_sq0 += a0 * a0, ref_sq0 += b0 * b0, err_sq0 += (a0 - b0) * (a0 - b0);
    dot1 += a1 * b1, test_sq1 += a1 * a1, ref_sq1 += b1 * b1, err_sq1 += (a1 - b1) * (a1 - b1);
  }
  for (int64_t i = lo + 2 * half; i < hi; ++i) {
    const double a = static_cast<double>(test[i]), b = static_cast<double>(ref[i]);
    dot0 += a * b, test_sq0 += a * a, ref_sq0 += b * b, err_sq0 += (a - b) * (a - b);
  }
  // The worst element is the first largest error: the block's first element reaching its maximum,
  // when that beats what came before.
  if (p.worst < 0 || abs_max > p.abs_max) {
    int64_t i = lo;
    while (std::abs(test[i] - ref[i]) != abs_max) ++i;
    p.worst = i;
    p.abs_max = abs_max;
  }
  p.abs_sum += abs_sum, p.rel_sum += rel_sum;
  p.dot += dot0 + dot1, p.test_sq += test_sq0 + test_sq1, p.ref_sq += ref_sq0 + ref_sq1;
  p.err_sq += err_sq0 + err_sq1;
  p.rel_max = std::max(p.rel_max, static_cast<double>(rel_max));
  p.min_atol = std::max(p.min_atol, static_cast<double>(min_atol));
  p.min_rtol = std::max(p.min_rtol, static_cast<double>(min_rtol));
  p.mismatches += mismatches;
  return true;
}

// One pass over elements [lo, hi) in blocks: float32 and float64 blocks through SIMD lanes while
// they are finite and no NaN error has appeared (the worst element is then fixed), every other
// block and type by accumulate_scalar. With `radix_tables`, each block's errors are counted into
// them (see count_radix_buckets) while still in cache.
template <typename T>
Partial accumulate_range(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol, bool inf_equal,
                         float* abs_errors, float* rel_errors, uint32_t* radix_tables) {
  constexpr int64_t kBlock = 1024;
  Partial p;
  for (int64_t b = lo; b < hi; b += kBlock) {
    const int64_t e = std::min(hi, b + kBlock);
    bool done = false;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      done = !p.abs_nan && accumulate_finite_block(test, ref, b, e, tol, abs_errors, rel_errors, p);
    }
    if (!done) p.merge(accumulate_scalar(test, ref, b, e, tol, inf_equal, abs_errors, rel_errors));
    if (radix_tables != nullptr) count_radix_buckets(abs_errors, rel_errors, b, e, radix_tables);
  }
  return p;
}

// Every element of test against ref, on the OpenMP threads for large tensors (in contiguous
// ranges whose partials merge in order), into `c` and the per-element error buffers. With
// `count`, also counts the errors into `radix` (see RadixCounts), which it sets.
template <typename T>
void accumulate(const T* test, const T* ref, TensorComparison& c, bool inf_equal, std::vector<float>& abs_errors,
                std::vector<float>& rel_errors, bool count, std::optional<RadixCounts>& radix) {
  constexpr int64_t kPerThread = int64_t{1} << 13;
  const int64_t chunks = std::clamp<int64_t>(c.count / kPerThread, 1, std::max(omp_get_max_threads(), 1));
  std::vector<Partial> parts(static_cast<size_t>(chunks));
  if (count) radix.emplace(static_cast<size_t>(chunks));
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {
    parts[static_cast<size_t>(k)] =
        accumulate_range(test, ref, c.count * k / chunks, c.count * (k + 1) / chunks, c.tolerance, inf_equal,
                         abs_errors.data(), rel_errors.data(), radix ? radix->chunk(static_cast<size_t>(k)) : nullptr);
  }
  Partial p = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) p.merge(parts[k]);
  c.nan_test = p.nan_test, c.nan_ref = p.nan_ref, c.inf_test = p.inf_test, c.inf_ref = p.inf_ref;
  c.abs_max = p.abs_max;
  c.rel_max = p.rel_max;
  c.worst_index = p.worst;
  if (p.worst >= 0) {
    c.worst_test = static_cast<double>(test[p.worst]);
    c.worst_ref = static_cast<double>(ref[p.worst]);
  }
  c.mismatch_count = p.mismatches;
  const auto n = static_cast<double>(c.count);
  if (c.count > 0) {
    c.abs_mean = p.abs_nan ? kNaN : p.abs_sum / n;
    c.rel_mean = p.rel_nan ? kNaN : p.rel_sum / n;
  }
  if (p.abs_nan) c.abs_max = kNaN;
  if (p.rel_nan) c.rel_max = kNaN;
  const double dot = p.dot, test_sq = p.test_sq, ref_sq = p.ref_sq, err_sq = p.err_sq;
  c.cosine = (test_sq == 0 && ref_sq == 0) ? 1.0 : (test_sq == 0 || ref_sq == 0) ? 0.0 : dot / std::sqrt(test_sq * ref_sq);
  c.nmse = ref_sq == 0 ? (err_sq == 0 ? 0.0 : kInf) : err_sq / ref_sq;
  c.snr_db = err_sq == 0 ? kInf : 10.0 * std::log10(ref_sq / err_sq);
  c.min_atol = p.min_atol;
  c.min_rtol = p.min_rtol;
  if (radix) {
    // Every counted error is at most the largest, unless one is NaN (its bucket is above all).
    const auto end = [](bool nan, double max) {
      return nan ? kRadixBuckets : radix_bucket(static_cast<float>(max)) + 1;
    };
    radix->fold(end(p.abs_nan, p.abs_max), end(p.rel_nan, p.rel_max));
  }
}

// Whether no element of the float tensor `t` is NaN or infinite.
bool every_element_finite(const Tensor& t) {
  bool finite = true;
  dispatch_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      finite = all_finite(t.data<T>(), 0, t.numel());
    } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
      for (T v : t.values<T>()) finite = finite && std::isfinite(static_cast<float>(v));
    }
  });
  return finite;
}

// Counts `abs_errors` into the bins of error_histogram_bin_label.
std::vector<int64_t> histogram_of(const std::vector<float>& abs_errors) {
  static constexpr float kEdges[] = {1e-9f, 1e-8f, 1e-7f, 1e-6f, 1e-5f, 1e-4f, 1e-3f, 1e-2f, 1e-1f, 1.0f, 10.0f};
  std::vector<int64_t> bins(kErrorHistogramBins, 0);
  for (float e : abs_errors) {
    if (std::isnan(e)) {
      ++bins[kErrorHistogramBins - 1];
    } else if (e == 0) {
      ++bins[0];
    } else {
      ++bins[1 + static_cast<size_t>(std::upper_bound(std::begin(kEdges), std::end(kEdges), e) - std::begin(kEdges))];
    }
  }
  return bins;
}

}  // namespace

std::string error_histogram_bin_label(int bin) {
  if (bin <= 0) return "0";
  if (bin == 1) return "<1e-9";
  if (bin >= kErrorHistogramBins - 1) return "nan";
  if (bin == kErrorHistogramBins - 2) return ">=10";
  const int lo = bin - 11;  // bin 2 starts at 1e-9
  const auto decade = [](int e) { return e == 0 ? std::string("1") : e == 1 ? std::string("10") : fmt::format("1e{}", e); };
  return decade(lo) + ".." + decade(lo + 1);
}

std::string_view error_stat_name(ErrorStat stat) {
  switch (stat) {
    case ErrorStat::kElemwise: return "elemwise";
    case ErrorStat::kMax: return "max";
    case ErrorStat::kMean: return "mean";
    case ErrorStat::kMedian: return "median";
    case ErrorStat::kQuantile: return "quantile";
  }
  return "?";
}

std::optional<ErrorStat> error_stat_from_name(std::string_view name) {
  for (ErrorStat s : {ErrorStat::kElemwise, ErrorStat::kMax, ErrorStat::kMean, ErrorStat::kMedian, ErrorStat::kQuantile}) {
    if (error_stat_name(s) == name) return s;
  }
  return std::nullopt;
}

Tolerance CompareConfig::tolerance_for(std::string_view tensor_name) const {
  Tolerance t;
  t.atol = lookup(atol, tensor_name, t.atol);
  t.rtol = lookup(rtol, tensor_name, t.rtol);
  t.stat = lookup(stat, tensor_name, t.stat);
  t.quantile = lookup(quantile, tensor_name, t.quantile);
  return t;
}

namespace {

// compare_tensors; `shortcut` allows skipping the pass for tensors of the same bits.
TensorComparison compare_impl(std::string_view name, const Tensor& test, const Tensor& ref, const Tolerance& tolerance,
                              bool infinities_compare_equal, bool shortcut) {
  TensorComparison c;
  c.name = std::string(name);
  c.tolerance = tolerance;
  if (test.dtype() != ref.dtype() && dtype_is_float(test.dtype()) && dtype_is_float(ref.dtype()) &&
      test.shape() == ref.shape()) {
    // An fp64 reference, or a half-precision engine output: both are cast up, exactly, to the
    // wider of float32 and the two formats (numpy's promotion after Polygraphy's cast-up of half
    // formats), and compared in it.
    const DType common =
        test.dtype() == DType::kFloat64 || ref.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    const auto wide = [common](const Tensor& t) {
      return t.dtype() == common ? t : tensor_cast(t, common).value();
    };
    return compare_impl(name, wide(test), wide(ref), tolerance, infinities_compare_equal, shortcut);
  }
  if (test.dtype() != ref.dtype()) {
    c.mismatch = fmt::format("dtypes differ: {} vs {}", dtype_name(test.dtype()), dtype_name(ref.dtype()));
    return c;
  }
  if (test.shape() != ref.shape()) {
    c.mismatch = fmt::format("shapes differ: {} vs {}", shape_to_string(test.shape()), shape_to_string(ref.shape()));
    return c;
  }
  c.count = test.numel();
  if (test.dtype() == DType::kString) {
    const auto a = test.values<std::string>();
    const auto b = ref.values<std::string>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) {
        ++c.mismatch_count;
        if (c.worst_index < 0) c.worst_index = static_cast<int64_t>(i);
      }
    }
    c.passed = c.mismatch_count == 0;
    return c;
  }
  if (shortcut && c.count > 0 && dtype_is_float(test.dtype()) &&
      (test.raw() == ref.raw() || std::memcmp(test.raw(), ref.raw(), test.nbytes()) == 0) &&
      every_element_finite(test)) {
    // The same bits on both sides (one buffer, as when an engine returns the model's own weights
    // where the reference ran the Identity that exposes them; or equal copies, as when an engine
    // folded at build time what the reference computes): every element pairs with itself, so
    // every error is exactly zero. What a full pass would compute, without it; the comparison of
    // bytes stops at the first difference, so tensors that differ pay little for it. (Integers
    // are left to the pass: their zeros give NaN relative errors, as in Polygraphy.)
    dispatch_dtype(test.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, std::string>) c.worst_test = c.worst_ref = static_cast<double>(test.data<T>()[0]);
    });
    c.worst_index = 0;
    c.snr_db = kInf;
    c.passed = true;
    return c;
  }
  // Scratch reused across calls: a layer-wise comparison compares thousands of tensors, and fresh
  // buffers would cost a page fault per 4 KiB each time.
  // Buffers beyond 64 MiB are not kept for smaller tensors.
  thread_local std::vector<float> abs_errors, rel_errors;
  constexpr size_t kKeep = size_t{16} << 20;
  if (abs_errors.capacity() > kKeep && static_cast<size_t>(c.count) <= kKeep) {
    abs_errors = std::vector<float>();  // not `= {}`, which keeps the capacity
    rel_errors = std::vector<float>();
  }
  abs_errors.resize(static_cast<size_t>(c.count));
  rel_errors.resize(static_cast<size_t>(c.count));
  // Large tensors' quantiles come from radix selection, whose bucket counts the pass gathers.
  const bool radix = static_cast<size_t>(c.count) >= kRadixMin;
  std::optional<RadixCounts> radix_counts;
  dispatch_dtype(test.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      accumulate<T>(test.data<T>(), ref.data<T>(), c, infinities_compare_equal, abs_errors, rel_errors, radix,
                    radix_counts);
    }
  });
  const bool abs_nan = std::isnan(c.abs_max);
  const bool rel_nan = std::isnan(c.rel_max);
  c.abs_median = c.abs_quantile = c.rel_median = c.rel_quantile = kNaN;
  // The two selections are independent: on two threads when they are large. The buffers are
  // thread_local, so the other thread is handed this thread's by reference.
  std::vector<float>& abs_buffer = abs_errors;
  std::vector<float>& rel_buffer = rel_errors;
  const bool both = c.count >= kParallelSelect && omp_get_max_threads() > 1;
#pragma omp parallel sections num_threads(2) if (both)
  {
#pragma omp section
    if (!abs_nan) {
      const std::vector<double> q = quantiles(abs_buffer, radix ? radix_counts->abs() : nullptr, {0.5, tolerance.quantile});
      c.abs_median = q[0];
      c.abs_quantile = q[1];
    }
#pragma omp section
    if (!rel_nan) {
      const std::vector<double> q = quantiles(rel_buffer, radix ? radix_counts->rel() : nullptr, {0.5, tolerance.quantile});
      c.rel_median = q[0];
      c.rel_quantile = q[1];
    }
  }

  double s_abs = 0, s_rel = 0;
  switch (tolerance.stat) {
    case ErrorStat::kElemwise:
      c.passed = c.mismatch_count == 0;
      if (!c.passed) c.abs_error_histogram = histogram_of(abs_errors);
      return c;
    case ErrorStat::kMax: s_abs = c.abs_max, s_rel = c.rel_max; break;
    case ErrorStat::kMean: s_abs = c.abs_mean, s_rel = c.rel_mean; break;
    case ErrorStat::kMedian: s_abs = c.abs_median, s_rel = c.rel_median; break;
    case ErrorStat::kQuantile: s_abs = c.abs_quantile, s_rel = c.rel_quantile; break;
  }
  // Polygraphy does not guard the mean of an empty tensor; it is NaN there, which fails.
  if (c.count == 0 && tolerance.stat == ErrorStat::kMean) s_abs = s_rel = kNaN;
  const bool abs_fails = exceeds(s_abs, tolerance.atol);
  const bool rel_fails = exceeds(s_rel, tolerance.rtol);
  c.passed = !(abs_fails && rel_fails);
  c.min_atol = rel_fails ? (std::isnan(s_abs) ? kInf : s_abs) : 0.0;
  c.min_rtol = abs_fails ? (std::isnan(s_rel) ? kInf : s_rel) : 0.0;
  if (!c.passed) c.abs_error_histogram = histogram_of(abs_errors);
  return c;
}

}  // namespace

TensorComparison compare_tensors(std::string_view name, const Tensor& test, const Tensor& ref,
                                 const Tolerance& tolerance, bool infinities_compare_equal) {
  return compare_impl(name, test, ref, tolerance, infinities_compare_equal, true);
}

TensorComparison compare_tensors_full_pass(std::string_view name, const Tensor& test, const Tensor& ref,
                                           const Tolerance& tolerance, bool infinities_compare_equal) {
  return compare_impl(name, test, ref, tolerance, infinities_compare_equal, false);
}

bool ResultsComparison::passed() const {
  if (tensors.empty()) return false;
  return std::all_of(tensors.begin(), tensors.end(), [](const TensorComparison& c) { return c.passed; });
}

ResultsComparison compare_results(const TensorMap& test, const TensorMap& ref, const CompareConfig& config,
                                  bool fail_fast) {
  ResultsComparison r;
  for (const NamedTensor& t : test) {
    const Tensor* other = ref.find(t.name);
    if (!other) {
      r.only_in_test.push_back(t.name);
      continue;
    }
    r.tensors.push_back(
        compare_tensors(t.name, t.tensor, *other, config.tolerance_for(t.name), config.infinities_compare_equal));
    if (fail_fast && !r.tensors.back().passed) return r;
  }
  for (const NamedTensor& t : ref) {
    if (!test.contains(t.name)) r.only_in_ref.push_back(t.name);
  }
  return r;
}

}  // namespace vn
