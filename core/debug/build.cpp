// SPDX-License-Identifier: Apache-2.0
#include "core/debug/build.h"

#include <chrono>

#include "core/engine/engine_backend.h"
#include "core/engine/tactic_replay.h"

namespace vn::debug {
namespace {

Status write_artifacts(const EngineCheckSetup& setup, const engine::Plan& plan) {
  if (!setup.iter_artifact.empty()) VN_RETURN_IF_ERROR(engine::save_plan(plan, setup.iter_artifact));
  if (!setup.save_tactics.empty()) {
    VN_RETURN_IF_ERROR(engine::save_tactic_replay(engine::tactic_replay_from_plan(plan), setup.save_tactics));
  }
  return Status::OK();
}

}  // namespace

Result<EngineCheck> check_engine_build(const EngineCheckSetup& setup, const engine::BuildOptions& build,
                                       const std::atomic<bool>* cancel) {
  VN_CHECK(setup.model != nullptr, "check_engine_build needs a model");
  const auto start = std::chrono::steady_clock::now();
  EngineCheck out;
  engine::EngineOptions options;
  options.build = build;

  if (!setup.external) {
    VN_CHECK(setup.feeds && setup.ref_outputs, "the built-in check needs feeds and reference outputs");
    BuiltinCheck check = setup.builtin;
    check.engine = options;
    VN_ASSIGN_OR_RETURN(BuiltinCheckDetail detail,
                        run_builtin_check(*setup.model, *setup.feeds, check, setup.ref_outputs, cancel));
    out.result = std::move(detail.result);
    out.plan = std::move(detail.plan);
    if (!out.plan) {
      out.result.verdict = Verdict::kBad;
    } else {
      VN_RETURN_IF_ERROR(write_artifacts(setup, *out.plan));
    }
    return out;
  }

  VN_CHECK(!setup.iter_artifact.empty(), "an external check reads the plan from the iteration artifact");
  engine::EngineBackend engine(options);
  PrepareOptions prep;
  prep.num_threads = setup.builtin.threads;
  if (Status s = engine.prepare(*setup.model, prep); !s.ok()) {
    if (s.code() == StatusCode::kCancelled) return s;
    out.result.verdict = Verdict::kBad;
    out.result.reason = "the engine cannot build it: " + s.to_string();
    out.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }
  out.plan = std::make_shared<const engine::Plan>(*engine.plan());
  VN_RETURN_IF_ERROR(write_artifacts(setup, *out.plan));
  VN_ASSIGN_OR_RETURN(out.result, setup.external->run(cancel));
  out.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace vn::debug
