// SPDX-License-Identifier: Apache-2.0
// The vernier program: parses the command line and runs one subcommand (tui/cli/).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "core/common/logging.h"
#include "tui/cli/commands.h"

int main(int argc, char** argv) {
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

  try {
    app.parse(argc, argv);
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
  if (quiet) vn::set_log_threshold(vn::LogLevel::kWarning);
  if (debug) vn::set_log_threshold(vn::LogLevel::kDebug);
  return action ? action() : vn::cli::kExitBadInput;
}
