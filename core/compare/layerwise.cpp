// SPDX-License-Identifier: Apache-2.0
// Layer-wise comparison: the layers of a graph, the culprit ranking, and the comparison of saved
// results (the two runs side by side are in layerwise_stream.cpp).
#include "core/compare/layerwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/topo.h"

namespace vn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// How much of tolerance `tol` an error of `needed` takes: 0 for none, +inf when `tol` is 0.
double ratio(double needed, double tol) {
  if (needed <= 0) return 0;
  return tol > 0 ? needed / tol : kInf;
}

bool adds_nonfinite(const TensorComparison& c) { return c.nan_test + c.inf_test > c.nan_ref + c.inf_ref; }

}  // namespace

double tolerance_excess(const TensorComparison& c) {
  if (!c.mismatch.empty()) return kInf;
  const double excess = std::min(ratio(c.min_atol, c.tolerance.atol), ratio(c.min_rtol, c.tolerance.rtol));
  // A failed string comparison carries no error magnitudes: just past the tolerance.
  return c.passed ? excess : std::max(excess, std::nextafter(1.0, kInf));
}

bool LayerwiseComparison::passed() const {
  return !tensors.empty() &&
         std::all_of(tensors.begin(), tensors.end(), [](const TensorComparison& c) { return c.passed; });
}

std::vector<size_t> LayerwiseComparison::ranking() const {
  std::vector<size_t> ranked;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].rank > 0) ranked.push_back(i);
  }
  std::sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) { return layers[a].rank < layers[b].rank; });
  return ranked;
}

Result<std::vector<LayerInfo>> graph_layers(const Graph& graph) {
  VN_ASSIGN_OR_RETURN(std::vector<int64_t> order, topological_order(graph));
  GraphIndex index(graph);
  std::vector<LayerInfo> layers;
  for (int64_t i : order) {
    const Node& n = graph.nodes[static_cast<size_t>(i)];
    if (n.op_type == "Constant" && is_default_domain(n.domain)) continue;
    LayerInfo info{node_label(graph, i), n.op_type, i, {}, {}};
    for (const std::string& in : n.inputs) {
      if (!in.empty() && !index.is_initializer(in) &&
          std::find(info.inputs.begin(), info.inputs.end(), in) == info.inputs.end()) {
        info.inputs.push_back(in);
      }
    }
    for (const std::string& out : n.outputs) {
      if (!out.empty()) info.outputs.push_back(out);
    }
    layers.push_back(std::move(info));
  }
  return layers;
}

void rank_culprits(LayerwiseComparison& result) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < result.tensors.size(); ++i) by_name.emplace(result.tensors[i].name, i);
  result.first_culprit.reset();
  result.first_nonfinite.reset();

  for (size_t j = 0; j < result.layers.size(); ++j) {
    LayerComparison& lc = result.layers[j];
    lc.accumulated.assign(lc.layer.outputs.size(), -1);
    lc.accumulated_excess = 0;
    lc.input_excess = 0;
    lc.inputs_within = true;
    lc.nonfinite = false;
    bool accumulated_failed = false;
    for (size_t k = 0; k < lc.layer.outputs.size(); ++k) {
      auto it = by_name.find(lc.layer.outputs[k]);
      if (it == by_name.end()) continue;
      const TensorComparison& c = result.tensors[it->second];
      lc.accumulated[k] = static_cast<int>(it->second);
      lc.accumulated_excess = std::max(lc.accumulated_excess, tolerance_excess(c));
      accumulated_failed = accumulated_failed || !c.passed;
      lc.nonfinite = lc.nonfinite || adds_nonfinite(c);
    }
    for (const std::string& in : lc.layer.inputs) {
      auto it = by_name.find(in);
      if (it == by_name.end()) continue;
      const TensorComparison& c = result.tensors[it->second];
      lc.input_excess = std::max(lc.input_excess, tolerance_excess(c));
      lc.inputs_within = lc.inputs_within && c.passed;
      // NaN/Inf arriving from upstream is not this layer's doing.
      if (adds_nonfinite(c)) lc.nonfinite = false;
    }
    bool local_failed = false, local_nonfinite = false;
    lc.local_excess = lc.local.empty() ? -1 : 0;
    for (const TensorComparison& c : lc.local) {
      lc.local_excess = std::max(lc.local_excess, tolerance_excess(c));
      local_failed = local_failed || !c.passed;
      local_nonfinite = local_nonfinite || adds_nonfinite(c);
    }
    if (!lc.local.empty()) {
      lc.score = lc.local_excess;
      lc.introduces = local_failed && lc.inputs_within;
      lc.nonfinite = lc.nonfinite || local_nonfinite;
    } else {
      lc.score = lc.accumulated_excess / std::max(1.0, lc.input_excess);
      lc.introduces = accumulated_failed && lc.inputs_within;
    }
    if (lc.introduces && !result.first_culprit) result.first_culprit = j;
    if (lc.nonfinite && !result.first_nonfinite) result.first_nonfinite = j;
  }

  // Layers that introduce an error come first, then by score; execution order breaks ties so the
  // earliest of equally bad layers leads.
  std::vector<size_t> order;
  for (size_t j = 0; j < result.layers.size(); ++j) {
    result.layers[j].rank = 0;
    if (result.layers[j].score > 0 || result.layers[j].introduces) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const LayerComparison& x = result.layers[a];
    const LayerComparison& y = result.layers[b];
    if (x.introduces != y.introduces) return x.introduces;
    return x.score > y.score;
  });
  for (size_t r = 0; r < order.size(); ++r) result.layers[order[r]].rank = static_cast<int>(r + 1);
}

Result<LayerwiseComparison> compare_layerwise_results(const TensorMap& test, const TensorMap& ref, const Graph& graph,
                                                      const CompareConfig& config,
                                                      const std::optional<DigestLimits>& digest) {
  LayerwiseComparison result;
  VN_ASSIGN_OR_RETURN(std::vector<LayerInfo> layers, graph_layers(graph));
  const ResultsComparison plain = compare_results(test, ref, config);
  result.tensors = plain.tensors;
  if (digest) {
    for (TensorComparison& c : result.tensors) {
      const Tensor* t = test.find(c.name);
      const Tensor* r = ref.find(c.name);
      if (t != nullptr && r != nullptr) c.digest = std::make_shared<const TensorDigest>(digest_tensors(*t, *r, *digest));
    }
  }
  result.only_in_test = plain.only_in_test;
  result.only_in_ref = plain.only_in_ref;
  for (LayerInfo& info : layers) {
    LayerComparison lc;
    lc.layer = std::move(info);
    result.layers.push_back(std::move(lc));
  }
  rank_culprits(result);
  return result;
}

}  // namespace vn
