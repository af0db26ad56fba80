// SPDX-License-Identifier: Apache-2.0
// `vernier debug`: the iterative debugging tools, one function per verb.
#include "tui/cli/commands.h"

namespace vn::cli {

void add_debug_command(CLI::App& app, Action& action) {
  CLI::App* debug = app.add_subcommand("debug", "Iterative debugging: reduce a failing model");
  debug->require_subcommand(1);
  add_debug_reduce(*debug, action);
}

}  // namespace vn::cli
