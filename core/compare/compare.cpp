// SPDX-License-Identifier: Apache-2.0
#include "core/compare/compare.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <optional>

#include <omp.h>

namespace vn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// numpy's float64 epsilon, which Polygraphy substitutes for exact zeros in the denominator.
constexpr double kZeroDenominator = 2.220446049250313e-16;

template <typename Map>
auto lookup(const Map& map, std::string_view name, typename Map::mapped_type fallback) {
  if (auto it = map.find(name); it != map.end()) return it->second;
  if (auto it = map.find(""); it != map.end()) return it->second;
  return fallback;
}

// The order statistics of non-negative, non-NaN floats, found exactly by radix selection: the bit
// patterns of such floats sort as the values do, so one pass histograms the top 16 bits, which
// locates the bucket of each wanted rank, and a second pass sorts only the few values in those
// buckets. Two streaming passes instead of one nth_element per rank.
class OrderStatistics {
 public:
  explicit OrderStatistics(const std::vector<float>& values) : values_(values), starts_(kBuckets + 1, 0) {
    // 32-bit counts keep the histogram in L2 while it is filled at random.
    std::vector<uint32_t> counts(kBuckets, 0);
    for (float v : values) ++counts[bucket(v)];
    for (size_t b = 0; b < kBuckets; ++b) starts_[b + 1] = starts_[b] + counts[b];
  }

  /// The value of each rank (0-based, ascending). Kept out of line: inlined into its caller, its
  /// scan loses its registers and runs about 15% slower.
  [[gnu::noinline]] std::vector<double> at_ranks(const std::vector<size_t>& ranks) const {
    std::vector<size_t> buckets;
    for (size_t r : ranks) {
      if (std::find(buckets.begin(), buckets.end(), bucket_of_rank(r)) == buckets.end()) {
        buckets.push_back(bucket_of_rank(r));
      }
    }
    std::vector<int8_t> slot(kBuckets, -1);
    std::vector<std::vector<float>> members(buckets.size());
    for (size_t k = 0; k < buckets.size(); ++k) {
      slot[buckets[k]] = static_cast<int8_t>(k);
      members[k].reserve(starts_[buckets[k] + 1] - starts_[buckets[k]]);
    }
    for (float v : values_) {
      const int8_t k = slot[bucket(v)];
      if (k >= 0) members[static_cast<size_t>(k)].push_back(v);
    }
    for (auto& m : members) std::sort(m.begin(), m.end());
    std::vector<double> out;
    for (size_t r : ranks) {
      const size_t b = bucket_of_rank(r);
      out.push_back(members[static_cast<size_t>(slot[b])][r - starts_[b]]);
    }
    return out;
  }

 private:
  static constexpr size_t kBuckets = 65536;
  static size_t bucket(float v) { return std::bit_cast<uint32_t>(v) >> 16; }
  size_t bucket_of_rank(size_t r) const {
    return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), r) - starts_.begin()) - 1;
  }

  const std::vector<float>& values_;
  std::vector<size_t> starts_;  // per bucket: the rank of its first value
};

