// SPDX-License-Identifier: Apache-2.0
// Polygraphy's `simple` comparison semantics (polygraphy-notes §3.4), checked case by case.
#include "core/compare/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <Eigen/Core>

#include "core/common/threads.h"

namespace vn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TensorComparison cmp(std::vector<float> test, std::vector<float> ref, Tolerance tol = {}, bool inf_equal = false) {
  const auto n = static_cast<int64_t>(test.size());
  return compare_tensors("t", Tensor::from_vector<float>({n}, test), Tensor::from_vector<float>({n}, ref), tol,
                         inf_equal);
}

TEST(Compare, AnElementPassesWhenEitherToleranceHolds) {
  Tolerance tol{1e-3, 1e-3};
  // abs 0.01 > atol but rel 0.01/100 = 1e-4 <= rtol: passes.
  EXPECT_TRUE(cmp({100.01f}, {100.0f}, tol).passed);
  // rel 1 > rtol but abs 1e-4 <= atol: passes.
  EXPECT_TRUE(cmp({2e-4f}, {1e-4f}, tol).passed);
  // Both exceeded: fails, and is counted.
  TensorComparison c = cmp({1.0f, 2.0f, 3.5f}, {1.0f, 2.0f, 3.0f}, tol);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatch_count, 1);
  EXPECT_EQ(c.worst_index, 2);
  EXPECT_FLOAT_EQ(c.worst_test, 3.5f);
  EXPECT_DOUBLE_EQ(c.abs_max, 0.5);
}

TEST(Compare, NanAlwaysFails) {
  EXPECT_FALSE(cmp({std::nanf("")}, {std::nanf("")}, Tolerance{1e9, 1e9}).passed);
  EXPECT_FALSE(cmp({1.0f}, {std::nanf("")}, Tolerance{1e9, 1e9}).passed);
  TensorComparison c = cmp({std::nanf(""), 1.0f}, {1.0f, 1.0f});
  EXPECT_EQ(c.nan_test, 1);
  EXPECT_TRUE(std::isnan(c.abs_max));
  EXPECT_EQ(c.worst_index, 0);
  EXPECT_TRUE(std::isinf(c.min_atol));
}

TEST(Compare, InfinitiesCompareEqualOnlyWhenAsked) {
  EXPECT_FALSE(cmp({kInf}, {kInf}).passed);  // inf - inf is NaN
  EXPECT_TRUE(cmp({kInf}, {kInf}, {}, true).passed);
  EXPECT_FALSE(cmp({kInf}, {-kInf}, {}, true).passed);
  EXPECT_EQ(cmp({kInf}, {1.0f}).inf_test, 1);
}

TEST(Compare, ZeroDenominatorsUseNumpyEpsilon) {
  TensorComparison c = cmp({1e-6f}, {0.0f});
  EXPECT_NEAR(c.rel_max, 1e-6 / 2.220446049250313e-16, 1e2);
  EXPECT_TRUE(c.passed);  // abs 1e-6 is within atol 1e-5
}

TEST(Compare, IntegersCastUpAndDivideByTheirZeros) {
  Tensor a = Tensor::from_vector<uint8_t>({2}, {0, 5});
  Tensor b = Tensor::from_vector<uint8_t>({2}, {1, 0});
  TensorComparison c = compare_tensors("u", a, b, {}, false);
  EXPECT_DOUBLE_EQ(c.abs_max, 5.0);  // no wrap-around: 0 - 1 is 1 in absolute value
  EXPECT_TRUE(std::isinf(c.rel_max));
  EXPECT_FALSE(c.passed);
  Tensor t = Tensor::from_vector<bool>({3}, {true, false, true});
  Tensor f = Tensor::from_vector<bool>({3}, {true, true, true});
  EXPECT_EQ(compare_tensors("b", t, f, {}, false).mismatch_count, 1);
}

