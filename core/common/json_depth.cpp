// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_depth.h"

#include <cstddef>

namespace vn {

Status check_json_depth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return make_error(StatusCode::kIoError, "invalid JSON: nested deeper than {} levels (at byte {})", max_depth, i);
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status::OK();
}

}  // namespace vn
