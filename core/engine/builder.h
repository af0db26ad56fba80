// SPDX-License-Identifier: Apache-2.0
// The builder: model -> plan. It folds constants, fuses layers, picks each layer's precision from
// the build flags and constraints, then times the candidate tactics on the layer's real shapes and
// keeps the fastest, as TensorRT's builder does; so two builds of one model can differ.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/data/synthetic.h"
#include "core/engine/calibration.h"
#include "core/engine/fault.h"
#include "core/engine/folding.h"
#include "core/engine/fusion.h"
#include "core/engine/layer.h"
#include "core/engine/plan.h"
#include "core/engine/tactic_replay.h"
#include "core/ir/graph.h"
#include "core/engine/timing_cache.h"
#include "core/ops/op_registry.h"

namespace vn::engine {

/// The Engine build option group of the CLI.
struct BuildOptions {
  /// Precisions the builder may use besides fp32 (always allowed): --fp16 allows kFp16 and
  /// kFp16Strict, --bf16 kBf16, --tf32 kTf32, --int8 kInt8 (which needs `int8`'s scales).
  PrecisionMask allowed = kFp32;
  /// Per-layer requests (`--layer-precisions NAME:PREC`); NAME is a layer or any node fused into it.
  std::vector<std::pair<std::string, PrecisionId>> layer_precisions;
  /// How binding the requests are. Defaults to kNone, under which they are ignored, as in TensorRT.
  PrecisionConstraints constraints = PrecisionConstraints::kNone;
  /// Breaks ties between tactics timed within `timing_margin` of the fastest; random (and recorded
  /// in the plan) when unset.
  std::optional<uint64_t> builder_seed;
  /// Relative noise margin of timing: candidates within (1 + margin) x the fastest median are
  /// tied. Defaults to 0.1.
  double timing_margin = 0.1;
  /// Skip timing and take the stable choice: the first candidate in precision order, then
  /// catalogue order.
  bool deterministic = false;
  /// Timed runs per candidate (after one warm-up run); slow candidates stop early.
  int timing_runs = 5;
  /// Shapes of dynamic graph inputs for the timing runs; unset dynamic dims become 1.
  std::map<std::string, Shape> input_shapes;
  /// Take every layer's tactic and precision from this replay instead of timing (`--load-tactics`).
  std::optional<TacticReplay> replay;
  /// Faults to inject (`--inject-fault`).
  std::vector<FaultSpec> faults;
  /// How int8 scales are obtained when kInt8 is allowed.
  Int8Options int8;
  /// Timings are looked up here before a candidate is timed, and recorded here after
  /// (`--timing-cache`); a hit skips the candidate's timing runs. Shared, so several builds can fill
  /// one cache; one build at a time.
  std::shared_ptr<TimingCache> timing_cache;
};

/// An engine ready to run: its plan and one compiled layer per plan layer. Not movable: the
/// compiled layers point into `graph` and `folded`.
struct BuiltEngine {
  Plan plan;
  FoldedGraph folded;
  LayerGraph graph;
  std::vector<std::unique_ptr<CompiledLayer>> layers;

  BuiltEngine() = default;
  BuiltEngine(const BuiltEngine&) = delete;
  BuiltEngine& operator=(const BuiltEngine&) = delete;
};

/// Builds an engine for `model` returning the tensors `outputs` (which `model` must define; they
/// block fusions across them). `model` and `registry` must outlive the engine. Runs the model's
/// layers once on synthetic inputs (seed 1, values in [0, 1)) to time the tactics.
/// With kInt8 allowed it first obtains the activation scales (see Int8Options) and prefers int8 for
/// every layer with an int8 tactic; the others stay in float and PlanLayer::int8_fallback says why.
/// Errors: kInvalidArgument for a --layer-precisions name or fault target that names no layer, a
/// request `obey` cannot meet, a replay that lacks a layer or replays a tactic that cannot run it,
/// a calibration cache written for another model; kIoError for unreadable calibration data or
/// cache; the failing layer's error when no candidate can run it.
Result<std::unique_ptr<BuiltEngine>> build_engine(const Model& model, const std::vector<std::string>& outputs,
                                                  const BuildOptions& options, const ops::OpRegistry& registry,
                                                  int num_threads);

/// Rebuilds the engine a plan describes, without timing. Errors: kInvalidArgument when the plan
/// belongs to another model, returns other tensors than `outputs`, or lists layers this version
/// of Vernier does not fuse the same way.
Result<std::unique_ptr<BuiltEngine>> load_engine(const Model& model, const Plan& plan,
                                                 const std::vector<std::string>& outputs,
                                                 const ops::OpRegistry& registry, int num_threads);

}  // namespace vn::engine
