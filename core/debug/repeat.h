// SPDX-License-Identifier: Apache-2.0
// The iteration loop shared by `debug build` and `debug repeat`: run one check per iteration, sort
// the artifacts by its verdict, stop by a rule (`--until`), and count the verdicts.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/artifacts.h"
#include "core/debug/check.h"

namespace vn::debug {

/// One finished iteration.
struct IterationOutcome {
  int64_t index = 0;  ///< 0-based, as in iteration files and artifact names (N<index>)
  CheckResult result;
  std::vector<SortedArtifact> sorted;
};

/// The verdict counts of a finished loop.
struct LoopSummary {
  int64_t iterations = 0;
  int64_t passed = 0;
  int64_t failed = 0;
  int64_t unresolved = 0;

  /// Passed over all iterations, in percent (0 for none).
  double pass_rate() const;
};

/// `--until N|good|bad` of debug build and repeat: when a loop stops.
struct Until {
  enum class Kind { kCount, kGood, kBad } kind = Kind::kCount;
  int64_t count = 0;

  /// Parses "good", "bad" or a positive count; kInvalidArgument otherwise.
  static Result<Until> parse(const std::string& text);
  /// Whether iteration `index` (0-based) with `verdict` is the last one.
  bool done(int64_t index, Verdict verdict) const;
};

/// Polygraphy's cap on iterations, kept for loops without a count.
inline constexpr int64_t kMaxIterations = 100000;

/// How the loop runs.
struct LoopOptions {
  /// Whether the iteration `index` that ended with `verdict` is the last one. Required.
  std::function<bool(int64_t index, Verdict verdict)> done;
  /// Moves the artifacts after every check (null: nothing to sort).
  const ArtifactSorter* sorter = nullptr;
  /// When set, {"iteration": index} is written here before each check and removed after it
  /// (`--iter-info`), so a check can tell iterations apart.
  std::filesystem::path iteration_file;
  int64_t max_iterations = kMaxIterations;
  const std::atomic<bool>* cancel = nullptr;
  /// Called before each check with the 0-based index.
  std::function<void(int64_t index)> on_start;
  /// Called after each iteration's artifacts are sorted.
  std::function<void(const IterationOutcome& outcome)> on_finish;
};

/// Runs `check` for iterations 0, 1, ... until `options.done` says stop, the cap is reached, or
/// `check` fails. Errors: `check`'s own (kExternalFailure for a check that cannot be started,
/// kCancelled), kIoError when the iteration file cannot be written or artifacts cannot be moved.
Result<LoopSummary> run_iterations(const LoopOptions& options,
                                   const std::function<Result<CheckResult>(int64_t index)>& check);

}  // namespace vn::debug