TEST(Compare, StatisticModesCompareOneNumberPerError) {
  // abs errors 0, 0, 0, 1: max 1, mean 0.25, median 0.
  std::vector<float> test{1, 2, 3, 5}, ref{1, 2, 3, 4};
  Tolerance median{0.1, 0.1, ErrorStat::kMedian};
  EXPECT_TRUE(cmp(test, ref, median).passed);
  Tolerance mean{0.1, 0.01, ErrorStat::kMean};  // rel errors 0, 0, 0, 0.25: mean 0.0625
  TensorComparison m = cmp(test, ref, mean);
  EXPECT_FALSE(m.passed);
  EXPECT_DOUBLE_EQ(m.abs_mean, 0.25);
  EXPECT_DOUBLE_EQ(m.min_atol, 0.25);
  EXPECT_DOUBLE_EQ(m.min_rtol, 0.0625);
  Tolerance q{0.5, 0.5, ErrorStat::kQuantile, 0.5};
  EXPECT_TRUE(cmp(test, ref, q).passed);
  // numpy.quantile([0, 0, 0, 1], 0.9) = 0.7
  EXPECT_NEAR(cmp(test, ref, Tolerance{1e-5, 1e-5, ErrorStat::kQuantile, 0.9}).abs_quantile, 0.7, 1e-12);
  // The mean of an empty tensor is NaN in Polygraphy, so it fails; elemwise passes trivially.
  EXPECT_FALSE(cmp({}, {}, mean).passed);
  EXPECT_TRUE(cmp({}, {}).passed);
}

TEST(Compare, MinimumTolerancesAreTight) {
  Tolerance tol{1e-3, 1e-2};
  // Element 0: abs 0.5, rel 0.05. Element 1: abs 0.002, rel 0.0002 (covered by rtol).
  TensorComparison c = cmp({10.5f, 10.002f}, {10.0f, 10.0f}, tol);
  EXPECT_FALSE(c.passed);
  EXPECT_NEAR(c.min_atol, 0.5, 1e-6);   // with rtol 1e-2 kept, atol must cover element 0
  EXPECT_NEAR(c.min_rtol, 0.05, 1e-6);  // with atol 1e-3 kept, rtol must cover element 0 (element 1 needs 2e-4)
  EXPECT_TRUE(cmp({10.5f, 10.002f}, {10.0f, 10.0f}, Tolerance{c.min_atol, 1e-2}).passed);
  EXPECT_TRUE(cmp({10.5f, 10.002f}, {10.0f, 10.0f}, Tolerance{1e-3, c.min_rtol}).passed);
  EXPECT_FALSE(cmp({10.5f, 10.002f}, {10.0f, 10.0f}, Tolerance{1e-3, c.min_rtol * 0.99}).passed);
}

