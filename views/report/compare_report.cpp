// SPDX-License-Identifier: Apache-2.0
#include "views/report/compare_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

// The absolute errors of a failed comparison by decade, as bars scaled to the fullest bin.
std::string histogram(const TensorComparison& c) {
  const std::vector<int64_t>& bins = c.abs_error_histogram;
  if (bins.empty()) return "";
  const int64_t most = *std::max_element(bins.begin(), bins.end());
  if (most == 0) return "";
  constexpr int kWidth = 40;
  std::string out = "        Absolute error histogram:\n";
  for (size_t b = 0; b < bins.size(); ++b) {
    if (bins[b] == 0) continue;
    const auto len = static_cast<size_t>(std::max<int64_t>(1, bins[b] * kWidth / most));
    out += fmt::format("          {:>11} | {:<{}} {}\n", error_histogram_bin_label(static_cast<int>(b)),
                       std::string(len, '#'), kWidth, bins[b]);
  }
  return out;
}

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
  out += histogram(c);
  return out;
}

// One row per tensor: verdict, largest errors, the minimum passing tolerances, cosine and the
// count of failing elements. At most `limit` rows; failures are listed first when some must go.
std::string summary_table(const std::vector<TensorComparison>& tensors, size_t limit) {
  TextTable table({"tensor", "result", "max abs", "max rel", "min atol", "min rtol", "cosine", "mismatches"},
                  {TextTable::Align::kLeft, TextTable::Align::kLeft, TextTable::Align::kRight,
                   TextTable::Align::kRight, TextTable::Align::kRight, TextTable::Align::kRight,
                   TextTable::Align::kRight, TextTable::Align::kRight});
  std::vector<const TensorComparison*> rows;
  for (const TensorComparison& c : tensors) rows.push_back(&c);
  if (rows.size() > limit) {
    std::stable_partition(rows.begin(), rows.end(), [](const TensorComparison* c) { return !c->passed; });
    rows.resize(limit);
  }
  for (const TensorComparison* c : rows) {
    if (!c->mismatch.empty()) {
      table.add_row({c->name, verdict(*c), c->mismatch});
      continue;
    }
    table.add_row({c->name, verdict(*c), g(c->abs_max), g(c->rel_max), g(c->min_atol), g(c->min_rtol), g(c->cosine),
                   fmt::format("{}/{}", c->mismatch_count, c->count)});
  }
  std::string out = table.render("    ");
  if (tensors.size() > rows.size()) {
    out += fmt::format("    ... {} more tensor(s); -v lists them all\n", tensors.size() - rows.size());
  }
  return out;
}

// The closing lines of a comparison report: the tensors left uncompared, by reason, then the
// verdict.
std::string unpaired_and_verdict(const std::vector<TensorComparison>& tensors, const std::vector<std::string>& only_in_test,
                                 const std::vector<std::string>& only_in_ref,
                                 const std::vector<std::string>& not_produced) {
  const auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s;
  };
  std::string out;
  if (!only_in_test.empty()) out += fmt::format("    Not compared, missing from the reference: {}\n", list(only_in_test));
  if (!only_in_ref.empty()) {
    out += fmt::format("    Not compared, missing from the results under test: {}\n", list(only_in_ref));
  }
  if (!not_produced.empty()) out += fmt::format("    Not compared, one side never produced: {}\n", list(not_produced));
  const auto failed = std::count_if(tensors.begin(), tensors.end(), [](const TensorComparison& c) { return !c.passed; });
  if (tensors.empty()) {
    out += "    FAILED | no tensor name appears on both sides\n";
  } else if (failed) {
    out += fmt::format("    FAILED | {} of {} tensor(s) mismatched\n", failed, tensors.size());
  } else {
    out += fmt::format("    PASSED | all {} tensor(s) matched\n", tensors.size());
  }
  return out;
}

}  // namespace

std::string format_comparison(const std::string& title, const ResultsComparison& comparison, bool verbose) {
  std::string out = fmt::format("==== {} ====\n", title);
  out += summary_table(comparison.tensors, comparison.tensors.size());
  for (const TensorComparison& c : comparison.tensors) {
    if (verbose || !c.passed) out += details(c);
  }
  return out + unpaired_and_verdict(comparison.tensors, comparison.only_in_test, comparison.only_in_ref, {});
}

