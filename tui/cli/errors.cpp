// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "tui/cli/commands.h"

namespace vn::cli {

int report_error(const Status& status) {
  if (status.ok()) return kExitOk;
  const std::string message = status.to_string();
  // One line, always: multi-line messages from libraries are folded, and other control bytes (a NUL
  // in a hostile tensor name would cut the line short) are written as \xNN escapes.
  std::string line = "vernier: error: ";
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      line += ' ';
    } else if (byte < 0x20 || byte == 0x7f) {
      line += fmt::format("\\x{:02x}", byte);
    } else {
      line += c;
    }
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  return kExitBadInput;
}

}  // namespace vn::cli