TEST(Compare, SignalMetrics) {
  TensorComparison same = cmp({1, 2, 3}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(same.cosine, 1.0);
  EXPECT_EQ(same.nmse, 0.0);
  EXPECT_TRUE(std::isinf(same.snr_db));
  // ref (1, 0), test (1, 1): cosine 1/sqrt(2), nmse 1, snr 0 dB.
  TensorComparison c = cmp({1, 1}, {1, 0});
  EXPECT_NEAR(c.cosine, 1 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(c.nmse, 1.0);
  EXPECT_DOUBLE_EQ(c.snr_db, 0.0);
}

TEST(Compare, MismatchedTensorsFailWithAReason) {
  TensorComparison shape = compare_tensors("x", Tensor(DType::kFloat32, {2}), Tensor(DType::kFloat32, {1, 2}), {}, false);
  EXPECT_FALSE(shape.passed);
  EXPECT_EQ(shape.mismatch, "shapes differ: (2,) vs (1, 2)");
  TensorComparison dtype = compare_tensors("x", Tensor(DType::kFloat32, {2}), Tensor(DType::kInt32, {2}), {}, false);
  EXPECT_FALSE(dtype.passed);
  EXPECT_EQ(dtype.mismatch, "dtypes differ: float32 vs int32");
}

TEST(Compare, ErrorsAreComputedInTheCastUpTypeAsPolygraphyDoes) {
  // float32 against float32: |0.1f - 0| is 0.1f, which is not above atol 0.1 rounded to float32
  // (numpy compares a float32 array with a Python float in float32), so the element passes.
  const Tensor test = Tensor::from_vector<float>({2}, {0.1f, 2.0f});
  const Tensor zero = Tensor::from_vector<float>({2}, {0.0f, 2.0f});
  TensorComparison f32 = compare_tensors("x", test, zero, {.atol = 0.1, .rtol = 0}, false);
  EXPECT_TRUE(f32.passed);
  EXPECT_EQ(f32.abs_max, static_cast<double>(0.1f));
  // Against a float64 reference, in double: the same error is above 0.1.
  const Tensor zero64 = Tensor::from_vector<double>({2}, {0.0, 2.0});
  EXPECT_FALSE(compare_tensors("x", test, zero64, {.atol = 0.1, .rtol = 0}, false).passed);
  // 0.1f against the double 0.1 differs by 1.49e-9: visible only when neither side is rounded.
  const Tensor ref64 = Tensor::from_vector<double>({2}, {0.1, 2.0});
  TensorComparison c = compare_tensors("x", test, ref64, {.atol = 0, .rtol = 1e-9}, false);
  EXPECT_TRUE(c.mismatch.empty());
  EXPECT_NEAR(c.abs_max, 1.4901161e-9, 1e-15);
  EXPECT_EQ(c.worst_index, 0);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(compare_tensors("x", test, ref64, {.atol = 0, .rtol = 1e-7}, false).passed);
  // A float16 engine output against a float32 reference: the half values cast up to float32, and
  // the errors are float32's.
  const std::vector<float> ref_values = {0.1f, 3.0f, -7.3f, 1e-3f};
  const Tensor ref32 = Tensor::from_vector<float>({4}, ref_values);
  const Tensor half = tensor_cast(ref32, DType::kFloat16).value();
  TensorComparison h = compare_tensors("x", half, ref32, {.atol = 1e-3, .rtol = 1e-3}, false);
  EXPECT_TRUE(h.mismatch.empty());
  float abs_max = 0, rel_max = 0;
  for (size_t i = 0; i < ref_values.size(); ++i) {
    const float abs_error = std::abs(static_cast<float>(half.data<Eigen::half>()[i]) - ref_values[i]);
    abs_max = std::max(abs_max, abs_error);
    rel_max = std::max(rel_max, abs_error / std::abs(ref_values[i]));
  }
  EXPECT_EQ(h.abs_max, static_cast<double>(abs_max));
  EXPECT_EQ(h.rel_max, static_cast<double>(rel_max));
  // The half value 0.0999755859375 against a float32 zero: its error meets an atol just below it
  // rounded to float32, which is the error itself, so the element passes; in double it would fail.
  const Tensor half_test = tensor_cast(Tensor::from_vector<float>({1}, {0.1f}), DType::kFloat16).value();
  const double error = static_cast<double>(static_cast<float>(half_test.data<Eigen::half>()[0]));
  ASSERT_EQ(error, 0.0999755859375);
  const Tensor zero32 = Tensor::from_vector<float>({1}, {0.0f});
  const double below = error - 1e-13;
  ASSERT_EQ(static_cast<double>(static_cast<float>(below)), error);
  EXPECT_TRUE(compare_tensors("x", half_test, zero32, {.atol = below, .rtol = 0}, false).passed);
  EXPECT_FALSE(compare_tensors("x", half_test, zero32, {.atol = error * (1 - 1e-6), .rtol = 0}, false).passed);
}

TEST(Compare, FailuresCountTheirAbsoluteErrorsByDecade) {
  // A fifth exact, two fifths near 2e-4, two fifths 0.5 and one NaN; large enough for the radix
  // selection (whose errors are computed again for the histogram) and small.
  for (const int fifth : {1000, 2}) {
    const int n = 5 * fifth + 1;
    std::vector<float> ref(static_cast<size_t>(n), 1.0f), test(static_cast<size_t>(n), 1.0f);
    for (int i = fifth; i < 3 * fifth; ++i) test[static_cast<size_t>(i)] = 1.0f + 2e-4f;
    for (int i = 3 * fifth; i < 5 * fifth; ++i) test[static_cast<size_t>(i)] = 1.5f;
    test.back() = std::nanf("");
    const TensorComparison c = cmp(test, ref);
    ASSERT_FALSE(c.passed);
    std::vector<int64_t> expected(kErrorHistogramBins, 0);
    expected[0] = fifth;
    expected[7] = 2 * fifth;   // 1e-4..1e-3
    expected[10] = 2 * fifth;  // 1e-1..1
    expected[kErrorHistogramBins - 1] = 1;
    EXPECT_EQ(c.abs_error_histogram, expected) << "n=" << n;
    EXPECT_EQ(error_histogram_bin_label(7), "1e-4..1e-3");
    EXPECT_EQ(error_histogram_bin_label(10), "1e-1..1");
  }
}

TEST(Compare, PerTensorTolerancesFallBackToTheDefaultKey) {
  CompareConfig config;
  config.atol[""] = 1e-3;
  config.atol["big"] = 1.0;
  config.stat["big"] = ErrorStat::kMax;
  EXPECT_DOUBLE_EQ(config.tolerance_for("big").atol, 1.0);
  EXPECT_EQ(config.tolerance_for("big").stat, ErrorStat::kMax);
  EXPECT_DOUBLE_EQ(config.tolerance_for("other").atol, 1e-3);
  EXPECT_DOUBLE_EQ(config.tolerance_for("other").rtol, 1e-5);
}

TEST(Compare, ResultsArePairedByExactNameOnly) {
  TensorMap test{{"a", Tensor::scalar<float>(1)}, {"B", Tensor::scalar<float>(2)}, {"c", Tensor::scalar<float>(9)}};
  TensorMap ref{{"a", Tensor::scalar<float>(1)}, {"b", Tensor::scalar<float>(2)}, {"c", Tensor::scalar<float>(3)}};
  ResultsComparison r = compare_results(test, ref, {});
  ASSERT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.only_in_test, std::vector<std::string>{"B"});
  EXPECT_EQ(r.only_in_ref, std::vector<std::string>{"b"});
  EXPECT_FALSE(r.passed());
  ResultsComparison fast = compare_results(TensorMap{{"c", Tensor::scalar<float>(9)}, {"a", Tensor::scalar<float>(1)}},
                                           ref, {}, true);
  EXPECT_EQ(fast.tensors.size(), 1u);
}

}  // namespace
}  // namespace vn

