// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace vn {

/// Reads and parses a JSON file holding a `what` ("tactic replay", "Vernier plan", ...), refusing
/// nesting deeper than kMaxJsonDepth before parsing (check_json_depth). The document keeps its key
/// order. kIoError "<path>: cannot open the <what>" when unreadable, the depth error with the path,
/// "<path>: not a JSON file, so not a <what>" when it does not parse. Checking the document's
/// structure is the caller's.
Result<nlohmann::ordered_json> read_json_file(const std::filesystem::path& path, std::string_view what);

}  // namespace vn
