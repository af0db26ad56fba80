// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include "core/common/status.h"

namespace vn {

/// How deep Vernier's JSON files may nest. Real files (RunResults, plans, replays, caches) need
/// fewer than ten levels.
inline constexpr int kMaxJsonDepth = 64;

/// Scans JSON text for nesting deeper than `max_depth` lists and objects (brackets inside strings
/// do not count). nlohmann's parser is iterative, but copying, comparing and dumping a document
/// recurse, so a hostile "[[[[...]]]]" must be refused before it becomes a document. Malformed
/// text that nests no deeper passes: the parser reports it. kIoError "invalid JSON: nested deeper
/// than N levels (at byte B)".
Status check_json_depth(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace vn