namespace vn {
namespace {

// numpy.quantile with linear interpolation, by sorting: the definition the selection must match.
double sorted_quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const double hi = v[std::min(lo + 1, v.size() - 1)];
  return pos == static_cast<double>(lo) ? v[lo] : v[lo] + (hi - v[lo]) * (pos - static_cast<double>(lo));
}

TEST(Compare, MediansAndQuantilesAreExactOverErrorsOfEveryMagnitude) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> exponent(-12.0f, 3.0f), unit(-1.0f, 1.0f);
  // Sizes on both sides of the radix selection's threshold; a fifth, half and most errors exactly
  // zero (agreeing ReLU outputs), so the median falls above, at the edge of, and among the zeros.
  for (const auto& [n, zero_every] : std::vector<std::pair<int, int>>{
           {1, 5}, {2, 5}, {7, 5}, {1000, 5}, {16383, 5}, {16384, 2}, {100001, 5}, {100001, 2}, {300007, 5}}) {
    std::vector<float> ref(static_cast<size_t>(n)), test(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ref[static_cast<size_t>(i)] = unit(rng);
      // Errors from 1e-12 to 1e3, some exactly zero, many repeated.
      const float err = (i % zero_every == 0) ? 0.0f : std::pow(10.0f, std::round(exponent(rng) * 4) / 4);
      test[static_cast<size_t>(i)] = ref[static_cast<size_t>(i)] + err;
    }
    std::vector<float> abs_errors(static_cast<size_t>(n)), rel_errors(static_cast<size_t>(n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      abs_errors[i] = std::abs(test[i] - ref[i]);
      rel_errors[i] = abs_errors[i] / (ref[i] == 0 ? 2.220446049250313e-16f : std::abs(ref[i]));
    }
    const Tensor t = Tensor::from_vector<float>({n}, test), r = Tensor::from_vector<float>({n}, ref);
    for (double q : {0.0, 0.37, 0.9, 0.99, 1.0}) {
      TensorComparison c = compare_tensors("x", t, r, {.atol = 1, .rtol = 1, .stat = ErrorStat::kQuantile, .quantile = q}, false);
      EXPECT_DOUBLE_EQ(c.abs_median, sorted_quantile(abs_errors, 0.5)) << "n=" << n;
      EXPECT_DOUBLE_EQ(c.abs_quantile, sorted_quantile(abs_errors, q)) << "n=" << n << " q=" << q;
      EXPECT_DOUBLE_EQ(c.rel_median, sorted_quantile(rel_errors, 0.5)) << "n=" << n;
      EXPECT_DOUBLE_EQ(c.rel_quantile, sorted_quantile(rel_errors, q)) << "n=" << n << " q=" << q;
    }
  }
}

// Every statistic of one pass, element by element: errors and their checks in T, sums in double.
// What the vectorized blocks must give.
template <typename T>
void expect_one_pass_statistics(const std::vector<T>& test, const std::vector<T>& ref, const Tolerance& tol) {
  const auto n = static_cast<int64_t>(test.size());
  const auto atol = static_cast<T>(tol.atol), rtol = static_cast<T>(tol.rtol);
  T abs_max = 0, rel_max = 0, min_atol = 0, min_rtol = 0;
  double abs_sum = 0, dot = 0, tt = 0, rr = 0;
  int64_t worst = -1, mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T a = test[static_cast<size_t>(i)], b = ref[static_cast<size_t>(i)];
    const T abs_error = std::abs(a - b);
    const T rel_error = abs_error / (b == 0 ? static_cast<T>(2.220446049250313e-16) : std::abs(b));
    if (worst < 0 || abs_error > abs_max) abs_max = abs_error, worst = i;
    rel_max = std::max(rel_max, rel_error);
    abs_sum += static_cast<double>(abs_error);
    mismatches += (abs_error > atol && rel_error > rtol) ? 1 : 0;
    if (rel_error > rtol) min_atol = std::max(min_atol, abs_error);
    if (abs_error > atol) min_rtol = std::max(min_rtol, rel_error);
    const auto ad = static_cast<double>(a), bd = static_cast<double>(b);
    if (std::isfinite(ad) && std::isfinite(bd)) dot += ad * bd, tt += ad * ad, rr += bd * bd;
  }
  const Tensor t = Tensor::from_vector<T>({n}, test), r = Tensor::from_vector<T>({n}, ref);
  const TensorComparison c = compare_tensors("t", t, r, tol, false);
  EXPECT_EQ(c.worst_index, worst);
  EXPECT_EQ(c.abs_max, static_cast<double>(abs_max));
  EXPECT_EQ(c.rel_max, static_cast<double>(rel_max));
  EXPECT_EQ(c.mismatch_count, mismatches);
  EXPECT_EQ(c.min_atol, static_cast<double>(min_atol));
  EXPECT_EQ(c.min_rtol, static_cast<double>(min_rtol));
  if (std::isfinite(abs_sum)) {
    EXPECT_NEAR(c.abs_mean, abs_sum / static_cast<double>(n), 1e-12 * abs_sum);
  } else {
    EXPECT_EQ(c.abs_mean, abs_sum);
  }
  EXPECT_NEAR(c.cosine, dot / std::sqrt(tt * rr), 1e-12);
}

