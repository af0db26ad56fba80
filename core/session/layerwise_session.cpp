// SPDX-License-Identifier: Apache-2.0
#include "core/session/layerwise_session.h"

#include <fstream>

#include <fmt/format.h>

#include "core/engine/tactic_registry.h"
#include "core/ref/reference_backend.h"

namespace vn::session {

void describe_layers(const engine::Plan* plan, LayerwiseSession& session) {
  session.layer_precision.clear();
  session.layer_tactic.clear();
  for (const LayerComparison& layer : session.comparison.layers) {
    const engine::PlanLayer* pl = plan != nullptr ? plan->find_layer(layer.layer.name) : nullptr;
    session.layer_precision.emplace_back(pl != nullptr ? engine::precision_name(pl->precision) : "");
    session.layer_tactic.emplace_back(pl != nullptr ? engine::tactic_info(pl->tactic).name : "");
  }
}

Result<std::unique_ptr<LayerwiseRunner>> LayerwiseRunner::build(Model model, TensorMap feeds,
                                                                 LayerwiseSessionOptions options) {
  // The backends are prepared on the model the runner keeps.
  auto shared = std::make_shared<const Model>(std::move(model));
  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = options.threads;
  auto ref = std::make_unique<ref::ReferenceBackend>();
  VN_RETURN_IF_ERROR(ref->prepare(*shared, prep));
  auto test = std::make_unique<engine::EngineBackend>(options.engine);
  VN_RETURN_IF_ERROR(test->prepare(*shared, prep));
  return std::make_unique<LayerwiseRunner>(std::move(shared), std::move(feeds), std::move(ref), std::move(test),
                                           std::move(options));
}

LayerwiseRunner::LayerwiseRunner(std::shared_ptr<const Model> model, TensorMap feeds, std::unique_ptr<Backend> ref,
                                 std::unique_ptr<Backend> test, LayerwiseSessionOptions options)
    : model_(std::move(model)),
      feeds_(std::move(feeds)),
      ref_(std::move(ref)),
      test_(std::move(test)),
      options_(std::move(options)) {}

Result<LayerwiseSession> LayerwiseRunner::run(const CompareConfig& config, JobContext& context) {
  LayerwiseSession session;
  session.model = *model_;
  size_t expected = 0;
  for (const Node& node : model_->graph.nodes) expected += node.outputs.size();
  size_t produced = 0;
  LayerwiseOptions lw;
  lw.config = config;
  lw.local_errors = options_.local_errors;
  lw.cancel = context.cancel_flag();
  lw.threads = options_.threads;
  lw.digest = options_.digest;
  lw.on_tensor = [&](bool is_test, const std::string& name, const Tensor&) {
    if (!is_test) return;
    ++produced;
    context.progress(expected == 0 ? 0.0 : static_cast<double>(produced) / static_cast<double>(expected),
                     "comparing " + name);
  };
  VN_ASSIGN_OR_RETURN(session.comparison, compare_layerwise(*ref_, *test_, feeds_, lw));
  const auto* engine = dynamic_cast<const engine::EngineBackend*>(test_.get());
  describe_layers(engine != nullptr ? engine->plan() : nullptr, session);
  const LayerwiseComparison& c = session.comparison;
  context.log(fmt::format("Compared {} tensor(s) with atol {:g} rtol {:g}: {}", c.tensors.size(),
                          config.tolerance_for("").atol, config.tolerance_for("").rtol,
                          c.passed() ? "PASSED" : "FAILED"));
  if (c.first_culprit) {
    context.log(fmt::format("First layer introducing the error: {}", c.layers[*c.first_culprit].layer.name));
  }
  if (c.first_nonfinite) {
    context.log(fmt::format("First layer producing NaN/Inf: {}", c.layers[*c.first_nonfinite].layer.name));
  }
  context.progress(1, "done");
  return session;
}

Status export_layer_table(const LayerwiseSession& session, const std::filesystem::path& path) {
  std::ofstream out(path);
  if (!out) return make_error(StatusCode::kIoError, "{}: cannot write", path.string());
  out << "layer\top\trank\taccumulated_excess\tlocal_excess\n";
  for (const LayerComparison& l : session.comparison.layers) {
    out << fmt::format("{}\t{}\t{}\t{}\t{}\n", l.layer.name, l.layer.op, l.rank, l.accumulated_excess, l.local_excess);
  }
  if (!out) return make_error(StatusCode::kIoError, "{}: write failed", path.string());
  return Status::OK();
}

}  // namespace vn::session
