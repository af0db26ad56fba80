// SPDX-License-Identifier: Apache-2.0
// The list of the builder's fusions (core/engine/fusions.inc) as a table.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace vn::engine {

/// One row of core/engine/fusions.inc.
enum class Fusion : uint8_t {
#define VN_FUSION(id, name, help) id,
#include "core/engine/fusions.inc"
#undef VN_FUSION
};

struct FusionInfo {
  Fusion id;
  std::string_view name;  ///< with `{}` for the product and the activation (fusions.inc)
  std::string_view help;
};

/// Every fusion, in the order of core/engine/fusions.inc.
std::span<const FusionInfo> fusion_table();

/// The row of `fusion`.
const FusionInfo& fusion_info(Fusion fusion);

}  // namespace vn::engine
