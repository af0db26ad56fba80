// SPDX-License-Identifier: Apache-2.0
// A `debug precision` session: the layers of a build with the flags as given, then the search for
// the layers that must run in a higher precision for the check to pass (core/debug/precision.h),
// one checked build per configuration with its artifacts sorted. The session prints nothing: what
// the user sees comes through PrecisionHooks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/engine_session.h"
#include "core/debug/precision.h"
#include "core/engine/precision.h"

namespace vn::debug {

struct PrecisionSessionConfig {
  /// The model, the check and the base build: its allowed precisions are those searched from; its
  /// layer precisions and constraints (obey or prefer) are kept, the layers marked are added.
  /// Unless `engine.build.deterministic`, every build uses one builder seed: build.builder_seed
  /// when set, else a random one, so that builds differ only in the layers marked.
  EngineSessionConfig engine;
  /// The precision the marked layers are forced to (fp32, or fp16 against bf16/tf32).
  engine::PrecisionId higher = engine::PrecisionId::kFp32;
  /// Mode, direction and minimization; its on_step is the session's own (PrecisionHooks::on_step
  /// is called instead).
  PrecisionSearchOptions search;
};

struct PrecisionHooks {
  /// The built-in check's reference outputs were computed, on this many feeds (not called with an
  /// external check).
  std::function<void(size_t feeds)> on_reference;
  /// The builder seed of every build (not called for deterministic builds).
  std::function<void(uint64_t seed)> on_seed;
  /// The layers the search works on, in network order, and those left out with the reason.
  std::function<void(const std::vector<PrecisionCandidate>& candidates, const std::vector<ExcludedLayer>& excluded)>
      on_candidates;
  /// Before check `step` (1-based) with `marked` in the higher precision.
  std::function<void(int64_t step, const std::vector<std::string>& marked)> on_start;
  /// After check `step` with its verdict and the artifacts sorted by it.
  std::function<void(int64_t step, const PrecisionStep& result, const std::vector<SortedArtifact>& sorted)> on_step;
};

struct PrecisionSessionResult {
  PrecisionResult search;
  std::vector<PrecisionCandidate> candidates;
  std::vector<ExcludedLayer> excluded;
  /// The builder seed of every build (0 for deterministic builds).
  uint64_t seed = 0;
};

/// Builds the engine once to list its layers (precision_candidates), then searches. Errors: the
/// reference backend's and that first build's, in the model's context; the checks'; kIoError when
/// a plan, replay or artifact cannot be written or moved.
Result<PrecisionSessionResult> run_precision_session(const PrecisionSessionConfig& config, const PrecisionHooks& hooks);

}  // namespace vn::debug
