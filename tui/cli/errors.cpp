// SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include "tui/cli/commands.h"

namespace vn::cli {

int report_error(const Status& status) {
  if (status.ok()) return kExitOk;
  std::string line = status.to_string();
  // One line, always: multi-line messages from libraries are folded.
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "vernier: error: %s\n", line.c_str());
  return kExitBadInput;
}

}  // namespace vn::cli
