// SPDX-License-Identifier: Apache-2.0
#include "core/compare/compare_json.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/compare/tensor_digest.h"

namespace vn {
namespace {

nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Three significant digits: what a heatmap cell shows, in a third of the characters.
nlohmann::ordered_json short_number(double v) {
  if (!std::isfinite(v)) return number(v);
  return std::strtod(fmt::format("{:.3g}", v).c_str(), nullptr);
}

}  // namespace

nlohmann::ordered_json tensor_digest_json(const TensorDigest& d) {
  nlohmann::ordered_json j;
  j["shape"] = d.shape;
  j["slice"] = {{"rows", d.slice_rows}, {"cols", d.slice_cols}, {"count", d.slice_count}};
  nlohmann::ordered_json maxima = nlohmann::ordered_json::array();
  for (float v : d.slice_max) maxima.push_back(short_number(v));
  j["slice_max"] = std::move(maxima);
  j["worst"] = nlohmann::ordered_json::array();
  for (const TensorDigest::Element& e : d.worst) {
    j["worst"].push_back({{"index", e.index}, {"test", number(e.test)}, {"ref", number(e.ref)}, {"abs_error", number(e.abs_error)}});
  }
  j["heatmaps"] = nlohmann::ordered_json::array();
  for (const TensorDigest::Heatmap& h : d.heatmaps) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (float v : h.values) values.push_back(short_number(v));
    j["heatmaps"].push_back({{"slice", h.slice},
                             {"rows", h.rows},
                             {"cols", h.cols},
                             {"block_rows", h.block_rows},
                             {"block_cols", h.block_cols},
                             {"values", std::move(values)}});
  }
  return j;
}

nlohmann::ordered_json tensor_comparison_json(const TensorComparison& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["passed"] = c.passed;
  if (!c.mismatch.empty()) j["mismatch"] = c.mismatch;
  j["tolerance"] = {{"atol", number(c.tolerance.atol)},
                    {"rtol", number(c.tolerance.rtol)},
                    {"check_error_stat", std::string(error_stat_name(c.tolerance.stat))},
                    {"quantile", number(c.tolerance.quantile)}};
  j["count"] = c.count;
  j["abs_error"] = {{"max", number(c.abs_max)},
                    {"mean", number(c.abs_mean)},
                    {"median", number(c.abs_median)},
                    {"quantile", number(c.abs_quantile)}};
  j["rel_error"] = {{"max", number(c.rel_max)},
                    {"mean", number(c.rel_mean)},
                    {"median", number(c.rel_median)},
                    {"quantile", number(c.rel_quantile)}};
  j["cosine"] = number(c.cosine);
  j["nmse"] = number(c.nmse);
  j["snr_db"] = number(c.snr_db);
  j["nan"] = {{"test", c.nan_test}, {"ref", c.nan_ref}};
  j["inf"] = {{"test", c.inf_test}, {"ref", c.inf_ref}};
  j["mismatch_count"] = c.mismatch_count;
  j["worst"] = {{"index", c.worst_index}, {"test", number(c.worst_test)}, {"ref", number(c.worst_ref)}};
  j["min_passing"] = {{"atol", number(c.min_atol)}, {"rtol", number(c.min_rtol)}};
  if (!c.abs_error_histogram.empty()) {
    nlohmann::ordered_json bins = nlohmann::ordered_json::array();
    for (size_t b = 0; b < c.abs_error_histogram.size(); ++b) {
      bins.push_back({{"abs_error", error_histogram_bin_label(static_cast<int>(b))}, {"count", c.abs_error_histogram[b]}});
    }
    j["histogram"] = std::move(bins);
  }
  if (c.digest) j["digest"] = tensor_digest_json(*c.digest);
  return j;
}

nlohmann::ordered_json results_comparison_json(const ResultsComparison& comparison) {
  nlohmann::ordered_json j;
  j["passed"] = comparison.passed();
  j["tensors"] = nlohmann::ordered_json::array();
  for (const TensorComparison& c : comparison.tensors) j["tensors"].push_back(tensor_comparison_json(c));
  j["only_in_test"] = comparison.only_in_test;
  j["only_in_ref"] = comparison.only_in_ref;
  return j;
}

nlohmann::ordered_json layerwise_comparison_json(const LayerwiseComparison& comparison) {
  nlohmann::ordered_json j;
  j["passed"] = comparison.passed();
  j["local_errors"] = comparison.local_errors;
  const auto layer_name = [&](const std::optional<size_t>& i) -> nlohmann::ordered_json {
    if (!i) return nullptr;
    return comparison.layers[*i].layer.name;
  };
  j["culprit"] = layer_name(comparison.first_culprit);
  j["first_nonfinite"] = layer_name(comparison.first_nonfinite);
  j["ranking"] = nlohmann::ordered_json::array();
  for (size_t i : comparison.ranking()) j["ranking"].push_back(comparison.layers[i].layer.name);
  j["tensors"] = nlohmann::ordered_json::array();
  for (const TensorComparison& c : comparison.tensors) j["tensors"].push_back(tensor_comparison_json(c));
  j["layers"] = nlohmann::ordered_json::array();
  for (const LayerComparison& lc : comparison.layers) {
    nlohmann::ordered_json l;
    l["name"] = lc.layer.name;
    l["op"] = lc.layer.op;
    l["node"] = lc.layer.node;
    l["inputs"] = lc.layer.inputs;
    l["outputs"] = lc.layer.outputs;
    l["accumulated"] = lc.accumulated;
    l["accumulated_excess"] = number(lc.accumulated_excess);
    l["input_excess"] = number(lc.input_excess);
    if (!lc.local.empty()) {
      l["local"] = nlohmann::ordered_json::array();
      for (const TensorComparison& c : lc.local) l["local"].push_back(tensor_comparison_json(c));
      l["local_excess"] = number(lc.local_excess);
    }
    if (!lc.local_skipped.empty()) l["local_skipped"] = lc.local_skipped;
    l["inputs_within"] = lc.inputs_within;
    l["introduces"] = lc.introduces;
    l["nonfinite"] = lc.nonfinite;
    l["score"] = number(lc.score);
    l["rank"] = lc.rank;
    j["layers"].push_back(std::move(l));
  }
  j["only_in_test"] = comparison.only_in_test;
  j["only_in_ref"] = comparison.only_in_ref;
  j["not_produced"] = comparison.not_produced;
  j["peak_held_bytes"] = comparison.peak_held_bytes;
  return j;
}

nlohmann::ordered_json new_run_report(const std::string& model_path) {
  nlohmann::ordered_json report;
  std::error_code ec;
  report["model"] = std::filesystem::absolute(model_path, ec).string();
  report["comparisons"] = nlohmann::ordered_json::array();
  return report;
}

void add_report_comparison(nlohmann::ordered_json& report, const std::string& test, const std::string& ref,
                           size_t iteration, bool details, const std::function<nlohmann::ordered_json()>& comparison) {
  nlohmann::ordered_json entry;
  entry["test"] = test;
  entry["reference"] = ref;
  entry["iteration"] = iteration;
  if (details) entry["comparison"] = comparison();
  report["comparisons"].push_back(std::move(entry));
}

bool holds_layer_tensors(const TensorMap& results, const Graph& graph) {
  size_t graph_outputs = 0;
  for (const ValueInfo& v : graph.outputs) graph_outputs += results.contains(v.name) ? 1 : 0;
  const bool of_this_model = std::any_of(results.begin(), results.end(),
                                         [&](const NamedTensor& t) { return graph.producer_of(t.name) >= 0; });
  return of_this_model && results.size() > graph_outputs;
}

}  // namespace vn
