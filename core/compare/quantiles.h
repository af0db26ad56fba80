// SPDX-License-Identifier: Apache-2.0
// Exact quantiles by selection (no sort), shared by the comparison metrics and the output
// statistics.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

namespace vn {

/// Selects the values of `ranks` (ascending, distinct, each < v.size()) from `v`, reordering it,
/// into out[0..ranks.size()). Each rank is selected among what lies above the previous one (a
/// selection leaves everything before its rank no larger and everything after no smaller); a rank
/// right after the previous one is the smallest value above it, found by a scan.
template <typename T>
void select_ranks(std::span<T> v, std::span<const size_t> ranks, T* out) {
  for (size_t k = 0; k < ranks.size(); ++k) {
    const size_t r = ranks[k];
    const auto begin = v.begin() + static_cast<std::ptrdiff_t>(k > 0 ? ranks[k - 1] + 1 : 0);
    if (k > 0 && r == ranks[k - 1] + 1) {
      std::iter_swap(v.begin() + static_cast<std::ptrdiff_t>(r), std::min_element(begin, v.end()));
    } else {
      std::nth_element(begin, v.begin() + static_cast<std::ptrdiff_t>(r), v.end());
    }
    out[k] = v[r];
  }
}

/// The ranks numpy.quantile with linear interpolation reads of `n` values (n > 0) for the
/// quantiles `qs`: for each, floor(q * (n - 1)) and the rank after it; ascending, distinct.
inline std::vector<size_t> quantile_ranks(size_t n, std::initializer_list<double> qs) {
  const size_t last = n - 1;
  std::vector<size_t> ranks;
  for (double q : qs) {
    const auto lo = static_cast<size_t>(std::floor(q * static_cast<double>(last)));
    ranks.push_back(lo);
    ranks.push_back(std::min(lo + 1, last));
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

/// numpy.quantile with linear interpolation of `n` values for each of `qs`, given the values `at`
/// of their quantile_ranks(n, qs) `ranks`.
template <typename T>
std::vector<double> interpolate_quantiles(size_t n, std::initializer_list<double> qs, std::span<const size_t> ranks,
                                          const T* at) {
  const size_t last = n - 1;
  const auto value_of = [&](size_t rank) {
    return static_cast<double>(at[static_cast<size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin())]);
  };
  std::vector<double> out;
  for (double q : qs) {
    const double pos = q * static_cast<double>(last);
    const double frac = pos - std::floor(pos);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const double lo_value = value_of(lo), hi_value = value_of(std::min(lo + 1, last));
    out.push_back(frac == 0 ? lo_value : lo_value + (hi_value - lo_value) * frac);
  }
  return out;
}

/// numpy.quantile with linear interpolation of `n` values (n > 0), for each of `qs`: `select`
/// (std::span<const size_t> ranks, T* out) fills out[k] with the value of ranks[k] (ascending,
/// distinct), which is all this reads of the values.
template <typename T, typename Select>
std::vector<double> quantiles_by(size_t n, std::initializer_list<double> qs, Select&& select) {
  const std::vector<size_t> ranks = quantile_ranks(n, qs);
  std::vector<T> at(ranks.size());
  select(std::span<const size_t>(ranks), at.data());
  return interpolate_quantiles<T>(n, qs, ranks, at.data());
}

/// numpy.quantile with linear interpolation of the non-empty `values` (reordered) for each of
/// `qs`, by selection in place.
template <typename T>
std::vector<double> quantiles_in_place(std::vector<T>& values, std::initializer_list<double> qs) {
  return quantiles_by<T>(values.size(), qs, [&](std::span<const size_t> ranks, T* out) {
    select_ranks<T>(values, ranks, out);
  });
}

}  // namespace vn
