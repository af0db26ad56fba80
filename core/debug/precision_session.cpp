// SPDX-License-Identifier: Apache-2.0
#include "core/debug/precision_session.h"

#include <random>

#include "core/eut/engine_under_test.h"

namespace vn::debug {

Result<PrecisionSessionResult> run_precision_session(const PrecisionSessionConfig& config,
                                                     const PrecisionHooks& hooks) {
  const EngineSessionConfig& engine = config.engine;
  std::vector<TensorMap> ref_outputs;
  VN_ASSIGN_OR_RETURN(const EngineCheckSetup setup, prepare_engine_checks(engine, ref_outputs, hooks.on_reference));
  PrecisionSessionResult out;

  // One tie-break seed for the whole search, so that iterations differ only in the layers marked.
  if (!engine.build.deterministic) {
    out.seed = engine.build.builder_seed ? *engine.build.builder_seed : std::random_device{}();
    if (hooks.on_seed) hooks.on_seed(out.seed);
  }
  engine::BuildOptions base = engine.build;
  base.builder_seed = out.seed;

  // The layers, in network order, from a build with the flags as given: the built-in engine's
  // plan, or the layers another engine under test describes.
  const std::shared_ptr<eut::EngineUnderTest> under_test =
      setup.builtin.under_test ? setup.builtin.under_test : eut::builtin_engine();
  PrepareOptions prep;
  prep.num_threads = setup.builtin.threads;
  Result<std::unique_ptr<eut::Build>> built = under_test->build(engine.model, base, prep);
  if (!built.ok()) return built.status().with_context(engine.model_name);
  std::unique_ptr<eut::Build> probe = std::move(*built);
  if (const std::shared_ptr<const engine::Plan> plan = probe->plan()) {
    out.candidates = precision_candidates(*plan, &out.excluded);
  } else {
    const std::vector<eut::BuiltLayer> layers = probe->layers();
    VN_RETURN_IF_NOT(!layers.empty(), StatusCode::kInvalidArgument,
                     "{}: the engine under test ({}) does not say which layers it built, and debug precision "
                     "searches over them",
                     engine.model_name, under_test->name());
    out.candidates = precision_candidates(layers, config.higher, &out.excluded);
  }
  probe.reset();  // a runner's build holds its session; the search builds its own
  if (hooks.on_candidates) hooks.on_candidates(out.candidates, out.excluded);
  std::vector<std::string> names;
  for (const PrecisionCandidate& c : out.candidates) names.push_back(c.name);

  const ArtifactSorter sorter = engine_artifact_sorter(engine);
  int64_t step = 0;
  std::vector<SortedArtifact> sorted;  // by the last check, reported with its verdict
  PrecisionSearchOptions search = config.search;
  search.on_step = [&](const PrecisionStep& st) {
    if (hooks.on_step) hooks.on_step(step, st, sorted);
  };
  VN_ASSIGN_OR_RETURN(
      out.search, search_precision(names, search, [&](const std::vector<std::string>& marked) -> Result<CheckResult> {
        ++step;
        if (hooks.on_start) hooks.on_start(step, marked);
        engine::BuildOptions build = base;
        for (const std::string& layer : marked) build.layer_precisions.emplace_back(layer, config.higher);
        Result<EngineCheck> c = check_engine_build(setup, build);
        if (c.ok()) {
          Result<std::vector<SortedArtifact>> moved = sorter.sort(step - 1, c->result.verdict);
          if (!moved.ok()) c = moved.status();
          sorted = moved.ok() ? std::move(*moved) : std::vector<SortedArtifact>();
        }
        remove_iter_artifact(engine);
        if (!c.ok()) return c.status();
        return std::move(c->result);
      }));
  return out;
}

}  // namespace vn::debug