TEST(Compare, VectorizedBlocksGiveTheStatisticsOfOneScalarPass) {
  // 5000 elements: several 1024-element blocks. The largest error twice, in different blocks (the
  // first must win); an infinity (then the worst element) sends its block element by element;
  // zeros in the reference.
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  for (const bool with_inf : {false, true}) {
    SCOPED_TRACE(with_inf ? "an infinity in the third block" : "finite");
    std::vector<float> ref(5000), test(5000);
    for (size_t i = 0; i < ref.size(); ++i) {
      ref[i] = i % 97 == 0 ? 0.0f : static_cast<float>(normal(rng));
      test[i] = ref[i] + static_cast<float>(1e-3 * normal(rng));
    }
    ref[300] = ref[3000] = 2.0f;
    test[300] = test[3000] = 2.5f;
    if (with_inf) test[2100] = kInf;
    expect_one_pass_statistics(test, ref, {.atol = 1e-3, .rtol = 1e-3});
    std::vector<double> test64(test.begin(), test.end()), ref64(ref.begin(), ref.end());
    test64[4000] += 1e-9;  // an error only float64 can hold
    expect_one_pass_statistics(test64, ref64, {.atol = 1e-3, .rtol = 1e-3});
  }
}

// Every field of two comparisons, NaN equal to NaN.
void expect_same_comparison(const TensorComparison& a, const TensorComparison& b) {
  const auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  EXPECT_EQ(a.passed, b.passed);
  EXPECT_EQ(a.mismatch, b.mismatch);
  EXPECT_EQ(a.count, b.count);
  for (const auto& [x, y] : std::vector<std::pair<double, double>>{
           {a.abs_max, b.abs_max}, {a.abs_mean, b.abs_mean}, {a.abs_median, b.abs_median},
           {a.abs_quantile, b.abs_quantile}, {a.rel_max, b.rel_max}, {a.rel_mean, b.rel_mean},
           {a.rel_median, b.rel_median}, {a.rel_quantile, b.rel_quantile}, {a.worst_test, b.worst_test},
           {a.worst_ref, b.worst_ref}, {a.cosine, b.cosine}, {a.nmse, b.nmse}, {a.snr_db, b.snr_db},
           {a.min_atol, b.min_atol}, {a.min_rtol, b.min_rtol}}) {
    EXPECT_TRUE(same(x, y)) << x << " vs " << y;
  }
  EXPECT_EQ(a.worst_index, b.worst_index);
  EXPECT_EQ(a.nan_test, b.nan_test);
  EXPECT_EQ(a.nan_ref, b.nan_ref);
  EXPECT_EQ(a.inf_test, b.inf_test);
  EXPECT_EQ(a.inf_ref, b.inf_ref);
  EXPECT_EQ(a.mismatch_count, b.mismatch_count);
  EXPECT_EQ(a.abs_error_histogram, b.abs_error_histogram);
}