std::string format_layerwise(const std::string& title, const LayerwiseComparison& comparison, bool verbose) {
  std::string out = fmt::format("==== {} | layer-wise ====\n", title);
  size_t failed = 0;
  for (const TensorComparison& c : comparison.tensors) failed += c.passed ? 0 : 1;
  size_t measured = 0;
  for (const LayerComparison& lc : comparison.layers) measured += lc.local.empty() ? 0 : 1;
  out += fmt::format("    {} tensor(s) compared by name, {} failed; {} layer(s){}\n", comparison.tensors.size(), failed,
                     comparison.layers.size(),
                     comparison.local_errors ? fmt::format(", {} run alone on the reference's inputs", measured) : "");
  out += summary_table(comparison.tensors, verbose ? comparison.tensors.size() : 20);
  const auto describe = [&](size_t i) {
    const LayerComparison& lc = comparison.layers[i];
    return fmt::format("'{}' ({})", lc.layer.name, lc.layer.op);
  };
  if (comparison.first_culprit) {
    const LayerComparison& lc = comparison.layers[*comparison.first_culprit];
    out += fmt::format("    Culprit        | {} is the first layer whose own {} error breaks tolerance ({}x) while its "
                       "inputs are within it\n",
                       describe(*comparison.first_culprit), lc.local.empty() ? "accumulated" : "local",
                       g(lc.local.empty() ? lc.accumulated_excess : lc.local_excess));
  } else if (failed > 0) {
    out += "    Culprit        | none: no layer breaks tolerance on inputs that are within it\n";
  }
  if (comparison.first_nonfinite) {
    out += fmt::format("    First NaN/Inf  | {} produces NaN or Inf where the reference has none\n",
                       describe(*comparison.first_nonfinite));
  }

  // The ranked layers first (all of them with -v, in execution order then).
  TextTable table({"rank", "layer", "op", "result", "max abs", "x tol", "local max abs", "local x tol", "inputs"},
                  {TextTable::Align::kRight, TextTable::Align::kLeft, TextTable::Align::kLeft, TextTable::Align::kLeft,
                   TextTable::Align::kRight, TextTable::Align::kRight, TextTable::Align::kRight,
                   TextTable::Align::kRight, TextTable::Align::kLeft});
  std::vector<size_t> rows;
  if (verbose) {
    for (size_t i = 0; i < comparison.layers.size(); ++i) rows.push_back(i);
  } else {
    rows = comparison.ranking();
    if (rows.size() > 10) rows.resize(10);
  }
  for (size_t i : rows) {
    const LayerComparison& lc = comparison.layers[i];
    std::string verdict = "-";
    double abs_max = -1;
    for (int k : lc.accumulated) {
      if (k < 0) continue;
      const TensorComparison& c = comparison.tensors[static_cast<size_t>(k)];
      verdict = (verdict == "FAILED" || !c.passed) ? "FAILED" : "PASSED";
      abs_max = std::max(abs_max, std::isnan(c.abs_max) ? std::numeric_limits<double>::infinity() : c.abs_max);
    }
    double local_abs = -1;
    for (const TensorComparison& c : lc.local) {
      local_abs = std::max(local_abs, std::isnan(c.abs_max) ? std::numeric_limits<double>::infinity() : c.abs_max);
    }
    table.add_row({lc.rank > 0 ? std::to_string(lc.rank) : "-", lc.layer.name, lc.layer.op, verdict,
                   abs_max < 0 ? "-" : g(abs_max), verdict == "-" ? "-" : g(lc.accumulated_excess),
                   local_abs < 0 ? "-" : g(local_abs), lc.local.empty() ? "-" : g(lc.local_excess),
                   lc.inputs_within ? "within" : "off"});
  }
  if (!rows.empty()) out += table.render("    ");
  if (!verbose && comparison.ranking().size() > rows.size()) {
    out += fmt::format("    ... {} more ranked layer(s); -v lists every layer\n", comparison.ranking().size() - rows.size());
  }

  // Details of the failures nearest the source: the culprit's outputs, then the first failures.
  size_t shown = 0;
  const size_t limit = verbose ? comparison.tensors.size() : 3;
  for (const TensorComparison& c : comparison.tensors) {
    if (shown >= limit) break;
    if (verbose || !c.passed) {
      out += details(c);
      ++shown;
    }
  }
  if (!verbose && failed > shown) out += fmt::format("    ... {} more failed tensor(s); -v shows them all\n", failed - shown);
  if (comparison.local_errors) {
    for (const LayerComparison& lc : comparison.layers) {
      if (!lc.local_skipped.empty()) {
        out += fmt::format("    Not run alone: '{}': {}\n", lc.layer.name, lc.local_skipped);
      }
    }
  }
  return out + unpaired_and_verdict(comparison.tensors, comparison.only_in_test, comparison.only_in_ref,
                                    comparison.not_produced);
}

}  // namespace vn::views
