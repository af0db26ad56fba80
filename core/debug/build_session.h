// SPDX-License-Identifier: Apache-2.0
// A `debug build` session: the engine built again and again, each time with its own builder seed
// (timing ties are broken by it, so builds differ as TensorRT's do), every build checked and its
// artifacts sorted into good/ and bad/, until a stopping rule says so. The session prints nothing:
// what the user sees comes through BuildHooks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/common/status.h"
#include "core/debug/engine_session.h"
#include "core/debug/repeat.h"
#include "core/engine/plan.h"

namespace vn::debug {

struct BuildSessionConfig {
  /// The model, the check and the base build. `engine.build.builder_seed`, when set, is the seed
  /// of every build (--builder-seed).
  EngineSessionConfig engine;
  Until until;
  /// Without a fixed seed, build i (0-based) uses this + i, for a reproducible session; unset,
  /// every build draws a random seed.
  std::optional<uint64_t> first_builder_seed;
};

struct BuildHooks {
  /// The built-in check's reference outputs were computed, on this many feeds (not called with an
  /// external check).
  std::function<void(size_t feeds)> on_reference;
  /// Before build `index` (0-based).
  std::function<void(int64_t index)> on_start;
  /// Build `index` was made with `seed` (`plan` null when the build failed), before its verdict.
  std::function<void(int64_t index, uint64_t seed, const engine::Plan* plan)> on_built;
  /// After build `index` was checked and its artifacts sorted.
  std::function<void(const IterationOutcome& outcome)> on_finish;
};

struct BuildSessionResult {
  LoopSummary summary;
  /// The builder seeds of the failing and of the other builds, in order.
  std::vector<uint64_t> bad_seeds;
  std::vector<uint64_t> good_seeds;
};

/// Runs the builds until `config.until` says stop. A build that fails is a failed iteration (the
/// builder's error is its reason). The iteration artifact is removed after each build unless kept.
/// Errors: the reference backend's, the check's (kExternalFailure for a check that cannot start),
/// kIoError when a plan, replay or artifact cannot be written or moved.
Result<BuildSessionResult> run_build_session(const BuildSessionConfig& config, const BuildHooks& hooks);

}  // namespace vn::debug
