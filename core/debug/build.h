// SPDX-License-Identifier: Apache-2.0
// One engine build checked: the iteration of `debug build` (a fresh builder seed each time) and of
// `debug precision` (more layers forced to a higher precision each time). The check is the
// built-in engine-vs-reference comparison, or an external command that reads the plan written to
// the iteration artifact.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/common/status.h"
#include "core/debug/builtin_check.h"
#include "core/debug/check.h"
#include "core/engine/builder.h"
#include "core/engine/plan.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

/// What stays fixed across the iterations of one debug session. The pointers must outlive the
/// calls to check_engine_build.
struct EngineCheckSetup {
  const Model* model = nullptr;
  /// Feeds and their reference outputs, computed once; used by the built-in check only.
  const std::vector<TensorMap>* feeds = nullptr;
  const std::vector<TensorMap>* ref_outputs = nullptr;
  /// Tolerances and threads of the built-in check (its engine options are replaced per call).
  BuiltinCheck builtin;
  /// The external check; null for the built-in one.
  const ExternalChecker* external = nullptr;
  /// Where each build's plan is written before the check (`--iter-artifact`); empty: not written.
  /// An external check needs it.
  std::filesystem::path iter_artifact;
  /// Where each build's tactic replay is written (`--save-tactics`); empty: not written.
  std::filesystem::path save_tactics;
};

/// One checked build.
struct EngineCheck {
  CheckResult result;
  /// The plan built (null when the build failed or the engine under test is not the built-in one).
  std::shared_ptr<const engine::Plan> plan;
  /// The build's tactic choices, when the engine tells them.
  std::optional<engine::TacticReplay> tactic_replay;
};

/// Builds the engine under test (`setup.builtin.under_test`, the built-in engine when null) with
/// `build`, writes the plan (for another engine, the first file its build left) and tactic replay
/// where the setup says, and
/// checks it. A build that fails is a bad iteration whose reason is the builder's error (a build
/// that fails for some seeds is a failure of the engine, as in Polygraphy's debug build); the
/// built-in check's unresolved runs (the engine or reference cannot run) stay unresolved.
/// Errors: kIoError when the plan or replay cannot be written; the external check's errors
/// (kExternalFailure when it cannot start); kCancelled.
Result<EngineCheck> check_engine_build(const EngineCheckSetup& setup, const engine::BuildOptions& build,
                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace vn::debug
