// SPDX-License-Identifier: Apache-2.0
// The engine under test, whichever it is: Vernier's built-in engine or a real one behind a runner
// process (README "Engine runners"). Everything the triage and the debug tools do to "the engine"
// goes through this interface: build a model with the engine build flags, run the build, ask what
// it built, and ask what the engine can do at all. What an engine cannot do is skipped by the
// caller with the reason in its evidence, never faked.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/backend.h"
#include "core/common/status.h"
#include "core/engine/builder.h"
#include "core/engine/plan.h"
#include "core/ir/graph.h"

namespace vn::eut {

/// What an engine under test can do.
struct Capabilities {
  /// Two builds of one model may compute differently (timed tactic choices): rebuilding is a way
  /// to find an intermittent failure. False: every build of a model is the same.
  bool builds_vary = false;
  /// Returns any tensor of the model when asked (layer-wise comparison).
  bool intermediate_tensors = false;
  /// Its builds run one layer alone on given inputs (Backend::layers): local errors come from the
  /// build itself. Otherwise they come from an isolated-layers model (local_errors.h).
  bool layers_alone = false;
  /// Honours --fp16/--bf16/--tf32/--int8 itself. False: it runs the ONNX file it is given, and
  /// gets a model Vernier converted instead (float16 or QDQ), so the flags mean the same.
  bool lowers_precision = false;
  /// Honours per-layer precision requests (--layer-precisions).
  bool per_layer_precision = false;
  /// Its builds say which tactic each layer runs (tactic replays, for the tactic diff).
  bool tactic_replays = false;
  /// Its builds leave files (engine plans) to sort into good and bad builds.
  bool artifacts = false;
};

/// {"builds_vary": ..., ...}: the capabilities as evidence.
nlohmann::ordered_json capabilities_json(const Capabilities& capabilities);
/// The capabilities held, comma-separated in capabilities_json's order, or "none".
std::string capabilities_summary(const Capabilities& capabilities);

/// One layer of a build, as the engine describes it (any field may be empty).
struct BuiltLayer {
  std::string name;
  std::string op;
  std::string precision;
  std::string tactic;
};

/// One build of a model: a prepared backend, and what the engine says about it.
class Build {
 public:
  virtual ~Build() = default;
  /// The build, prepared with the tensors asked for: run it like any backend.
  virtual Backend& backend() = 0;
  /// The build's layers in execution order, as far as the engine tells them.
  virtual std::vector<BuiltLayer> layers() const = 0;
  /// The built-in engine's plan; null for other engines.
  virtual std::shared_ptr<const engine::Plan> plan() const { return nullptr; }
  /// The build's tactic choices, when the engine tells them.
  virtual std::optional<engine::TacticReplay> tactic_replay() const { return std::nullopt; }
  /// Files the build left (engine plans), to be sorted into good and bad builds.
  virtual std::vector<std::filesystem::path> artifacts() const { return {}; }
  /// The model the engine runs when Vernier converted it to lower its precision (float16, QDQ);
  /// null when the engine runs the model it was given.
  virtual const Model* converted_model() const { return nullptr; }
};

/// An engine under test.
class EngineUnderTest {
 public:
  virtual ~EngineUnderTest() = default;
  /// Its short name in reports: "engine" for Vernier's own, the runner's name ("ort") otherwise.
  virtual std::string name() const = 0;
  /// One line for the evidence: "Vernier's built-in engine", "onnxruntime 1.30.0 (runner ort)".
  /// A runner is started to ask it; errors are those of starting it.
  virtual Result<std::string> describe() = 0;
  virtual Result<Capabilities> capabilities() = 0;
  /// Builds `model` with the engine build flags `build` and prepares it with `prepare` (the
  /// tensors to return, the threads). The model must outlive the build. Flags the engine cannot
  /// honour are refused (kInvalidArgument naming them), never dropped. Errors: the engine's.
  virtual Result<std::unique_ptr<Build>> build(const Model& model, const engine::BuildOptions& build,
                                               const PrepareOptions& prepare) = 0;
  /// The command-line flags that select this engine, for the commands a bundle writes to
  /// reproduce a failure ({"--engine-runner", "ort", "--runner-option", "opt_level=all"}); empty
  /// for the built-in engine (its flag, --engine, depends on the command).
  virtual std::vector<std::string> command_line() const = 0;
};

/// Vernier's built-in engine (EngineBackend). It varies between builds unless `build` is
/// deterministic or replays tactics; runs layers alone; lowers precision; honours per-layer
/// precision; tells its tactics and writes its plan.
std::shared_ptr<EngineUnderTest> builtin_engine();

}  // namespace vn::eut
