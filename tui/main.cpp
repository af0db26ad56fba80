// SPDX-License-Identifier: Apache-2.0
// The vernier program: parses the command line and runs one subcommand (tui/cli/).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/common/logging.h"
#include "core/debug/check.h"
#include "core/ir/tensor.h"
#include "tui/cli/commands.h"
#include "tui/cli/debug_options.h"

int main(int argc, char** argv) {
  vn::configure_heap_for_tensors();
  CLI::App app{"Vernier: find where a deployed neural network loses accuracy"};
  app.set_version_flag("--version", "vernier 0.1.0");
  app.require_subcommand(1);
  bool quiet = false;
  bool debug = false;
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.add_flag("--debug", debug, "Debug logging on stderr");

  vn::cli::Action action;
  vn::cli::add_run_command(app, action);
  vn::cli::add_inspect_command(app, action);
  vn::cli::add_convert_command(app, action);
  vn::cli::add_demo_command(app, action);
  vn::cli::add_browse_command(app, action);
  vn::cli::add_surgeon_command(app, action);
  vn::cli::add_debug_command(app, action);
  vn::cli::add_triage_command(app, action);

  // `--check CMD ARGS...` takes the rest of the line (Polygraphy's rule), so it is cut off before
  // CLI11 sees options that belong to the check command.
  std::vector<std::string> args(argv + 1, argv + argc);
  vn::cli::set_check_command(vn::debug::take_check_command(args));
  vn::cli::set_command_line(args);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports usage errors with its own codes; the contract is one line and exit 2.
    std::fprintf(stderr, "vernier: error: %s (see --help)\n", e.what());
    return vn::cli::kExitBadInput;
  }
  const CLI::App* chosen = &app;
  while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
  if (vn::cli::check_command() && !vn::cli::accepts_check_command(chosen)) {
    std::fprintf(stderr, "vernier: error: --check is not an option of '%s' (see --help)\n", chosen->get_name().c_str());
    return vn::cli::kExitBadInput;
  }
  if (quiet) vn::set_log_threshold(vn::LogLevel::kWarning);
  if (debug) vn::set_log_threshold(vn::LogLevel::kDebug);
  return action ? action() : vn::cli::kExitBadInput;
}
