// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>

#include "core/compare/compare.h"

namespace vn {

/// One tensor's comparison as JSON: verdict, tolerance, every statistic and metric, and the
/// minimum passing tolerances. Non-finite numbers are written as the strings "nan", "inf" and
/// "-inf" (JSON has no literal for them).
nlohmann::ordered_json tensor_comparison_json(const TensorComparison& comparison);

/// A whole comparison: "passed", "tensors" (in order), "only_in_test", "only_in_ref".
nlohmann::ordered_json results_comparison_json(const ResultsComparison& comparison);

}  // namespace vn
