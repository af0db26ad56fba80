// SPDX-License-Identifier: Apache-2.0
#include "core/backend/profile.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace vn {

Result<TimedRun> run_timed(Backend& backend, const std::vector<TensorMap>& feeds, const TimedRunOptions& options) {
  for (int i = 0; i < options.warm_up && !feeds.empty(); ++i) {
    VN_RETURN_IF_ERROR(backend.run(feeds.front()).status());
  }
  TimedRun run;
  RunOptions run_options;
  if (options.profile && backend.can_profile()) run_options.profile = &run.layers;
  for (size_t it = 0; it < feeds.size(); ++it) {
    // Room for every iteration's entries once the first has run: the vector grows no more while
    // tensors come and go.
    if (it == 1) run.layers.reserve(run.layers.size() * feeds.size());
    const auto start = std::chrono::steady_clock::now();
    Result<TensorMap> out = backend.run(feeds[it], run_options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) return out.status();
    run.ms.push_back(ms);
    if (options.on_outputs) options.on_outputs(it, *out);
    if (options.keep) run.outputs.push_back(std::move(*out));
  }
  return run;
}

Result<RunProfile> summarize_profile(const std::string& runner, const TimedRun& run) {
  RunProfile profile;
  profile.runner = runner;
  profile.iterations = run.ms.size();
  if (profile.iterations == 0) return profile;
  const double n = static_cast<double>(profile.iterations);
  for (double ms : run.ms) profile.run_ms += ms / n;
  if (run.layers.size() % profile.iterations != 0) {
    return make_error(StatusCode::kInternal, "{}: {} layer times over {} iterations", runner, run.layers.size(),
                      profile.iterations);
  }
  const size_t per_iteration = run.layers.size() / profile.iterations;
  for (size_t i = 0; i < per_iteration; ++i) {
    const LayerTime& first = run.layers[i];
    LayerProfile layer{std::string(first.name), std::string(first.op), first.node, 0, 0};
    for (size_t it = 0; it < profile.iterations; ++it) {
      const LayerTime& t = run.layers[it * per_iteration + i];
      if (t.node != first.node) {
        return make_error(StatusCode::kInternal, "{}: iteration {} ran layer '{}' where the first ran '{}'", runner,
                          it, t.name, first.name);
      }
      layer.ms += t.ms / n;
    }
    profile.layers.push_back(std::move(layer));
  }
  // Shares are of the whole run() call, so they sum to at most 1 with what lies between kernels.
  const double run_ms = profile.run_ms > 0 ? profile.run_ms : 1;
  std::map<std::string, OpProfile> ops;
  for (LayerProfile& layer : profile.layers) {
    layer.share = layer.ms / run_ms;
    profile.layers_ms += layer.ms;
    OpProfile& op = ops[layer.op];
    op.op = layer.op;
    op.count += 1;
    op.total_ms += layer.ms;
  }
  for (auto& [name, op] : ops) {
    op.mean_ms = op.total_ms / static_cast<double>(op.count);
    op.share = op.total_ms / run_ms;
    profile.ops.push_back(op);
  }
  const auto by_time = [](const auto& a, const auto& b) { return a.total_ms > b.total_ms; };
  std::stable_sort(profile.ops.begin(), profile.ops.end(), by_time);
  std::stable_sort(profile.layers.begin(), profile.layers.end(),
                   [](const LayerProfile& a, const LayerProfile& b) { return a.ms > b.ms; });
  return profile;
}

nlohmann::ordered_json profile_json(const RunProfile& profile) {
  nlohmann::ordered_json j;
  j["runner"] = profile.runner;
  j["iterations"] = profile.iterations;
  j["run_ms"] = profile.run_ms;
  j["layers_ms"] = profile.layers_ms;
  j["ops"] = nlohmann::ordered_json::array();
  for (const OpProfile& op : profile.ops) {
    j["ops"].push_back({{"op", op.op}, {"count", op.count}, {"total_ms", op.total_ms}, {"mean_ms", op.mean_ms},
                        {"share", op.share}});
  }
  j["layers"] = nlohmann::ordered_json::array();
  for (const LayerProfile& l : profile.layers) {
    j["layers"].push_back({{"name", l.name}, {"op", l.op}, {"node", l.node}, {"ms", l.ms}, {"share", l.share}});
  }
  return j;
}

}  // namespace vn
