// SPDX-License-Identifier: Apache-2.0
#include "core/debug/build.h"

#include <chrono>

#include "core/engine/engine_backend.h"
#include "core/eut/engine_under_test.h"
#include "core/engine/tactic_replay.h"

namespace vn::debug {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The iteration artifact (the plan, or the first file another engine's build left) and the tactic
// replay, where the setup asks for them. An external check reads the artifact, so an engine that
// leaves none cannot serve it; the built-in check reads nothing from it, and an engine that leaves
// no file (ONNX Runtime) just has none.
Status write_artifacts(const EngineCheckSetup& setup, const EngineCheck& check,
                       const std::vector<std::filesystem::path>& files) {
  if (!setup.iter_artifact.empty()) {
    if (check.plan) {
      VN_RETURN_IF_ERROR(engine::save_plan(*check.plan, setup.iter_artifact));
    } else if (files.empty() && !setup.external) {
      // Nothing to write.
    } else {
      VN_RETURN_IF_NOT(!files.empty(), StatusCode::kInvalidArgument,
                       "--iter-artifact: the engine under test leaves no file for the check to read");
      std::error_code ec;
      std::filesystem::copy_file(files.front(), setup.iter_artifact, std::filesystem::copy_options::overwrite_existing,
                                 ec);
      VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot write: {}", setup.iter_artifact.string(), ec.message());
    }
  }
  if (!setup.save_tactics.empty() && check.tactic_replay) {
    VN_RETURN_IF_ERROR(engine::save_tactic_replay(*check.tactic_replay, setup.save_tactics));
  }
  return Status::OK();
}

}  // namespace

Result<EngineCheck> check_engine_build(const EngineCheckSetup& setup, const engine::BuildOptions& build,
                                       const std::atomic<bool>* cancel) {
  VN_CHECK(setup.model != nullptr, "check_engine_build needs a model");
  const auto start = std::chrono::steady_clock::now();
  EngineCheck out;
  const std::shared_ptr<eut::EngineUnderTest> engine =
      setup.builtin.under_test ? setup.builtin.under_test : eut::builtin_engine();

  if (!setup.external) {
    VN_CHECK(setup.feeds && setup.ref_outputs, "the built-in check needs feeds and reference outputs");
    BuiltinCheck check = setup.builtin;
    check.engine.build = build;
    check.under_test = engine;
    VN_ASSIGN_OR_RETURN(BuiltinCheckDetail detail,
                        run_builtin_check(*setup.model, *setup.feeds, check, setup.ref_outputs, cancel));
    out.result = std::move(detail.result);
    out.plan = std::move(detail.plan);
    out.tactic_replay = std::move(detail.tactic_replay);
    // A build that fails is a failure of the engine (a bad iteration), as in Polygraphy.
    if (!detail.built) {
      out.result.verdict = Verdict::kBad;
    } else {
      VN_RETURN_IF_ERROR(write_artifacts(setup, out, {}));
    }
    return out;
  }

  VN_CHECK(!setup.iter_artifact.empty(), "an external check reads the plan from the iteration artifact");
  PrepareOptions prep;
  prep.num_threads = setup.builtin.threads;
  Result<std::unique_ptr<eut::Build>> built = engine->build(*setup.model, build, prep);
  if (!built.ok()) {
    if (built.status().code() == StatusCode::kCancelled) return built.status();
    out.result.verdict = Verdict::kBad;
    out.result.reason = "the engine cannot build it: " + built.status().to_string();
    out.result.seconds = seconds_since(start);
    return out;
  }
  out.plan = (*built)->plan();
  out.tactic_replay = (*built)->tactic_replay();
  VN_RETURN_IF_ERROR(write_artifacts(setup, out, (*built)->artifacts()));
  VN_ASSIGN_OR_RETURN(out.result, setup.external->run(cancel));
  out.result.seconds = seconds_since(start);
  return out;
}

}  // namespace vn::debug
