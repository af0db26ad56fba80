// SPDX-License-Identifier: Apache-2.0
// A `debug repeat` session: a check run again and again until a stopping rule says so, its
// artifacts sorted into good/ and bad/ after every iteration. The check is an external command,
// or the user's answer. The session prints nothing: what the user sees comes through RepeatHooks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "core/common/status.h"
#include "core/debug/check.h"
#include "core/debug/repeat.h"

namespace vn::debug {

struct RepeatSessionConfig {
  Until until;
  /// The check of every iteration; unset, RepeatHooks::ask decides.
  std::optional<ExternalChecker> check;
  /// Moved into `artifacts_dir`/good or bad after every iteration.
  std::vector<std::filesystem::path> artifacts;
  std::filesystem::path artifacts_dir = "vernier_artifacts";
  /// When set, {"iteration": i} is written here before each check and removed after it.
  std::filesystem::path iteration_file;
};

struct RepeatHooks {
  /// Without a check: the verdict of iteration `index`, asked of the user. Required then.
  std::function<Result<CheckResult>(int64_t index)> ask;
  /// Before iteration `index` (0-based).
  std::function<void(int64_t index)> on_start;
  /// After iteration `index` was checked and its artifacts sorted.
  std::function<void(const IterationOutcome& outcome)> on_finish;
};

/// Runs the iterations. Errors: the check's (kExternalFailure when it cannot start) or the
/// answer's, kIoError when the iteration file or an artifact cannot be written or moved.
Result<LoopSummary> run_repeat_session(const RepeatSessionConfig& config, const RepeatHooks& hooks);

}  // namespace vn::debug
