// SPDX-License-Identifier: Apache-2.0
// Timed runs of a backend and their per-layer profile (`vernier run --profile`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/backend.h"

namespace vn {

/// How run_timed runs a backend.
struct TimedRunOptions {
  int warm_up = 0;      ///< untimed runs on the first feed before timing
  bool keep = false;    ///< keep every iteration's outputs in TimedRun::outputs
  bool profile = false; ///< time each layer (RunOptions::profile); ignored by backends that cannot
  /// Called with each iteration's outputs as soon as it has run (e.g. to print them).
  std::function<void(size_t iteration, const TensorMap& outputs)> on_outputs;
};

/// The iterations of one backend over its feeds.
struct TimedRun {
  std::vector<double> ms;           ///< wall time of each run() call
  std::vector<TensorMap> outputs;   ///< per iteration when TimedRunOptions::keep, else empty
  std::vector<LayerTime> layers;    ///< every timed layer of every iteration, in execution order
};

/// Runs `backend` on every feed after the warm-up runs (on feeds[0]). Errors: the first failing run's.
Result<TimedRun> run_timed(Backend& backend, const std::vector<TensorMap>& feeds, const TimedRunOptions& options);

/// One op type of a profile: its nodes per iteration and their time per iteration.
struct OpProfile {
  std::string op;
  size_t count = 0;
  double total_ms = 0;
  double mean_ms = 0;  ///< per node
  double share = 0;    ///< of the run's time, 0..1
};

/// One node or layer of a profile, its time averaged over the iterations.
struct LayerProfile {
  std::string name;
  std::string op;
  int64_t node = -1;
  double ms = 0;
  double share = 0;  ///< of the run's time, 0..1
};

/// Where a backend's run time goes, per iteration (averaged over the iterations).
struct RunProfile {
  std::string runner;
  size_t iterations = 0;
  double run_ms = 0;      ///< wall time of one run() call
  double layers_ms = 0;   ///< the sum of the layers' times; the rest is spent between kernels
  std::vector<OpProfile> ops;        ///< by time, longest first
  std::vector<LayerProfile> layers;  ///< by time, longest first; one per node or layer executed
};

/// Summarizes `run` (iterations whose LayerTime entries repeat the same layers in the same order).
/// Errors: kInternal when the iterations timed different numbers of layers.
Result<RunProfile> summarize_profile(const std::string& runner, const TimedRun& run);

/// The profile as JSON: {"runner", "iterations", "run_ms", "layers_ms", "ops": [{"op", "count",
/// "total_ms", "mean_ms", "share"}], "layers": [{"name", "op", "node", "ms", "share"}]}, every
/// layer included, in the profile's order.
nlohmann::ordered_json profile_json(const RunProfile& profile);

}  // namespace vn
