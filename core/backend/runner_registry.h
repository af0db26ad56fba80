// SPDX-License-Identifier: Apache-2.0
// Which program a `--engine-runner` starts: the named runners shipped in assets/runners/, or any
// command line.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace vn {

/// A runner shipped with Vernier: `interpreter <assets>/runners/<script>`.
struct NamedRunner {
  std::string_view name;         ///< what --engine-runner accepts ("ort")
  std::string_view interpreter;  ///< looked up on PATH ("node", "python3")
  std::string_view script;       ///< file name under <assets>/runners/
  std::string_view summary;      ///< one line for help and errors
};

/// Every named runner, in the order help lists them.
std::span<const NamedRunner> named_runners();

/// How to start one runner process.
struct RunnerCommand {
  /// The runner's name in reports: a named runner's name, "runner" for a command line.
  std::string name;
  /// What the user gave (a name or the command line), for error messages.
  std::string spec;
  std::vector<std::string> argv;
  /// Environment variables set for the runner (NODE_PATH for `ort`).
  std::vector<std::pair<std::string, std::string>> env;
};

/// Resolves `--engine-runner SPEC`: a name of named_runners() starts its interpreter on its script
/// under `assets_dir`/runners (`ort` also gets NODE_PATH pointing at the folder
/// scripts/install-deps.sh installs onnxruntime-node into, <assets_dir>/../.deps/node/node_modules,
/// ahead of any NODE_PATH already set); anything else is a command line run with /bin/sh -c.
/// Errors: kInvalidArgument for an empty SPEC, or a single word that is neither a named runner nor
/// a program on PATH (the message lists the names); kNotFound when a named runner's script is
/// missing from `assets_dir`.
Result<RunnerCommand> resolve_runner(const std::string& spec, const std::filesystem::path& assets_dir);

}  // namespace vn
