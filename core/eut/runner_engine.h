// SPDX-License-Identifier: Apache-2.0
// A real engine behind a persistent runner process (README "Engine runners") as the engine under
// test: one process serves every build of a triage or a reduction, so a check costs a model load
// and a run, not a process start.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/runner_client.h"
#include "core/eut/engine_under_test.h"

namespace vn::eut {

struct RunnerEngineOptions {
  /// The runner to start and its time limits (resolve_runner gives the command).
  RunnerOptions runner;
  /// --runner-option KEY=VALUE pairs, passed to every load.
  std::vector<std::pair<std::string, std::string>> options;
  /// What the user gave to --engine-runner (a name or a command line), for command_line().
  std::string spec;
};

/// The engine build flags as a runner's load receives them: the precisions allowed,
/// --layer-precisions, --precision-constraints, --builder-seed, and `threads`.
RunnerBuildFlags runner_build_flags(const engine::BuildOptions& build, int threads);

/// An engine under test run by a runner. Its capabilities are the runner's (hello), except
/// `lowers_precision`: a runner that runs the ONNX file it is given (ONNX Runtime) gets a model
/// converted by Vernier (surgeon::convert_to_fp16 for --fp16, with the layers requested in fp32
/// through --layer-precisions NAME:fp32 kept in float32 when --precision-constraints is prefer or
/// obey; surgeon::convert_to_qdq for --int8, calibrated as the built-in engine calibrates), so for
/// the triage it lowers precision all the same. Refused (kInvalidArgument, naming the flag):
/// --inject-fault (a testing facility of the built-in engine), --load-tactics on a runner without
/// tactic replays, and on a runner that does not lower precision itself --bf16, --tf32, --fp16
/// with --int8, and per-layer requests other than fp32 ones with --fp16.
std::shared_ptr<EngineUnderTest> runner_engine(RunnerEngineOptions options);

}  // namespace vn::eut
