// SPDX-License-Identifier: Apache-2.0
// The vernier program's command line: every subcommand added, the line parsed, the chosen one run.
#include <algorithm>
#include <cstdio>

#include "core/common/logging.h"
#include "core/debug/check.h"
#include "tui/cli/commands.h"
#include "tui/cli/debug_options.h"

namespace vn::cli {

void add_subcommands(CLI::App& app, Action& action) {
#define VN_SUBCOMMAND(name) add_##name##_command(app, action);
#include "tui/cli/subcommands.inc"
#undef VN_SUBCOMMAND
}

int run_cli(std::vector<std::string> args) {
  CLI::App app{"Vernier: find where a deployed neural network loses accuracy"};
  app.set_version_flag("--version", "vernier 0.1.0");
  app.require_subcommand(1);
  bool quiet = false;
  bool debug = false;
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.add_flag("--debug", debug, "Debug logging on stderr");

  clear_accepted_check_commands();
  Action action;
  add_subcommands(app, action);

  // `--check CMD ARGS...` takes the rest of the line (Polygraphy's rule), so it is cut off before
  // CLI11 sees options that belong to the check command.
  set_check_command(debug::take_check_command(args));
  set_command_line(args);
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
    return kExitBadInput;
  }
  const CLI::App* chosen = &app;
  while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
  if (check_command() && !accepts_check_command(chosen)) {
    std::fprintf(stderr, "vernier: error: --check is not an option of '%s' (see --help)\n", chosen->get_name().c_str());
    return kExitBadInput;
  }
  if (quiet) set_log_threshold(LogLevel::kWarning);
  if (debug) set_log_threshold(LogLevel::kDebug);
  return action ? action() : kExitBadInput;
}

}  // namespace vn::cli
