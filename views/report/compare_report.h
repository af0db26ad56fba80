// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/compare/compare.h"

namespace vn::views {

/// The text report of one comparison (one iteration of one pair of backends): a summary table
/// (tensor, verdict, max abs/rel error, the minimum passing tolerances, cosine), then details —
/// error statistics, metrics, worst element and an error histogram — for failing tensors, or for
/// every tensor when `verbose`. Unpaired tensors are listed by name.
std::string format_comparison(const std::string& title, const ResultsComparison& comparison, bool verbose);

}  // namespace vn::views
