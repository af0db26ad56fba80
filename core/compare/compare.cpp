// SPDX-License-Identifier: Apache-2.0
#include "core/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

// numpy.quantile with linear interpolation over `values` (reordered in place). NaN if any value is
// NaN, as numpy returns; the caller knows whether one is present.
double quantile_of(std::vector<float>& values, double q) {
  if (values.empty()) return 0.0;
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double lo_value = values[lo];
  if (lo + 1 >= values.size() || pos == static_cast<double>(lo)) return lo_value;
  const double hi_value = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return lo_value + (hi_value - lo_value) * (pos - static_cast<double>(lo));
}

bool exceeds(double value, double tolerance) { return std::isnan(value) || value > tolerance; }

// One pass over the elements, reading them as double whatever their type.
template <typename T>
void accumulate(const T* test, const T* ref, TensorComparison& c, bool inf_equal, std::vector<float>& abs_errors,
                std::vector<float>& rel_errors) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  const Tolerance& tol = c.tolerance;
  double abs_sum = 0, rel_sum = 0, dot = 0, test_sq = 0, ref_sq = 0, err_sq = 0;
  bool abs_nan = false, rel_nan = false;
  double min_atol = 0, min_rtol = 0;
  for (int64_t i = 0; i < c.count; ++i) {
    const double a = static_cast<double>(test[i]);
    const double b = static_cast<double>(ref[i]);
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
      if (std::isnan(a)) ++c.nan_test;
      if (std::isnan(b)) ++c.nan_ref;
      if (std::isinf(a)) ++c.inf_test;
      if (std::isinf(b)) ++c.inf_ref;
    }
    if (std::isnan(abs_err)) {
      if (!abs_nan) {
        c.worst_index = i;
        c.worst_test = a;
        c.worst_ref = b;
      }
      abs_nan = true;
    } else if (!abs_nan && (c.worst_index < 0 || abs_err > c.abs_max)) {
      c.abs_max = abs_err;
      c.worst_index = i;
      c.worst_test = a;
      c.worst_ref = b;
    }
    if (std::isnan(rel_err)) {
      rel_nan = true;
    } else if (rel_err > c.rel_max) {
      c.rel_max = rel_err;
    }
    abs_sum += abs_err;
    rel_sum += rel_err;
    abs_errors[static_cast<size_t>(i)] = static_cast<float>(abs_err);
    rel_errors[static_cast<size_t>(i)] = static_cast<float>(rel_err);

    const bool abs_fails = exceeds(abs_err, tol.atol);
    const bool rel_fails = exceeds(rel_err, tol.rtol);
    if (abs_fails && rel_fails) ++c.mismatch_count;
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
  const auto n = static_cast<double>(c.count);
  if (c.count > 0) {
    c.abs_mean = abs_nan ? kNaN : abs_sum / n;
    c.rel_mean = rel_nan ? kNaN : rel_sum / n;
  }
  if (abs_nan) c.abs_max = kNaN;
  if (rel_nan) c.rel_max = kNaN;
  c.cosine = (test_sq == 0 && ref_sq == 0) ? 1.0 : (test_sq == 0 || ref_sq == 0) ? 0.0 : dot / std::sqrt(test_sq * ref_sq);
  c.nmse = ref_sq == 0 ? (err_sq == 0 ? 0.0 : kInf) : err_sq / ref_sq;
  c.snr_db = err_sq == 0 ? kInf : 10.0 * std::log10(ref_sq / err_sq);
  c.min_atol = min_atol;
  c.min_rtol = min_rtol;
}

}  // namespace

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
  std::vector<float> abs_errors(static_cast<size_t>(c.count)), rel_errors(static_cast<size_t>(c.count));
  dispatch_dtype(test.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      accumulate<T>(test.data<T>(), ref.data<T>(), c, infinities_compare_equal, abs_errors, rel_errors);
    }
  });
  const bool abs_nan = std::isnan(c.abs_max);
  const bool rel_nan = std::isnan(c.rel_max);
  c.abs_median = abs_nan ? kNaN : quantile_of(abs_errors, 0.5);
  c.rel_median = rel_nan ? kNaN : quantile_of(rel_errors, 0.5);
  c.abs_quantile = abs_nan ? kNaN : quantile_of(abs_errors, tolerance.quantile);
  c.rel_quantile = rel_nan ? kNaN : quantile_of(rel_errors, tolerance.quantile);

  double s_abs = 0, s_rel = 0;
  switch (tolerance.stat) {
    case ErrorStat::kElemwise:
      c.passed = c.mismatch_count == 0;
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
