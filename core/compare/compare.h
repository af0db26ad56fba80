// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/tensor.h"
#include "core/ir/tensor_map.h"

namespace vn {

struct TensorDigest;

/// Which statistic of the error is checked against the tolerances (Polygraphy's
/// --check-error-stat). kElemwise checks every element.
enum class ErrorStat { kElemwise, kMax, kMean, kMedian, kQuantile };

std::string_view error_stat_name(ErrorStat stat);
std::optional<ErrorStat> error_stat_from_name(std::string_view name);

/// The tolerance applied to one tensor.
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;
  ErrorStat stat = ErrorStat::kElemwise;
  double quantile = 0.99;  ///< for kQuantile
};

/// Comparison settings with per-tensor overrides, as Polygraphy's `--atol 1e-5 out0:1e-3`: the ""
/// key of each map is the default for tensors not listed; without it Polygraphy's defaults apply
/// (atol = rtol = 1e-5, elemwise, quantile 0.99).
struct CompareConfig {
  std::map<std::string, double, std::less<>> atol;
  std::map<std::string, double, std::less<>> rtol;
  std::map<std::string, ErrorStat, std::less<>> stat;
  std::map<std::string, double, std::less<>> quantile;
  /// Matching infinities count as equal (absolute error 0) instead of NaN.
  bool infinities_compare_equal = false;

  Tolerance tolerance_for(std::string_view tensor_name) const;
};

/// Everything measured about one pair of tensors. `test` is the tensor under test, `ref` the one
/// it is measured against (the denominator of relative errors). Statistics are over all
/// elements; errors involving NaN are NaN and make every statistic that sees them NaN, as in
/// Polygraphy, so a NaN can never pass.
struct TensorComparison {
  std::string name;
  bool passed = false;
  std::string mismatch;  ///< non-empty when the tensors cannot be compared (dtype, shape)
  Tolerance tolerance;
  int64_t count = 0;

  double abs_max = 0, abs_mean = 0, abs_median = 0, abs_quantile = 0;
  double rel_max = 0, rel_mean = 0, rel_median = 0, rel_quantile = 0;
  int64_t worst_index = -1;  ///< flat index of the largest absolute error (first NaN if any)
  double worst_test = 0, worst_ref = 0;

  double cosine = 1;     ///< cosine similarity over finite pairs (1 when both are zero)
  double nmse = 0;       ///< sum (test - ref)^2 / sum ref^2 over finite pairs
  double snr_db = 0;     ///< 10 log10(sum ref^2 / sum (test - ref)^2); +inf when identical

  int64_t nan_test = 0, nan_ref = 0;
  int64_t inf_test = 0, inf_ref = 0;
  int64_t mismatch_count = 0;  ///< elements failing both tolerances (elemwise rule)

  /// The smallest tolerance that would make this tensor pass with the other left as set:
  /// min_atol keeps rtol, min_rtol keeps atol. Infinite when no value suffices (NaN).
  double min_atol = 0, min_rtol = 0;

  /// For failed numeric comparisons only: element counts per bin of the absolute error (see
  /// error_histogram_bin_label); empty otherwise.
  std::vector<int64_t> abs_error_histogram;

  /// What a tensor detail shows of the pair (core/compare/tensor_digest.h), when the comparison
  /// was asked to keep it (LayerwiseOptions::digest); null otherwise.
  std::shared_ptr<const TensorDigest> digest;
};

/// Bins of TensorComparison::abs_error_histogram: exact (0), below 1e-9, one per decade from
/// [1e-9, 1e-8) to [1, 10), 10 and above (inf included), NaN.
inline constexpr int kErrorHistogramBins = 14;
/// "0", "<1e-9", "1e-9..1e-8", ..., "1..10", ">=10", "nan".
std::string error_histogram_bin_label(int bin);

/// Compares `test` against `ref` with Polygraphy's `simple` rule: an element fails only when it
/// exceeds both atol and rtol (or its error is NaN); statistic modes compare the chosen statistic
/// of the absolute and of the relative error. Relative error divides by |ref|, with exact zeros of
/// floating-point refs replaced by 2.22e-16 (numpy's float64 epsilon, Polygraphy's choice).
/// Element errors are computed as Polygraphy computes them: float16 and bfloat16 cast up to
/// float32, float32 in float32, float64 in float64; two float tensors of different formats are
/// cast up to the wider of the two and float32 (an fp64 reference: float64). Element checks use
/// the tolerances rounded to that type (numpy's rule for an array against a Python float);
/// statistics are checked in double; sums, means, cosine, NMSE and SNR accumulate in double.
/// Integer and bool tensors are compared exactly through their values (bool: XOR). Other dtype
/// differences and different shapes fail with `mismatch` set; strings compare for equality only.
/// Float tensors of the same bits (one buffer on both sides, or equal copies) skip the pass over
/// their elements: every error is zero, and the result is what the pass would give.
TensorComparison compare_tensors(std::string_view name, const Tensor& test, const Tensor& ref,
                                 const Tolerance& tolerance, bool infinities_compare_equal);

/// compare_tensors with every element through the pass, equal bits or not: what the shortcut for
/// equal tensors is checked against.
TensorComparison compare_tensors_full_pass(std::string_view name, const Tensor& test, const Tensor& ref,
                                           const Tolerance& tolerance, bool infinities_compare_equal);

/// The comparison of two sets of results, paired by exact tensor name only.
struct ResultsComparison {
  std::vector<TensorComparison> tensors;  ///< in `test` order
  std::vector<std::string> only_in_test;  ///< never compared: no tensor of that name in ref
  std::vector<std::string> only_in_ref;
  bool passed() const;
};

/// Compares every tensor of `test` with the tensor of the same name in `ref`. `fail_fast` stops
/// after the first failing tensor.
ResultsComparison compare_results(const TensorMap& test, const TensorMap& ref, const CompareConfig& config,
                                  bool fail_fast = false);

}  // namespace vn
