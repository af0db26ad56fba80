// SPDX-License-Identifier: Apache-2.0
// The bug-report bundle triage writes at its end: everything needed to reproduce the failure in
// one command, with Vernier or with Polygraphy.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/compare/compare.h"
#include "core/engine/builder.h"
#include "core/eut/engine_under_test.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::flow {

/// What goes into a bundle.
struct BundleContents {
  Model model;                  ///< the failing model: the minimal subgraph, or the whole model
  std::vector<TensorMap> feeds; ///< its inputs, one map per iteration
  engine::BuildOptions build;   ///< how the failing engine is built (faults and seed included)
  /// The engine under test; null: Vernier's built-in engine.
  std::shared_ptr<eut::EngineUnderTest> engine;
  CompareConfig compare;        ///< the tolerances the failure breaks
  int threads = 0;
  std::string culprit;          ///< what triage named
  std::string triage_path;      ///< Markdown: the path with the evidence of each answer
};

/// Writes into `dir` (created): model.onnx; inputs.json (Polygraphy feed list) and
/// test_data_set_0/ (ONNX test folder with the reference outputs); reference_outputs.json and
/// failing_outputs.json (Polygraphy RunResults); what the engine under test tells of its build
/// (the built-in engine's plan.json; tactics.json when it tells its tactics; engine_model.onnx,
/// the model Vernier converted for an engine that does not lower precision itself; the files its
/// build left, under engine/);
/// faults.txt when faults were injected; reproduce.sh (one command: exits 1 while the failure
/// reproduces); report.md (culprit, the failure measured, the triage path, and the commands for
/// Vernier and Polygraphy). Errors: the backends' (a model that cannot run), kIoError for files;
/// kInvalidArgument when the bundled engine does not fail, so the bundle would not reproduce.
Status write_bundle(const std::filesystem::path& dir, const BundleContents& contents);

}  // namespace vn::flow
