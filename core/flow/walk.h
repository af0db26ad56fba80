// SPDX-License-Identifier: Apache-2.0
// Inside triage (core/flow, not for other callers): what a walk through the flowchart learns and
// hands on from probe to probe, the probes themselves (probes.cpp), and the walk's session state
// (walk_state.cpp).
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/compare/layerwise.h"
#include "core/debug/reduce.h"
#include "core/debug/replay.h"
#include "core/eut/engine_under_test.h"
#include "core/flow/bundle.h"
#include "core/flow/session_file.h"
#include "core/flow/triage.h"

namespace vn::flow {

// What the probes learn and hand on to later probes.
struct Walk {
  Walk(TriageConfig& c, const std::atomic<bool>* k) : config(c), cancel(k) {}

  TriageConfig& config;
  const std::atomic<bool>* cancel;
  std::vector<TensorMap> feeds;        ///< the data the failure shows on
  std::vector<TensorMap> ref_outputs;  ///< the reference's outputs for `feeds`
  /// The reducer of the model over `feeds` (every tensor's reference values), made once for the
  /// extract and reduce probes.
  std::optional<debug::Reducer> reducer;
  std::optional<LayerwiseComparison> layerwise;
  std::string culprit;
  std::string outcome;  ///< set when a probe ends the walk outside the chart's ends
  int64_t checks = 0;   ///< built-in checks run (each one engine build and run)
  int64_t builds = 0;   ///< engine builds, checks included
  std::filesystem::path bad_replay;  ///< the tactic replay of a failing build (intermittency probe)
  std::string lost_failure;  ///< what the last reduction that found no failing candidate saw
  /// The failing case for the bundle, once a probe has pinned it down.
  std::optional<BundleContents> failing;
  /// The iterations of the reduction a resumed session had in progress (checked again by none),
  /// and what is told of every new one (the session records it).
  debug::DebugReplay reduce_replay;
  debug::ReduceObserver reduce_observer;
  /// The engine under test (the config's, or the built-in engine) and what it can do.
  std::shared_ptr<eut::EngineUnderTest> engine;
  eut::Capabilities capabilities;
  /// The running probe's progress for the watch (made by run_probe).
  std::optional<ProgressReporter> progress;
};

struct Answered {
  std::optional<bool> answer;
  std::string summary;
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
};

/// Runs the probe of `node` (its `probe` field) on the walk. Errors: the probe's, kInvalidArgument
/// for a probe no code implements.
Result<Answered> run_probe(Walk& w, const FlowNode& node);

/// Tells the watch the walk's model, and the layer-wise comparison a resumed session kept.
void publish_walk(const Walk& w);

/// A LayerwiseOptions::on_tensor that counts the layers of `layers` whose first output the backend
/// under test produced, for the progress (layer 120 of 683).
std::function<void(bool test, const std::string& name, const Tensor& tensor)> count_layers(
    ProgressReporter& progress, const std::vector<LayerInfo>& layers);

/// The layer-wise step's comparison of `model` as the screens show it: each layer's precision and
/// tactic from the built-in engine's plan, else from what `build` tells of its layers.
std::shared_ptr<const session::LayerwiseSession> layerwise_session(const Model& model, LayerwiseComparison comparison,
                                                                   const eut::Build& build);

/// What the walk hands on, for the session state: small values inline, models, feeds and the
/// layer-wise comparison as files of the session folder named after their contents (so the state
/// recorded at each step keeps its own); `saved_model_hash` is the hash of the model written last.
Result<nlohmann::ordered_json> walk_json(const Walk& w, const TriageSession& session, std::string& saved_model_hash);

/// Brings the walk back to the hand-on `j` (one walk_json wrote): what differs from the walk in
/// memory is read from the session's files (the reference outputs of the failing data computed
/// again, a reference run, when the data or the model changed), what is the same stays (a
/// layer-wise comparison keeps its tensors' statistics). Errors: kIoError naming what the state
/// lacks or a file that cannot be read.
Status restore_walk(Walk& w, const nlohmann::ordered_json& j, const TriageSession& session,
                    std::string& saved_model_hash);

/// A number as JSON, infinities and NaN (which JSON has no literal for) as "inf", "-inf", "nan".
nlohmann::ordered_json number_json(double v);

/// Brings a new session's state file into being, or a resumed one's walk back: the steps it
/// answered (shown to `observe`) and what they hand on. Returns the node to continue at, null when
/// the session had ended.
Result<const FlowNode*> open_session(Walk& w, TriageSession& session, const Flowchart& chart, TriageResult& result,
                                     const TriageObserver& observe, std::string& saved_model_hash);

}  // namespace vn::flow
