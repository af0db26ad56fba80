// SPDX-License-Identifier: Apache-2.0
#include "core/debug/build_session.h"

#include <random>

namespace vn::debug {

Result<BuildSessionResult> run_build_session(const BuildSessionConfig& config, const BuildHooks& hooks) {
  const EngineSessionConfig& engine = config.engine;
  std::vector<TensorMap> ref_outputs;
  VN_ASSIGN_OR_RETURN(const EngineCheckSetup setup, prepare_engine_checks(engine, ref_outputs, hooks.on_reference));
  const ArtifactSorter sorter = engine_artifact_sorter(engine);

  BuildSessionResult out;
  std::random_device device;
  uint64_t seed = 0;
  LoopOptions loop;
  loop.done = [&](int64_t index, Verdict v) { return config.until.done(index, v); };
  loop.sorter = &sorter;
  loop.on_start = hooks.on_start;
  loop.on_finish = [&](const IterationOutcome& o) {
    if (hooks.on_finish) hooks.on_finish(o);
    remove_iter_artifact(engine);
    (o.result.verdict == Verdict::kBad ? out.bad_seeds : out.good_seeds).push_back(seed);
  };
  Result<LoopSummary> summary = run_iterations(loop, [&](int64_t index) -> Result<CheckResult> {
    engine::BuildOptions build = engine.build;
    // Each build gets its own seed, so builds whose tactics tie within the timing margin differ;
    // the seed is reported so any build can be reproduced with --builder-seed.
    if (engine.build.builder_seed) {
      seed = *engine.build.builder_seed;
    } else if (config.first_builder_seed) {
      seed = *config.first_builder_seed + static_cast<uint64_t>(index);
    } else {
      seed = (uint64_t{device()} << 32) | device();
    }
    build.builder_seed = seed;
    VN_ASSIGN_OR_RETURN(EngineCheck c, check_engine_build(setup, build));
    if (hooks.on_built) hooks.on_built(index, seed, c.plan.get());
    return std::move(c.result);
  });
  if (!summary.ok()) {
    remove_iter_artifact(engine);
    return summary.status();
  }
  out.summary = *summary;
  return out;
}

}  // namespace vn::debug
