// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/backend/profile.h"

namespace vn::views {

/// The text report of a profile: a summary line (run time, time in kernels), the op-type table
/// (op, nodes, total ms, mean ms, share of the run) and the layer table (rank, layer, op, ms,
/// share) of the `top` longest layers, the others summed in one row. Longest first.
std::string format_profile(const RunProfile& profile, size_t top);

}  // namespace vn::views
