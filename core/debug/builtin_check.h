// SPDX-License-Identifier: Apache-2.0
// The built-in check: the engine under test against the reference backend on one model, in
// process, with the comparison options of `vernier run`. A debug tool's iteration costs one engine
// build and a run of each backend, with no subprocess and no model file.
#pragma once

#include <atomic>
#include <vector>

#include "core/common/status.h"
#include "core/compare/compare.h"
#include "core/debug/check.h"
#include "core/debug/tolerance_reach.h"
#include "core/engine/engine_backend.h"
#include "core/eut/engine_under_test.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::debug {

/// How the built-in check builds and compares.
struct BuiltinCheck {
  engine::EngineOptions engine;  ///< build options: precisions, faults, seed, replay, ...
  CompareConfig compare;         ///< tolerances for the graph outputs
  int threads = 1;
  /// The engine under test, built with `engine.build` (`engine.plan` is not used: every check
  /// builds); null: Vernier's built-in engine.
  std::shared_ptr<eut::EngineUnderTest> under_test;
  /// Where `compare`'s default tolerances came from, said in the reason; unset: not said.
  std::optional<ToleranceOrigin> origin;
};

/// Everything one built-in check produced besides its verdict.
struct BuiltinCheckDetail {
  CheckResult result;
  /// The comparison of each feed's graph outputs (empty when the engine could not be built).
  std::vector<ResultsComparison> comparisons;
  /// The plan the engine was built with (null when it could not be built, or the engine under test
  /// is not the built-in one).
  std::shared_ptr<const engine::Plan> plan;
  /// The build's tactic choices, when the engine under test tells them.
  std::optional<engine::TacticReplay> tactic_replay;
  /// Whether the engine under test built the model (false: unresolved because it could not).
  bool built = false;
  /// The numbers of every output compared (output_numbers, for the loosest precision the build
  /// allowed), failing or passing.
  std::vector<OutputNumbers> outputs;
};

/// Builds the engine for `model` (faults on layers the model lacks are ignored: a reduced model holds
/// only part of the original), runs it and the reference on every feed, and compares the graph
/// outputs: bad when any output of any feed fails its tolerance, good when all pass. The reason
/// says how many comparisons failed and the numbers of the first failing output, or of the one
/// closest to failing when all pass (numbers_text), then what the tolerance cannot tell on any
/// output (ToleranceReach::note). A model the
/// engine cannot build or run, or the reference cannot run, is unresolved with the reason (a
/// reduction can produce candidates outside what the engine supports; they say nothing about the
/// failure being chased). `ref_outputs`, when given, are the reference's outputs for `feeds`
/// computed earlier (debug build and precision keep the model and feeds fixed). Errors: only
/// kCancelled.
Result<BuiltinCheckDetail> run_builtin_check(const Model& model, const std::vector<TensorMap>& feeds,
                                             const BuiltinCheck& check,
                                             const std::vector<TensorMap>* ref_outputs = nullptr,
                                             const std::atomic<bool>* cancel = nullptr);

/// The reference backend's graph outputs of `model` for every feed.
Result<std::vector<TensorMap>> reference_outputs(const Model& model, const std::vector<TensorMap>& feeds,
                                                 int threads, const std::atomic<bool>* cancel = nullptr);

}  // namespace vn::debug
