// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/compare/compare.h"
#include "core/compare/layerwise.h"

namespace vn {

/// One tensor's comparison as JSON: verdict, tolerance, every statistic and metric, and the
/// minimum passing tolerances. Non-finite numbers are written as the strings "nan", "inf" and
/// "-inf" (JSON has no literal for them).
nlohmann::ordered_json tensor_comparison_json(const TensorComparison& comparison);

/// A whole comparison: "passed", "tensors" (in order), "only_in_test", "only_in_ref".
nlohmann::ordered_json results_comparison_json(const ResultsComparison& comparison);

/// A layer-wise comparison: "passed", "tensors" (accumulated errors), "layers" (execution order:
/// name, op, node, inputs, outputs, the accumulated comparison's index per output, local
/// comparisons, excesses, culprit score and rank), "culprit" and "first_nonfinite" (layer names
/// or null), "ranking" (layer names, likeliest first), the unpaired lists and "peak_held_bytes".
nlohmann::ordered_json layerwise_comparison_json(const LayerwiseComparison& comparison);

/// A tensor's digest as JSON ("shape", "slice": {"rows", "cols", "count"}, "slice_max", "worst":
/// [{"index", "test", "ref", "abs_error"}], "heatmaps": [{"slice", "rows", "cols", "block_rows",
/// "block_cols", "values"}]); the maps' values rounded to three significant digits, which is all a
/// heatmap shows. tensor_comparison_json writes it as "digest" when the comparison has one.
nlohmann::ordered_json tensor_digest_json(const TensorDigest& digest);

/// Reads layerwise_comparison_json's output back (digests included), checking every field's type
/// and every index: a hostile file is one error naming `where` and the field, never a crash.
/// Fields a reader can do without (statistics, local comparisons) default when absent.
Result<LayerwiseComparison> layerwise_comparison_from_json(const nlohmann::ordered_json& json, std::string_view where);

/// The start of `vernier run --report-json`: {"model": the absolute path (for `vernier browse`),
/// "comparisons": []}.
nlohmann::ordered_json new_run_report(const std::string& model_path);

/// Appends {"test", "reference", "iteration", "comparison"} to the report's "comparisons"; the
/// details (`comparison()`, every tensor's statistics) are built only when `details`, so that a
/// run that writes no report does not keep them.
void add_report_comparison(nlohmann::ordered_json& report, const std::string& test, const std::string& ref,
                           size_t iteration, bool details, const std::function<nlohmann::ordered_json()>& comparison);

/// Whether `results` of a model run hold tensors of `graph` other than its outputs (a layer-wise
/// run saved by Vernier or Polygraphy), so comparing them ranks layers. Results of another model
/// (none of their tensors is one of the graph's) are not.
bool holds_layer_tensors(const TensorMap& results, const Graph& graph);

}  // namespace vn
