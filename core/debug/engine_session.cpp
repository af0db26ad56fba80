// SPDX-License-Identifier: Apache-2.0
#include "core/debug/engine_session.h"

#include <algorithm>
#include <system_error>

namespace vn::debug {

Result<EngineCheckSetup> prepare_engine_checks(const EngineSessionConfig& config, std::vector<TensorMap>& ref_outputs,
                                               const std::function<void(size_t feeds)>& on_reference) {
  EngineCheckSetup setup = config.setup;
  if (!setup.external) {
    // The model and feeds stay the same for every build: the reference runs once.
    Result<std::vector<TensorMap>> ref = reference_outputs(config.model, config.feeds, setup.builtin.threads);
    if (!ref.ok()) return ref.status().with_context(config.model_name + ": the reference backend");
    ref_outputs = std::move(*ref);
    if (on_reference) on_reference(config.feeds.size());
  }
  setup.model = &config.model;
  setup.feeds = &config.feeds;
  setup.ref_outputs = &ref_outputs;
  return setup;
}

ArtifactSorter engine_artifact_sorter(const EngineSessionConfig& config) {
  std::vector<std::filesystem::path> paths = config.artifacts;
  const std::filesystem::path& replay = config.setup.save_tactics;
  if (!replay.empty() && std::find(paths.begin(), paths.end(), replay) == paths.end()) paths.push_back(replay);
  return ArtifactSorter(config.artifacts_dir, std::move(paths));
}

void remove_iter_artifact(const EngineSessionConfig& config) {
  if (config.keep_iter_artifact) return;
  std::error_code ec;
  std::filesystem::remove(config.setup.iter_artifact, ec);
}

}  // namespace vn::debug
