// SPDX-License-Identifier: Apache-2.0
#include "core/session/layerwise_session.h"

#include <fstream>

#include <fmt/format.h>

#include "core/engine/tactic_registry.h"
#include "core/ref/reference_backend.h"

namespace vn::session {

Result<LayerwiseSession> run_layerwise_session(Model model, const TensorMap& feeds,
                                               const LayerwiseSessionOptions& options, JobContext& context) {
  LayerwiseSession session;
  session.model = std::move(model);
  const Model& m = session.model;
  context.progress(0, "building the engine");
  context.log(fmt::format("Model {}: {} node(s)", m.graph.name, m.graph.nodes.size()));

  PrepareOptions prep;
  prep.mark_all = true;
  prep.num_threads = options.threads;
  ref::ReferenceBackend ref;
  VN_RETURN_IF_ERROR(ref.prepare(m, prep));
  engine::EngineBackend test(options.engine);
  VN_RETURN_IF_ERROR(test.prepare(m, prep));
  if (context.cancelled()) return Status(StatusCode::kCancelled, "cancelled");
  const engine::Plan* plan = test.plan();
  context.log(fmt::format("Built the engine: {} layer(s)", plan != nullptr ? plan->layers.size() : 0));

  size_t expected = 0;
  for (const Node& node : m.graph.nodes) expected += node.outputs.size();
  size_t produced = 0;
  LayerwiseOptions lw;
  lw.config = options.config;
  lw.local_errors = options.local_errors;
  lw.cancel = context.cancel_flag();
  lw.on_tensor = [&](bool is_test, const std::string& name, const Tensor& tensor) {
    (is_test ? session.test : session.ref).set(name, tensor.clone());
    if (is_test) {
      ++produced;
      context.progress(expected == 0 ? 0.0 : static_cast<double>(produced) / static_cast<double>(expected),
                       "comparing " + name);
    }
  };
  VN_ASSIGN_OR_RETURN(session.comparison, compare_layerwise(ref, test, feeds, lw));

  for (const LayerComparison& layer : session.comparison.layers) {
    const engine::PlanLayer* pl = plan != nullptr ? plan->find_layer(layer.layer.name) : nullptr;
    session.layer_precision.emplace_back(pl != nullptr ? engine::precision_name(pl->precision) : "");
    session.layer_tactic.emplace_back(pl != nullptr ? engine::tactic_info(pl->tactic).name : "");
  }
  const LayerwiseComparison& c = session.comparison;
  context.log(fmt::format("Compared {} tensor(s): {}", c.tensors.size(), c.passed() ? "PASSED" : "FAILED"));
  if (c.first_culprit) {
    context.log(fmt::format("First layer introducing the error: {}", c.layers[*c.first_culprit].layer.name));
  }
  if (c.first_nonfinite) {
    context.log(fmt::format("First layer producing NaN/Inf: {}", c.layers[*c.first_nonfinite].layer.name));
  }
  context.progress(1, "done");
  return session;
}

Result<LayerwiseSession> recompare_layerwise_session(const LayerwiseSession& done, const CompareConfig& config,
                                                     JobContext& context) {
  context.progress(0, "comparing again");
  LayerwiseSession next = done;
  VN_ASSIGN_OR_RETURN(LayerwiseComparison c, compare_layerwise_results(next.test, next.ref, next.model.graph, config));
  // Results carry graph layers, not engine layers; keep the engine's names where they match.
  std::vector<std::string> precision, tactic;
  for (const LayerComparison& l : c.layers) {
    std::string p, t;
    for (size_t k = 0; k < done.comparison.layers.size(); ++k) {
      if (done.comparison.layers[k].layer.node == l.layer.node) {
        p = done.layer_precision[k];
        t = done.layer_tactic[k];
      }
    }
    precision.push_back(p);
    tactic.push_back(t);
  }
  next.comparison = std::move(c);
  next.layer_precision = std::move(precision);
  next.layer_tactic = std::move(tactic);
  context.log(fmt::format("Compared again with atol {} rtol {}: {}", config.tolerance_for("").atol,
                          config.tolerance_for("").rtol, next.comparison.passed() ? "PASSED" : "FAILED"));
  return next;
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
