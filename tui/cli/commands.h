// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/common/status.h"

namespace vn::cli {

/// Exit codes shared by every subcommand (CLI.md).
inline constexpr int kExitOk = 0;          ///< success; every comparison passed
inline constexpr int kExitFailed = 1;      ///< the tool worked and a comparison or check failed
inline constexpr int kExitBadInput = 2;    ///< bad usage or bad input

/// Runs the vernier command line `args` (the arguments after the program's name): parses them,
/// runs the chosen subcommand and returns its exit code; usage errors print one line and return
/// kExitBadInput. What the subcommand prints goes to stdout and stderr.
int run_cli(std::vector<std::string> args);

/// Prints "vernier: error: <status>" on one line to stderr and returns the exit code it maps to.
int report_error(const Status& status);

/// The work of the subcommand the user chose, run after the whole command line is parsed;
/// returns the exit code.
using Action = std::function<int()>;

/// The command line as main() parsed it (the arguments after the program's name, `--check CMD
/// ARGS...` taken out): triage keeps it in its session so that --resume reproduces the run.
void set_command_line(std::vector<std::string> args);
const std::vector<std::string>& command_line();

/// Adds --no-mouse to a full-screen command (ui_options.h).
void add_no_mouse_flag(CLI::App& cmd);
/// Adds --no-mouse and --lang (the screens' language) to a full-screen command without a --lang.
void add_ui_flags(CLI::App& cmd);

/// Adds every subcommand of tui/cli/subcommands.inc to `app`, in its order.
void add_subcommands(CLI::App& app, Action& action);

/// Each adds its subcommand to `app`; when the user chooses it, `action` is set to its work.
void add_run_command(CLI::App& app, Action& action);
void add_inspect_command(CLI::App& app, Action& action);
void add_convert_command(CLI::App& app, Action& action);
void add_demo_command(CLI::App& app, Action& action);
void add_browse_command(CLI::App& app, Action& action);
void add_surgeon_command(CLI::App& app, Action& action);
void add_triage_command(CLI::App& app, Action& action);

/// `vernier debug`: creates the group and adds one verb per function below; each verb lives in
/// its own function (and may live in its own file) and adds itself to `debug`.
void add_debug_command(CLI::App& app, Action& action);
void add_debug_build(CLI::App& debug, Action& action);
void add_debug_precision(CLI::App& debug, Action& action);
void add_debug_repeat(CLI::App& debug, Action& action);
void add_debug_reduce(CLI::App& debug, Action& action);

}  // namespace vn::cli
