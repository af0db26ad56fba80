// SPDX-License-Identifier: Apache-2.0
#include "core/debug/repeat_session.h"

#include "core/debug/artifacts.h"

namespace vn::debug {

Result<LoopSummary> run_repeat_session(const RepeatSessionConfig& config, const RepeatHooks& hooks) {
  VN_CHECK(config.check || hooks.ask != nullptr, "a repeat session without a check needs an ask hook");
  const ArtifactSorter sorter(config.artifacts_dir, config.artifacts);
  LoopOptions loop;
  loop.done = [&](int64_t index, Verdict v) { return config.until.done(index, v); };
  loop.sorter = &sorter;
  loop.iteration_file = config.iteration_file;
  loop.on_start = hooks.on_start;
  loop.on_finish = hooks.on_finish;
  return run_iterations(loop, [&](int64_t index) -> Result<CheckResult> {
    if (config.check) return config.check->run();
    return hooks.ask(index);
  });
}

}  // namespace vn::debug
