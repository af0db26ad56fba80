// SPDX-License-Identifier: Apache-2.0
#include "core/flow/watch.h"

#include <unordered_map>

#include "core/flow/walk.h"

namespace vn::flow {
namespace {

// Layers are published at most this often (a layer-wise comparison counts thousands a second);
// stage changes, the first and the last layer, and every build and check (each an engine build)
// always.
constexpr std::chrono::milliseconds kPublishInterval{50};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

ProgressReporter::ProgressReporter(const TriageWatch* watch, std::string node)
    : watch_(watch), start_(std::chrono::steady_clock::now()), stage_start_(start_) {
  progress_.node = std::move(node);
}

void ProgressReporter::stage(std::string stage, ProgressUnit unit, int64_t total, bool at_most) {
  progress_.stage = std::move(stage);
  progress_.unit = unit;
  progress_.done = 0;
  progress_.total = total;
  progress_.at_most = at_most;
  progress_.remaining.reset();
  progress_.item.clear();
  stage_start_ = std::chrono::steady_clock::now();
  publish(true);
}

void ProgressReporter::count(int64_t done, std::string item, std::optional<int64_t> total) {
  const bool first = progress_.done == 0 && done > 0;
  progress_.done = done;
  progress_.item = std::move(item);
  if (total) progress_.total = *total;
  progress_.remaining.reset();
  if (done > 0 && progress_.total > 0) {
    const int64_t left = std::max<int64_t>(0, progress_.total - done);
    progress_.remaining = seconds_since(stage_start_) / static_cast<double>(done) * static_cast<double>(left);
  }
  publish(first || done >= progress_.total || progress_.unit != ProgressUnit::kLayer);
}

void ProgressReporter::publish(bool force) {
  if (watch_ == nullptr || !watch_->progress) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - published_ < kPublishInterval) return;
  published_ = now;
  progress_.elapsed = seconds_since(start_);
  watch_->progress(progress_);
}

std::function<void(bool, const std::string&, const Tensor&)> count_layers(ProgressReporter& progress,
                                                                          const std::vector<LayerInfo>& layers) {
  // A layer counts once its first output arrives; on the test's side, one call at a time.
  auto first_output = std::make_shared<std::unordered_map<std::string, size_t>>();
  for (size_t j = 0; j < layers.size(); ++j) {
    if (!layers[j].outputs.empty()) first_output->emplace(layers[j].outputs.front(), j);
  }
  auto done = std::make_shared<int64_t>(0);
  return [&progress, &layers, first_output, done](bool test, const std::string& name, const Tensor&) {
    if (!test) return;
    const auto it = first_output->find(name);
    if (it == first_output->end()) return;
    const size_t next = it->second + 1;
    first_output->erase(it);
    progress.count(++*done, next < layers.size() ? layers[next].name : std::string());
  };
}

std::shared_ptr<const session::LayerwiseSession> layerwise_session(const Model& model, LayerwiseComparison comparison,
                                                                   const eut::Build& build) {
  auto session = std::make_shared<session::LayerwiseSession>();
  session->model = model;
  session->comparison = std::move(comparison);
  const std::shared_ptr<const engine::Plan> plan = build.plan();
  session::describe_layers(plan.get(), *session);
  if (plan == nullptr) {
    std::unordered_map<std::string, const eut::BuiltLayer*> built;
    const std::vector<eut::BuiltLayer> layers = build.layers();
    for (const eut::BuiltLayer& l : layers) built.emplace(l.name, &l);
    for (size_t j = 0; j < session->comparison.layers.size(); ++j) {
      const auto it = built.find(session->comparison.layers[j].layer.name);
      if (it == built.end()) continue;
      session->layer_precision[j] = it->second->precision;
      session->layer_tactic[j] = it->second->tactic;
    }
  }
  return session;
}

void publish_walk(const Walk& w) {
  const TriageWatch& watch = w.config.watch;
  if (watch.model) watch.model(w.config.model);
  if (!watch.layerwise || !w.layerwise) return;
  // A resumed session kept the layers' errors, not the tensors' comparisons.
  auto session = std::make_shared<session::LayerwiseSession>();
  session->model = w.config.model;
  session->comparison = *w.layerwise;
  session::describe_layers(nullptr, *session);
  watch.layerwise(std::move(session), "");
}

}  // namespace vn::flow
