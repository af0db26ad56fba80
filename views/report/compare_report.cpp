// SPDX-License-Identifier: Apache-2.0
#include "views/report/compare_report.h"

#include <cmath>

#include <fmt/format.h>

#include "views/report/text_table.h"

namespace vn::views {
namespace {

std::string g(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.5g}", v);
}

std::string verdict(const TensorComparison& c) { return c.passed ? "PASSED" : "FAILED"; }

std::string details(const TensorComparison& c) {
  const Tolerance& t = c.tolerance;
  std::string out;
  out += fmt::format("    {} | {} | Tolerance: [abs={}, rel={}] | Checking {} error{}\n", c.name, verdict(c), g(t.atol),
                     g(t.rtol), error_stat_name(t.stat),
                     t.stat == ErrorStat::kQuantile ? fmt::format(" (quantile={})", g(t.quantile)) : "");
  if (!c.mismatch.empty()) return out + "        " + c.mismatch + "\n";
  out += fmt::format("        Absolute error | max={}, mean={}, median={}, p{}={}\n", g(c.abs_max), g(c.abs_mean),
                     g(c.abs_median), g(t.quantile * 100), g(c.abs_quantile));
  out += fmt::format("        Relative error | max={}, mean={}, median={}, p{}={}\n", g(c.rel_max), g(c.rel_mean),
                     g(c.rel_median), g(t.quantile * 100), g(c.rel_quantile));
  out += fmt::format("        Signal         | cosine={}, NMSE={}, SNR={} dB\n", g(c.cosine), g(c.nmse), g(c.snr_db));
  out += fmt::format("        Elements       | {} of {} fail both tolerances; NaN test/ref {}/{}; Inf test/ref {}/{}\n",
                     c.mismatch_count, c.count, c.nan_test, c.nan_ref, c.inf_test, c.inf_ref);
  if (c.worst_index >= 0) {
    out += fmt::format("        Worst element  | flat index {}: {} (test) vs {} (ref)\n", c.worst_index, g(c.worst_test),
                       g(c.worst_ref));
  }
  out += fmt::format("        To pass        | atol >= {} (keeping rtol={}) or rtol >= {} (keeping atol={})\n",
                     g(c.min_atol), g(t.rtol), g(c.min_rtol), g(t.atol));
  return out;
}

}  // namespace

std::string format_comparison(const std::string& title, const ResultsComparison& comparison, bool verbose) {
  std::string out = fmt::format("==== {} ====\n", title);
  TextTable table({"tensor", "result", "max abs", "max rel", "min atol", "min rtol", "cosine", "mismatches"},
                  {TextTable::Align::kLeft, TextTable::Align::kLeft, TextTable::Align::kRight,
                   TextTable::Align::kRight, TextTable::Align::kRight, TextTable::Align::kRight,
                   TextTable::Align::kRight, TextTable::Align::kRight});
  size_t failed = 0;
  for (const TensorComparison& c : comparison.tensors) {
    if (!c.passed) ++failed;
    if (!c.mismatch.empty()) {
      table.add_row({c.name, verdict(c), c.mismatch});
      continue;
    }
    table.add_row({c.name, verdict(c), g(c.abs_max), g(c.rel_max), g(c.min_atol), g(c.min_rtol), g(c.cosine),
                   fmt::format("{}/{}", c.mismatch_count, c.count)});
  }
  out += table.render("    ");
  for (const TensorComparison& c : comparison.tensors) {
    if (verbose || !c.passed) out += details(c);
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s;
  };
  if (!comparison.only_in_test.empty()) {
    out += fmt::format("    Not compared, missing from the reference: {}\n", list(comparison.only_in_test));
  }
  if (!comparison.only_in_ref.empty()) {
    out += fmt::format("    Not compared, missing from the results under test: {}\n", list(comparison.only_in_ref));
  }
  if (comparison.tensors.empty()) {
    out += "    FAILED | no tensor name appears on both sides\n";
  } else if (failed) {
    out += fmt::format("    FAILED | {} of {} tensor(s) mismatched\n", failed, comparison.tensors.size());
  } else {
    out += fmt::format("    PASSED | all {} tensor(s) matched\n", comparison.tensors.size());
  }
  return out;
}

}  // namespace vn::views