TEST(Compare, EqualBitsGiveWhatAFullPassGives) {
  // The same tensor on both sides (an engine returning the model's weights) and an equal copy (an
  // engine's folded constant), against the full pass over a copy: every dtype family, every
  // statistic mode, a NaN and an infinity (which the full pass defines: NaN fails, inf - inf is
  // NaN unless infinities compare equal).
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  std::vector<float> values(20000);
  for (float& v : values) v = normal(rng);
  values[7] = 0.0f;
  std::vector<Tensor> tensors = {Tensor::from_vector<float>({100, 200}, values)};
  std::vector<double> wide(values.begin(), values.end());
  tensors.push_back(Tensor::from_vector<double>({20000}, wide));
  std::vector<int32_t> ints;
  for (float v : values) ints.push_back(static_cast<int32_t>(v * 1000));
  tensors.push_back(Tensor::from_vector<int32_t>({20000}, ints));
  tensors.push_back(tensor_cast(tensors[0], DType::kFloat16).value());
  std::vector<float> with_nan = values, with_inf = values;
  with_nan[123] = std::nanf("");
  with_inf[456] = -kInf;
  tensors.push_back(Tensor::from_vector<float>({20000}, with_nan));
  tensors.push_back(Tensor::from_vector<float>({20000}, with_inf));
  for (const Tensor& t : tensors) {
    for (ErrorStat stat : {ErrorStat::kElemwise, ErrorStat::kMean, ErrorStat::kMedian, ErrorStat::kQuantile}) {
      for (bool inf_equal : {false, true}) {
        SCOPED_TRACE(fmt::format("{} {} stat {} inf_equal {}", dtype_name(t.dtype()), t.numel(),
                                 error_stat_name(stat), inf_equal));
        const Tolerance tol{.atol = 1e-5, .rtol = 1e-5, .stat = stat};
        const TensorComparison full = compare_tensors_full_pass("t", t.clone(), t, tol, inf_equal);
        expect_same_comparison(compare_tensors("t", t, t, tol, inf_equal), full);
        expect_same_comparison(compare_tensors("t", t.clone(), t, tol, inf_equal), full);
      }
    }
  }
  EXPECT_TRUE(compare_tensors("t", tensors[0], tensors[0], {}, false).passed);
  const TensorComparison nan = compare_tensors("t", tensors[4], tensors[4], {}, false);
  EXPECT_FALSE(nan.passed);
  EXPECT_EQ(nan.worst_index, 123);
  EXPECT_EQ(nan.nan_test, 1);
}

