// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/compare/tensor_stats.h"
#include "core/ir/tensor.h"

namespace vn::views {

/// "name [dtype=float32, shape=(1, 3)] | Stats: mean=..., std-dev=..., ..., min=... at (0, 1), ..."
/// in Polygraphy's order and %.5g formatting; NaN/Inf counts are appended when present.
std::string format_tensor_summary(const std::string& name, const Tensor& tensor);

/// A text histogram, one line per bin: "(lo, hi) | count | ####" with bars scaled to 40 columns
/// and edges printed with %.3g, each line prefixed by `indent`.
std::string format_histogram(const Histogram& histogram, const std::string& indent);

/// The tensor's values in numpy's nested-bracket layout, at most `max_items` of them (an
/// ellipsis marks the rest).
std::string format_values(const Tensor& tensor, int64_t max_items);

}  // namespace vn::views
