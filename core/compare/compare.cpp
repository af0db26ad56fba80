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

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/common/parallel.h"
#include "core/common/threads.h"
#include "core/compare/element_errors.h"
#include "core/compare/quantiles.h"
#include "core/compare/radix_select.h"

namespace vn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Below this many elements, quantiles select in place instead of by radix (measured: in place
// wins at 2K elements, radix at 4K by 2x).
constexpr size_t kRadixMin = 4096;
// From this many elements, the abs and rel selections run on two threads.
constexpr int64_t kParallelSelect = int64_t{1} << 15;

using namespace compare_detail;
using namespace radix;

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

// Elements [lo, hi), whose errors are abs[i - lo] and rel[i - lo], one by one. Each error meets
// the tolerances rounded to its type, as numpy compares a float32 array with a Python float.
template <typename T>
Partial accumulate_scalar(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol,
                          const ErrorType<T>* abs, const ErrorType<T>* rel) {
  constexpr bool kFloat = !std::is_integral_v<T>;
  using C = ErrorType<T>;
  constexpr C kCInf = std::numeric_limits<C>::infinity();
  const auto atol = static_cast<C>(tol.atol), rtol = static_cast<C>(tol.rtol);
  double abs_sum = 0, rel_sum = 0, dot = 0, test_sq = 0, ref_sq = 0, err_sq = 0;
  bool abs_nan = false, rel_nan = false;
  C min_atol = 0, min_rtol = 0, abs_max = 0, rel_max = 0;
  int64_t worst = -1, mismatches = 0;
  Partial p;
  for (int64_t i = lo; i < hi; ++i) {
    const C abs_err = abs[i - lo], rel_err = rel[i - lo];
    const auto a = static_cast<double>(static_cast<C>(test[i])), b = static_cast<double>(static_cast<C>(ref[i]));
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

    const bool abs_fails = std::isnan(abs_err) || abs_err > atol;
    const bool rel_fails = std::isnan(rel_err) || rel_err > rtol;
    if (abs_fails && rel_fails) ++mismatches;
    // The element must be covered by atol when rtol does not cover it, and vice versa.
    if (rel_fails) min_atol = std::isnan(abs_err) ? kCInf : std::max(min_atol, abs_err);
    if (abs_fails) min_rtol = std::isnan(rel_err) ? kCInf : std::max(min_rtol, rel_err);

    if (std::isfinite(a) && std::isfinite(b)) {
      dot += a * b;
      test_sq += a * a;
      ref_sq += b * b;
      err_sq += (a - b) * (a - b);
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

// Elements [lo, hi) of float32 or float64 tensors when all of them are finite: their errors into
// abs[i - lo] and rel[i - lo] (float_errors, which for finite elements is element_errors) and what
// accumulate_scalar gives, in SIMD lanes. The lanes' sums reassociate, as the merge of thread
// partials does; maxima and counts are exact. Returns false, having changed nothing but the
// errors, when an element is not finite (or the two differ by more than T holds).
template <typename T>
bool accumulate_finite_block(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol, T* abs, T* rel,
                             Partial& p) {
  constexpr T kMax = std::numeric_limits<T>::max();
  const auto atol = static_cast<T>(tol.atol), rtol = static_cast<T>(tol.rtol);
  const int64_t n = hi - lo;
  const T* t = test + lo;
  const T* r = ref + lo;
  // Two loops over the block (it stays in L1): one accumulator set each keeps the lanes in
  // registers instead of spilling them. The first also looks for what is not finite: an infinite
  // or NaN element makes its error or its |ref| so.
  T abs_max = 0, rel_max = 0, min_atol = 0, min_rtol = 0;
  double abs_sum = 0, rel_sum = 0;
  int mismatches = 0, not_finite = 0;
#pragma omp simd reduction(+ : abs_sum, rel_sum, mismatches, not_finite) \
    reduction(max : abs_max, rel_max, min_atol, min_rtol)
  for (int64_t i = 0; i < n; ++i) {
    T abs_err, rel_err;
    float_errors(t[i], r[i], abs_err, rel_err);
    abs[i] = abs_err;
    rel[i] = rel_err;
    not_finite += static_cast<int>(!(abs_err <= kMax)) | static_cast<int>(!(std::abs(r[i]) <= kMax));
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
  const int64_t half = n / 2;
  double dot0 = 0, test_sq0 = 0, ref_sq0 = 0, err_sq0 = 0, dot1 = 0, test_sq1 = 0, ref_sq1 = 0, err_sq1 = 0;
#pragma omp simd reduction(+ : dot0, test_sq0, ref_sq0, err_sq0, dot1, test_sq1, ref_sq1, err_sq1)
  for (int64_t j = 0; j < half; ++j) {
    const double a0 = static_cast<double>(t[j]), b0 = static_cast<double>(r[j]);
    const double a1 = static_cast<double>(t[half + j]), b1 = static_cast<double>(r[half + j]);
    dot0 += a0 * b0, test_sq0 += a0 * a0, ref_sq0 += b0 * b0, err_sq0 += (a0 - b0) * (a0 - b0);
    dot1 += a1 * b1, test_sq1 += a1 * a1, ref_sq1 += b1 * b1, err_sq1 += (a1 - b1) * (a1 - b1);
  }
  for (int64_t j = 2 * half; j < n; ++j) {
    const double a = static_cast<double>(t[j]), b = static_cast<double>(r[j]);
    dot0 += a * b, test_sq0 += a * a, ref_sq0 += b * b, err_sq0 += (a - b) * (a - b);
  }
  // The worst element is the first largest error: the block's first element reaching its maximum,
  // when that beats what came before.
  if (p.worst < 0 || abs_max > p.abs_max) {
    int64_t i = 0;
    while (abs[i] != abs_max) ++i;
    p.worst = lo + i;
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

// One pass over elements [lo, hi) in blocks: each block's errors and statistics, through SIMD
// lanes for float32 and float64 blocks while they are finite and no NaN error has appeared (the
// worst element is then fixed), else by element_errors and accumulate_scalar. With
// `radix_tables`, the errors are counted into them (see count_radix_buckets); with `abs_keep` and
// `rel_keep`, they are also copied there as float, at their element's index.
template <typename T>
Partial accumulate_range(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol, bool inf_equal,
                         uint32_t* radix_tables, float* abs_keep, float* rel_keep) {
  using C = ErrorType<T>;
  alignas(64) std::array<C, kBlock> abs, rel;
  Partial p;
  for (int64_t b = lo; b < hi; b += kBlock) {
    const int64_t e = std::min(hi, b + kBlock);
    bool done = false;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      done = !p.abs_nan && accumulate_finite_block(test, ref, b, e, tol, abs.data(), rel.data(), p);
    }
    if (!done) {
      element_errors(test, ref, b, e, inf_equal, abs.data(), rel.data());
      p.merge(accumulate_scalar(test, ref, b, e, tol, abs.data(), rel.data()));
    }
    if (radix_tables != nullptr) count_radix_buckets(abs.data(), rel.data(), e - b, radix_tables);
    if (abs_keep != nullptr) {
      for (int64_t i = b; i < e; ++i) {
        abs_keep[i] = static_cast<float>(abs[static_cast<size_t>(i - b)]);
        rel_keep[i] = static_cast<float>(rel[static_cast<size_t>(i - b)]);
      }
    }
  }
  return p;
}

// How many contiguous chunks a pass over n elements is cut into, one per thread (default_threads)
// but with at least 8K elements each.
int64_t pass_chunks(int64_t n) {
  constexpr int64_t kPerThread = int64_t{1} << 13;
  return std::clamp<int64_t>(n / kPerThread, 1, default_threads());
}

// Every element of test against ref, on several threads for large tensors (in contiguous
// ranges whose partials merge in order), into `c`. With `count`, also counts the errors into
// `radix` (see RadixCounts), which it sets; with `abs_keep` and `rel_keep` (c.count each), copies
// the errors there.
template <typename T>
void accumulate(const T* test, const T* ref, TensorComparison& c, bool inf_equal, bool count,
                std::optional<RadixCounts>& radix, float* abs_keep, float* rel_keep) {
  const int64_t chunks = pass_chunks(c.count);
  std::vector<Partial> parts(static_cast<size_t>(chunks));
  if (count) radix.emplace(static_cast<size_t>(chunks));
  parallel_for(static_cast<int>(chunks), chunks, [&](int64_t k) {
    parts[static_cast<size_t>(k)] =
        accumulate_range(test, ref, c.count * k / chunks, c.count * (k + 1) / chunks, c.tolerance, inf_equal,
                         radix ? radix->chunk(static_cast<size_t>(k)) : nullptr, abs_keep, rel_keep);
  });
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

// The second pass of radix selection: the errors of every element again, block by block, those in
// `abs`'s buckets into abs_out and those in `rel`'s into rel_out (either selection may be absent),
// on several threads for large tensors. The errors are read from `abs_kept` and `rel_kept` when
// the first pass kept them, else computed again. The order of the gathered errors is unspecified.
template <typename T>
void gather_errors(const T* test, const T* ref, int64_t count, bool inf_equal, const float* abs_kept,
                   const float* rel_kept, const RadixSelection* abs, const RadixSelection* rel,
                   std::vector<float>& abs_out, std::vector<float>& rel_out) {
  using C = ErrorType<T>;
  const int64_t chunks = pass_chunks(count);
  // Per chunk, room for all it may keep: however the errors fall, a block's stores stay inside.
  const auto room = [](const RadixSelection* s) { return s ? s->total() + kBlock + kGatherSlack : 0; };
  std::vector<std::vector<float>> abs_parts(static_cast<size_t>(chunks)), rel_parts(static_cast<size_t>(chunks));
  parallel_for(static_cast<int>(chunks), chunks, [&](int64_t k) {
    std::vector<float>& abs_part = abs_parts[static_cast<size_t>(k)];
    std::vector<float>& rel_part = rel_parts[static_cast<size_t>(k)];
    abs_part.resize(room(abs));
    rel_part.resize(room(rel));
    size_t abs_fill = 0, rel_fill = 0;
    alignas(64) std::array<C, kBlock> abs_errors, rel_errors;
    alignas(64) std::array<float, kBlock> narrow;
    for (int64_t b = count * k / chunks, hi = count * (k + 1) / chunks; b < hi; b += kBlock) {
      const int64_t e = std::min(hi, b + kBlock);
      const auto n = static_cast<size_t>(e - b);
      if (abs_kept == nullptr) element_errors(test, ref, b, e, inf_equal, abs_errors.data(), rel_errors.data());
      const auto keep = [&](const RadixSelection* s, const float* kept, const std::array<C, kBlock>& errors,
                            std::vector<float>& out, size_t& fill) {
        // More than the counts said only if the two passes disagreed: then stop keeping, rather
        // than write past the room.
        if (s == nullptr || fill > s->total()) return;
        const float* v = nullptr;
        if (kept != nullptr) {
          v = kept + b;
        } else if constexpr (std::is_same_v<C, float>) {
          v = errors.data();
        } else {
          for (size_t i = 0; i < n; ++i) narrow[i] = static_cast<float>(errors[i]);
          v = narrow.data();
        }
        fill += s->filter().gather(v, n, out.data() + fill);
      };
      keep(abs, abs_kept, abs_errors, abs_part, abs_fill);
      keep(rel, rel_kept, rel_errors, rel_part, rel_fill);
    }
    abs_part.resize(std::min(abs_fill, abs_part.size()));
    rel_part.resize(std::min(rel_fill, rel_part.size()));
  });
  abs_out = std::move(abs_parts[0]);
  rel_out = std::move(rel_parts[0]);
  for (size_t k = 1; k < abs_parts.size(); ++k) {
    abs_out.insert(abs_out.end(), abs_parts[k].begin(), abs_parts[k].end());
    rel_out.insert(rel_out.end(), rel_parts[k].begin(), rel_parts[k].end());
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

// The abs errors of every element, counted into the bins of error_histogram_bin_label. Per block,
// SIMD lanes count the zeros, the NaNs and the errors at or above each decade's edge; the bins
// are the differences of those counts (a NaN is at or above no edge).
template <typename T>
std::vector<int64_t> histogram_of(const T* test, const T* ref, int64_t count, bool inf_equal) {
  static constexpr std::array<float, 11> kEdges = {1e-9f, 1e-8f, 1e-7f, 1e-6f, 1e-5f, 1e-4f,
                                                   1e-3f, 1e-2f, 1e-1f, 1.0f,  10.0f};
  std::array<int64_t, kEdges.size()> at_least{};
  int64_t zeros = 0, nans = 0;
  std::array<ErrorType<T>, kBlock> abs, rel;
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t e = std::min(count, b + kBlock);
    element_errors(test, ref, b, e, inf_equal, abs.data(), rel.data());
    int block_zeros = 0, block_nans = 0;
    std::array<int, kEdges.size()> block_at_least{};
    for (size_t j = 0; j < kEdges.size(); ++j) {
      const float edge = kEdges[j];
      int n = 0;
#pragma omp simd reduction(+ : n)
      for (int64_t i = 0; i < e - b; ++i) n += static_cast<float>(abs[static_cast<size_t>(i)]) >= edge ? 1 : 0;
      block_at_least[j] = n;
    }
#pragma omp simd reduction(+ : block_zeros, block_nans)
    for (int64_t i = 0; i < e - b; ++i) {
      const auto v = static_cast<float>(abs[static_cast<size_t>(i)]);
      block_zeros += v == 0 ? 1 : 0;
      block_nans += v != v ? 1 : 0;
    }
    zeros += block_zeros;
    nans += block_nans;
    for (size_t j = 0; j < kEdges.size(); ++j) at_least[j] += block_at_least[j];
  }
  std::vector<int64_t> bins(kErrorHistogramBins, 0);
  bins[0] = zeros;
  bins[1] = count - zeros - nans - at_least[0];
  for (size_t j = 1; j < kEdges.size(); ++j) bins[j + 1] = at_least[j - 1] - at_least[j];
  bins[kEdges.size() + 1] = at_least.back();
  bins[kErrorHistogramBins - 1] = nans;
  return bins;
}

// Median and quantile q of the abs and rel errors of every element into `c` (whose abs_max and
// rel_max tell which hold NaN: those have none). Small tensors select in place on their errors,
// `abs_kept` and `rel_kept`; large ones by radix selection on `radix`'s counts, gathering from the
// kept errors when there are any (c.count of them).
template <typename T>
void error_quantiles(const T* test, const T* ref, TensorComparison& c, bool inf_equal, double q,
                     const std::optional<RadixCounts>& radix, std::vector<float>& abs_kept,
                     std::vector<float>& rel_kept) {
  const bool abs_nan = std::isnan(c.abs_max), rel_nan = std::isnan(c.rel_max);
  c.abs_median = c.abs_quantile = c.rel_median = c.rel_quantile = kNaN;
  const auto n = static_cast<size_t>(c.count);
  if (n == 0) {
    c.abs_median = c.abs_quantile = c.rel_median = c.rel_quantile = 0;
    return;
  }
  if (!radix) {
    if (!abs_nan) {
      const std::vector<double> v = quantiles_in_place(abs_kept, {0.5, q});
      c.abs_median = v[0], c.abs_quantile = v[1];
    }
    if (!rel_nan) {
      const std::vector<double> v = quantiles_in_place(rel_kept, {0.5, q});
      c.rel_median = v[0], c.rel_quantile = v[1];
    }
    return;
  }
  std::optional<RadixSelection> abs, rel;
  if (!abs_nan) abs.emplace(radix->abs(), quantile_ranks(n, {0.5, q}));
  if (!rel_nan) rel.emplace(radix->rel(), quantile_ranks(n, {0.5, q}));
  if (!abs && !rel) return;
  std::vector<float> abs_gathered, rel_gathered;
  const bool kept = abs_kept.size() == n;
  gather_errors(test, ref, c.count, inf_equal, kept ? abs_kept.data() : nullptr, kept ? rel_kept.data() : nullptr,
                abs ? &*abs : nullptr, rel ? &*rel : nullptr, abs_gathered, rel_gathered);
  // The two selections are independent: on two threads when they are large.
  const bool both = c.count >= kParallelSelect && default_threads() > 1;
  parallel_for(both ? 2 : 1, 2, [&](int64_t which) {
    if (which == 0 && abs) {
      const std::vector<float> at = abs->select(abs_gathered);
      const std::vector<double> v = interpolate_quantiles<float>(n, {0.5, q}, abs->ranks(), at.data());
      c.abs_median = v[0], c.abs_quantile = v[1];
    }
    if (which == 1 && rel) {
      const std::vector<float> at = rel->select(rel_gathered);
      const std::vector<double> v = interpolate_quantiles<float>(n, {0.5, q}, rel->ranks(), at.data());
      c.rel_median = v[0], c.rel_quantile = v[1];
    }
  });
}

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
  if (dtype_is_narrow(test.dtype())) {
    // float8/float4 values are compared in float32 and int4/int2 values in int8, all exactly.
    const DType wide = narrow_is_integer(*dtype_narrow_format(test.dtype())) ? DType::kInt8 : DType::kFloat32;
    return compare_impl(name, tensor_cast(test, wide).value(), tensor_cast(ref, wide).value(), tolerance,
                        infinities_compare_equal, shortcut);
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
      if constexpr (!std::is_same_v<T, std::string> && !is_narrow_v<T>) c.worst_test = c.worst_ref = static_cast<double>(test.data<T>()[0]);
    });
    c.worst_index = 0;
    c.snr_db = kInf;
    c.passed = true;
    return c;
  }
  // Large tensors' quantiles come from radix selection (see error_quantiles). Tensors up to
  // kKeepErrors elements keep their errors in a scratch of this thread's (128 KiB, in L2): small
  // ones to select in place, the others so that the selection gathers from them instead of
  // computing them again. Larger tensors hold no tensor-sized scratch (at 64K elements, the
  // layer-wise Transformer's peak grew by the two threads' scratch, 1 MiB).
  constexpr int64_t kKeepErrors = int64_t{1} << 14;
  const bool radix = static_cast<size_t>(c.count) >= kRadixMin;
  const bool keep = c.count <= kKeepErrors;
  thread_local std::vector<float> abs_kept, rel_kept;
  abs_kept.resize(keep ? static_cast<size_t>(c.count) : 0);
  rel_kept.resize(abs_kept.size());
  std::optional<RadixCounts> radix_counts;
  dispatch_dtype(test.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string> && !is_narrow_v<T>) {
      accumulate<T>(test.data<T>(), ref.data<T>(), c, infinities_compare_equal, radix, radix_counts,
                    keep ? abs_kept.data() : nullptr, keep ? rel_kept.data() : nullptr);
      error_quantiles<T>(test.data<T>(), ref.data<T>(), c, infinities_compare_equal, tolerance.quantile, radix_counts,
                         abs_kept, rel_kept);
    }
  });
  const auto histogram = [&] {
    std::vector<int64_t> bins;
    dispatch_dtype(test.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, std::string> && !is_narrow_v<T>) {
        bins = histogram_of<T>(test.data<T>(), ref.data<T>(), c.count, infinities_compare_equal);
      }
    });
    return bins;
  };

  double s_abs = 0, s_rel = 0;
  switch (tolerance.stat) {
    case ErrorStat::kElemwise:
      c.passed = c.mismatch_count == 0;
      if (!c.passed) c.abs_error_histogram = histogram();
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
  if (!c.passed) c.abs_error_histogram = histogram();
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
