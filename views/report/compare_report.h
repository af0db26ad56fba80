// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/compare/compare.h"
#include "core/compare/layerwise.h"

namespace vn::views {

/// The text report of one comparison (one iteration of one pair of backends): a summary table
/// (tensor, verdict, max abs/rel error, the minimum passing tolerances, cosine), then details —
/// error statistics, metrics, worst element and an error histogram — for failing tensors, or for
/// every tensor when `verbose`. Unpaired tensors are listed by name.
std::string format_comparison(const std::string& title, const ResultsComparison& comparison, bool verbose);

/// The text report of a layer-wise comparison: a summary line, the culprit (the first layer that
/// introduces the error) and the first layer producing NaN/Inf, a table of the ten likeliest
/// culprits with accumulated and local errors (every layer in execution order when `verbose`),
/// details of the first failing tensors (all tensors when `verbose`), the unpaired tensors, and
/// the verdict line of format_comparison.
std::string format_layerwise(const std::string& title, const LayerwiseComparison& comparison, bool verbose);

}  // namespace vn::views
