// SPDX-License-Identifier: Apache-2.0
// The comparison's configuration by tensor name, and the names of its statistics and histogram bins.
#include <fmt/format.h>

#include "core/compare/compare.h"

namespace vn {
namespace {

template <typename Map>
auto lookup(const Map& map, std::string_view name, typename Map::mapped_type fallback) {
  if (auto it = map.find(name); it != map.end()) return it->second;
  if (auto it = map.find(""); it != map.end()) return it->second;
  return fallback;
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

}  // namespace vn
