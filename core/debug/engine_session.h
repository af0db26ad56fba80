// SPDX-License-Identifier: Apache-2.0
// What the debug sessions that build engines (`debug build`, `debug precision`) share: the model,
// the feeds and reference outputs of the built-in check, the check itself, and the artifacts sorted
// after every build.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/artifacts.h"
#include "core/debug/build.h"
#include "core/engine/builder.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

/// A session of engine builds, each checked.
struct EngineSessionConfig {
  Model model;
  /// Names the model in errors (its path).
  std::string model_name;
  /// The feeds of the built-in check (unused with an external check).
  std::vector<TensorMap> feeds;
  /// How each build is checked: setup.builtin (tolerances as given, threads, ...) or
  /// setup.external, and where each build's plan (iter_artifact) and tactic replay (save_tactics)
  /// are written. Its model, feeds and reference outputs are the session's own: the session sets
  /// them.
  EngineCheckSetup setup;
  /// The build as the user asked for it; each iteration changes its seed (build) or its layer
  /// precisions (precision).
  engine::BuildOptions build;
  /// Moved into `artifacts_dir`/good or bad after every build; the setup's save_tactics replay is
  /// sorted too, listed or not (it is what `inspect diff-tactics` reads).
  std::vector<std::filesystem::path> artifacts;
  std::filesystem::path artifacts_dir = "vernier_artifacts";
  /// Keep the iteration artifact after each build (by default it is removed unless sorted).
  bool keep_iter_artifact = false;
};

/// The check_engine_build setup of `config`, pointing at its model and feeds and at `ref_outputs`,
/// which the built-in check fills with the reference outputs of every feed (`on_reference` is then
/// called with the number of feeds). Errors: the reference backend's, in the model's context.
Result<EngineCheckSetup> prepare_engine_checks(const EngineSessionConfig& config, std::vector<TensorMap>& ref_outputs,
                                               const std::function<void(size_t feeds)>& on_reference);

/// The sorter of `config.artifacts` plus the tactic replay.
ArtifactSorter engine_artifact_sorter(const EngineSessionConfig& config);

/// Removes the iteration artifact unless it is kept (already gone when it was sorted).
void remove_iter_artifact(const EngineSessionConfig& config);

}  // namespace vn::debug