TEST(Compare, ThreadsGiveTheAnswersOfOnePass) {
  // 300000 elements: several chunks on several threads. The largest error sits in the last
  // chunk, a tie for it in an earlier one (the first must win), and a NaN in a middle chunk
  // makes the worst element that NaN, whatever follows.
  const int64_t n = 300000;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> ref(n), test(n);
  for (int64_t i = 0; i < n; ++i) {
    ref[i] = normal(rng);
    test[i] = ref[i] + 1e-3f * normal(rng);
  }
  ref[10] = ref[290000] = 1.0f;
  test[10] = test[290000] = 6.0f;
  ref[12] = 0.0f;
  test[12] = 1e-6f;
  const auto compare = [&](const std::vector<float>& t, int threads) {
    const int saved = default_threads();
    set_default_threads(threads);
    TensorComparison c = cmp(t, ref, {.atol = 1e-2, .rtol = 1e-2});
    set_default_threads(saved);
    return c;
  };
  for (const bool with_nan : {false, true}) {
    std::vector<float> t = test;
    if (with_nan) t[150000] = std::nanf("");
    const TensorComparison one = compare(t, 1), four = compare(t, 4);
    SCOPED_TRACE(with_nan ? "with a NaN" : "finite");
    EXPECT_EQ(four.worst_index, with_nan ? 150000 : 10);
    EXPECT_EQ(four.worst_index, one.worst_index);
    EXPECT_EQ(four.mismatch_count, one.mismatch_count);
    EXPECT_EQ(four.nan_test, one.nan_test);
    const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    EXPECT_PRED2(same, four.abs_median, one.abs_median);
    EXPECT_PRED2(same, four.rel_quantile, one.rel_quantile);
    EXPECT_PRED2(same, four.abs_max, one.abs_max);
    EXPECT_PRED2(same, four.rel_max, one.rel_max);
    EXPECT_PRED2(same, four.min_rtol, one.min_rtol);
    EXPECT_EQ(std::isnan(four.abs_max), with_nan);
    // Sums merge in another order: equal up to rounding.
    EXPECT_NEAR(four.cosine, one.cosine, 1e-12);
    if (!with_nan) {
      EXPECT_NEAR(four.abs_mean, one.abs_mean, 1e-12);
    }
  }
}

}  // namespace
}  // namespace vn
