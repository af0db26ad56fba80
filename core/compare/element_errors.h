// SPDX-License-Identifier: Apache-2.0
// The one definition of an element's comparison errors (for compare.cpp): the type they are
// computed in, and |test - ref| and that over |ref| for a range of elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

namespace vn::compare_detail {

// numpy's float64 epsilon, which Polygraphy substitutes for exact zeros in the denominator.
constexpr double kZeroDenominator = 2.220446049250313e-16;

// Elements go through the passes in blocks of this many, their errors in a scratch that stays in
// L1 between the steps of a block.
constexpr int64_t kBlock = 1024;

// The type element errors are computed in, Polygraphy's: half formats are cast up to float32 and
// float32 stays float32 (numpy computes |a - b| and |a - b| / |b| in the outputs' type); float64
// stays float64. Integers and bools are read as double, exact up to 2^53. Sums, means and the
// signal metrics accumulate in double whatever the type.
template <typename T>
using ErrorType = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Eigen::half> ||
                                         std::is_same_v<T, Eigen::bfloat16>,
                                     float, double>;

// The errors of a float pair, a (test) and b (ref): see element_errors, which applies this to every
// float element (and then zeroes equal infinities when asked).
template <typename C>
inline void float_errors(C a, C b, C& abs, C& rel) {
  abs = std::abs(a - b);
  rel = abs / (b == C(0) ? static_cast<C>(kZeroDenominator) : std::abs(b));
}

// The errors of elements [lo, hi) into abs[0, hi - lo) and rel[0, hi - lo): |test - ref| (XOR for
// bool; zero for equal infinities when `inf_equal`) and that over |ref|, exact zeros of float refs
// replaced by kZeroDenominator (integer zeros give inf, or NaN for 0/0, as numpy does). The one
// definition of an element's errors: the pass that counts them and the pass that gathers them
// both come here, so they see the same errors to the bit.
template <typename T>
void element_errors(const T* test, const T* ref, int64_t lo, int64_t hi, bool inf_equal, ErrorType<T>* abs,
                    ErrorType<T>* rel) {
  using C = ErrorType<T>;
  const T* t = test + lo;
  const T* r = ref + lo;
  const int64_t n = hi - lo;
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < n; ++i) {
      abs[i] = t[i] != r[i] ? 1.0 : 0.0;
      rel[i] = abs[i] / (r[i] ? 1.0 : 0.0);
    }
  } else if constexpr (std::is_integral_v<T>) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const auto a = static_cast<C>(t[i]), b = static_cast<C>(r[i]);
      abs[i] = std::abs(a - b);
      rel[i] = abs[i] / std::abs(b);
    }
  } else if (inf_equal) {
    for (int64_t i = 0; i < n; ++i) {
      const auto a = static_cast<C>(t[i]), b = static_cast<C>(r[i]);
      float_errors(a, b, abs[i], rel[i]);
      if (std::isinf(a) && a == b) abs[i] = rel[i] = 0;
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) float_errors(static_cast<C>(t[i]), static_cast<C>(r[i]), abs[i], rel[i]);
  }
}

}  // namespace vn::compare_detail
