// SPDX-License-Identifier: Apache-2.0
// The vernier program: runs the command line (tui/cli/program.cpp).
#include <string>
#include <vector>

#include "core/ir/tensor.h"
#include "tui/cli/commands.h"

int main(int argc, char** argv) {
  vn::configure_heap_for_tensors();
  return vn::cli::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