// numpy.quantile with linear interpolation over NaN-free `values` (reordered in place), for each
// q. The ranks come from selection in place for small inputs, where OrderStatistics' 64K-bucket
// histogram would cost more than it saves, and from radix selection for large ones.
std::vector<double> quantiles(std::vector<float>& values, std::initializer_list<double> qs) {
  if (values.empty()) return std::vector<double>(qs.size(), 0.0);
  const size_t last = values.size() - 1;
  std::vector<size_t> ranks;  // per quantile: floor(pos) and the rank after it
  for (double q : qs) {
    const auto lo = static_cast<size_t>(std::floor(q * static_cast<double>(last)));
    ranks.push_back(lo);
    ranks.push_back(std::min(lo + 1, last));
  }
  std::vector<double> at;
  if (values.size() >= (size_t{1} << 18)) {
    at = OrderStatistics(values).at_ranks(ranks);
  } else {
    // Ranks in ascending order, each selected among what lies above the previous one (a selection
    // leaves everything before its rank no larger and everything after no smaller); a rank right
    // after the previous one is the smallest value above it, found by a scan.
    std::vector<size_t> order(ranks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
    at.assign(ranks.size(), 0.0);
    std::optional<size_t> previous;
    for (size_t i : order) {
      const size_t r = ranks[i];
      const auto begin = values.begin() + static_cast<std::ptrdiff_t>(previous ? *previous + 1 : 0);
      if (previous && r == *previous + 1) {
        std::iter_swap(values.begin() + static_cast<std::ptrdiff_t>(r), std::min_element(begin, values.end()));
      } else if (!previous || r != *previous) {
        std::nth_element(begin, values.begin() + static_cast<std::ptrdiff_t>(r), values.end());
      }
      at[i] = values[r];
      previous = r;
    }
  }
  std::vector<double> out;
  size_t i = 0;
  for (double q : qs) {
    const double pos = q * static_cast<double>(last);
    const double frac = pos - std::floor(pos);
    out.push_back(frac == 0 ? at[2 * i] : at[2 * i] + (at[2 * i + 1] - at[2 * i]) * frac);
    ++i;
  }
  return out;
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

// One pass over elements [lo, hi), reading them as double whatever their type.
template <typename T>
Partial accumulate_range(const T* test, const T* ref, int64_t lo, int64_t hi, const Tolerance& tol, bool inf_equal,
                         float* abs_errors, float* rel_errors) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  double abs_sum = 0, rel_sum = 0, dot = 0, test_sq = 0, ref_sq = 0, err_sq = 0;
  bool abs_nan = false, rel_nan = false;
  double min_atol = 0, min_rtol = 0;
  double abs_max = 0, rel_max = 0;
  int64_t worst = -1, mismatches = 0;
  Partial p;
  for (int64_t i = lo; i < hi; ++i) {
    const double a = static_cast<double>(test[i]);
    const double b = static_cast<double>(ref[i]);
    if constexpr (kFloat) {
      // The common case, both finite and no NaN seen yet: branch-free updates, locals only.
      if (std::isfinite(a) && std::isfinite(b) && !abs_nan) {
        const double abs_err = std::abs(a - b);
        const double denom = b == 0.0 ? kZeroDenominator : std::abs(b);
        const double rel_err = abs_err / denom;
        if (abs_err > abs_max || worst < 0) {
          abs_max = abs_err;
          worst = i;
        }
        rel_max = std::max(rel_max, rel_err);
        abs_sum += abs_err;
        rel_sum += rel_err;
        abs_errors[i] = static_cast<float>(abs_err);
        rel_errors[i] = static_cast<float>(rel_err);
        const bool abs_fails = abs_err > tol.atol;
        const bool rel_fails = rel_err > tol.rtol;
        mismatches += (abs_fails && rel_fails) ? 1 : 0;
        min_atol = std::max(min_atol, rel_fails ? abs_err : 0.0);
        min_rtol = std::max(min_rtol, abs_fails ? rel_err : 0.0);
        dot += a * b;
        test_sq += a * a;
        ref_sq += b * b;
        err_sq += (a - b) * (a - b);
        continue;
      }
    }
    double abs_err;
    if constexpr (kBool) {
      abs_err = (test[i] != ref[i]) ? 1.0 : 0.0;
    } else {
      abs_err = (inf_equal && std::isinf(a) && a == b) ? 0.0 : std::abs(a - b);
    }
    double denom = std::abs(b);
    if (kFloat && denom == 0.0) denom = kZeroDenominator;
    const double rel_err = abs_err / denom;  // integer refs of 0 give inf (or NaN for 0/0), as numpy does

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
    abs_sum += abs_err;
    rel_sum += rel_err;
    abs_errors[i] = static_cast<float>(abs_err);
    rel_errors[i] = static_cast<float>(rel_err);

    const bool abs_fails = exceeds(abs_err, tol.atol);
    const bool rel_fails = exceeds(rel_err, tol.rtol);
    if (abs_fails && rel_fails) ++mismatches;
    // The element must be covered by atol when rtol does not cover it, and vice versa.
    if (rel_fails) min_atol = std::isnan(abs_err) ? kInf : std::max(min_atol, abs_err);
    if (abs_fails) min_rtol = std::isnan(rel_err) ? kInf : std::max(min_rtol, rel_err);

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

// Every element of test against ref, on the OpenMP threads for large tensors (in contiguous
// ranges whose partials merge in order), into `c` and the per-element error buffers.
template <typename T>
void accumulate(const T* test, const T* ref, TensorComparison& c, bool inf_equal, std::vector<float>& abs_errors,
                std::vector<float>& rel_errors) {
  constexpr int64_t kPerThread = int64_t{1} << 16;
  const int64_t chunks = std::clamp<int64_t>(c.count / kPerThread, 1, std::max(omp_get_max_threads(), 1));
  std::vector<Partial> parts(static_cast<size_t>(chunks));
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {
    parts[static_cast<size_t>(k)] = accumulate_range(test, ref, c.count * k / chunks, c.count * (k + 1) / chunks,
                                                     c.tolerance, inf_equal, abs_errors.data(), rel_errors.data());
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

TensorComparison compare_tensors(std::string_view name, const Tensor& test, const Tensor& ref,
                                 const Tolerance& tolerance, bool infinities_compare_equal) {
  TensorComparison c;
  c.name = std::string(name);
  c.tolerance = tolerance;
  if (test.dtype() != ref.dtype() && dtype_is_float(test.dtype()) && dtype_is_float(ref.dtype()) &&
      test.shape() == ref.shape()) {
    // An fp64 reference, or a half-precision engine output: every float format widens exactly
    // to double, so the two are compared without rounding either.
    const auto wide = [](const Tensor& t) {
      return t.dtype() == DType::kFloat64 ? t : tensor_cast(t, DType::kFloat64).value();
    };
    return compare_tensors(name, wide(test), wide(ref), tolerance, infinities_compare_equal);
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
  // Scratch reused across calls: a layer-wise comparison compares thousands of tensors, and fresh
  // buffers would cost a page fault per 4 KiB each time.
  // Buffers beyond 64 MiB are not kept for smaller tensors.
  thread_local std::vector<float> abs_errors, rel_errors;
  constexpr size_t kKeep = size_t{16} << 20;
  if (abs_errors.capacity() > kKeep && static_cast<size_t>(c.count) <= kKeep) {
    abs_errors = {};
    rel_errors = {};
  }
  abs_errors.resize(static_cast<size_t>(c.count));
  rel_errors.resize(static_cast<size_t>(c.count));
  dispatch_dtype(test.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      accumulate<T>(test.data<T>(), ref.data<T>(), c, infinities_compare_equal, abs_errors, rel_errors);
    }
  });
  const bool abs_nan = std::isnan(c.abs_max);
  const bool rel_nan = std::isnan(c.rel_max);
  c.abs_median = c.abs_quantile = c.rel_median = c.rel_quantile = kNaN;
  // The two selections are independent: on two threads when they are large. The buffers are
  // thread_local, so the other thread is handed this thread's by reference.
  std::vector<float>& abs_buffer = abs_errors;
  std::vector<float>& rel_buffer = rel_errors;
  const bool both = c.count >= (int64_t{1} << 18) && omp_get_max_threads() > 1;
#pragma omp parallel sections num_threads(2) if (both)
  {
#pragma omp section
    if (!abs_nan) {
      const std::vector<double> q = quantiles(abs_buffer, {0.5, tolerance.quantile});
      c.abs_median = q[0];
      c.abs_quantile = q[1];
    }
#pragma omp section
    if (!rel_nan) {
      const std::vector<double> q = quantiles(rel_buffer, {0.5, tolerance.quantile});
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
