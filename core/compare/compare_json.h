// SPDX-License-Identifier: Apache-2.0
#pragma once

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

}  // namespace vn
