// SPDX-License-Identifier: Apache-2.0
// Layer-wise sessions built from synthetic graphs and tensors, for screen tests and benchmarks:
// real core comparisons (compare_layerwise_results) of made-up results, no backend run.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/compare/layerwise.h"
#include "core/session/layerwise_session.h"

namespace vn::views::testing {

struct FixtureNode {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;  ///< names of earlier nodes (their output is named like the node) or "x"
};

/// A session over `nodes`: every node outputs a tensor of `shape` named like the node; the
/// engine's values equal the reference's up to `fault_node`, which adds an error that grows
/// downstream; `nan_node` (if any) produces one NaN. Each comparison keeps its digest, as a live
/// session's do; the tensors themselves are dropped.
inline std::shared_ptr<session::LayerwiseSession> make_session(const std::vector<FixtureNode>& nodes, Shape shape,
                                                                const std::string& fault_node,
                                                                const std::string& nan_node = {}) {
  auto s = std::make_shared<session::LayerwiseSession>();
  Graph& g = s->model.graph;
  g.name = "fixture";
  g.inputs.push_back({"x", DType::kFloat32, std::nullopt, {}});
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  bool faulty = false;
  TensorMap test_values, ref_values;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node n;
    n.name = nodes[i].name;
    n.op_type = nodes[i].op;
    n.inputs = nodes[i].inputs;
    n.outputs = {nodes[i].name};
    g.nodes.push_back(n);
    std::vector<float> ref(static_cast<size_t>(numel)), test(static_cast<size_t>(numel));
    if (nodes[i].name == fault_node) faulty = true;
    for (int64_t k = 0; k < numel; ++k) {
      ref[static_cast<size_t>(k)] = static_cast<float>(std::sin(0.37 * static_cast<double>(k) + static_cast<double>(i)));
      // Multiples of 0.015 stay clear of the histogram's decade edges under any rounding.
      const float error = faulty && k % 3 == 0 ? 0.015f * static_cast<float>(k % 7 + 1) : 0.0f;
      test[static_cast<size_t>(k)] = ref[static_cast<size_t>(k)] + error;
    }
    if (nodes[i].name == nan_node) test[5] = std::nanf("");
    ref_values.set(n.name, Tensor::from_vector<float>(shape, ref));
    test_values.set(n.name, Tensor::from_vector<float>(shape, test));
  }
  g.outputs.push_back({nodes.back().name, DType::kFloat32, std::nullopt, {}});
  CompareConfig config;
  config.atol[""] = 1e-3;
  config.rtol[""] = 1e-3;
  Result<LayerwiseComparison> c = compare_layerwise_results(test_values, ref_values, g, config, DigestLimits{});
  if (c.ok()) s->comparison = std::move(*c);
  for (const LayerComparison& l : s->comparison.layers) {
    s->layer_precision.push_back(l.layer.op == "Conv" ? "fp16" : "fp32");
    s->layer_tactic.push_back(l.layer.op == "Conv" ? "conv_winograd" : "reference");
  }
  return s;
}

/// A small classifier with a residual branch and two heads; the fault starts at "branch_relu"
/// and "head_b" produces a NaN.
inline std::shared_ptr<session::LayerwiseSession> small_session() {
  return make_session({{"stem", "Conv", {"x"}},
                       {"bn", "BatchNormalization", {"stem"}},
                       {"relu", "Relu", {"bn"}},
                       {"branch_conv", "Conv", {"relu"}},
                       {"branch_relu", "Relu", {"branch_conv"}},
                       {"add", "Add", {"relu", "branch_relu"}},
                       {"pool", "MaxPool", {"add"}},
                       {"head_a", "Conv", {"pool"}},
                       {"head_b", "Conv", {"pool"}},
                       {"concat", "Concat", {"head_a", "head_b"}},
                       {"fc", "Gemm", {"concat"}},
                       {"softmax", "Softmax", {"fc"}}},
                      {1, 2, 4, 4}, "branch_relu", "head_b");
}

/// A chain of `count` nodes with a residual edge every 4 nodes and a side branch every 9, the
/// fault in the middle: the benchmark's 5,000-node graph.
inline std::shared_ptr<session::LayerwiseSession> large_session(size_t count) {
  std::vector<FixtureNode> nodes;
  for (size_t i = 0; i < count; ++i) {
    FixtureNode n{"node" + std::to_string(i), i % 4 == 3 ? "Add" : i % 2 ? "Relu" : "Conv", {}};
    n.inputs.push_back(i == 0 ? "x" : "node" + std::to_string(i - 1));
    if (i % 4 == 3 && i >= 3) n.inputs.push_back("node" + std::to_string(i - 3));
    if (i % 9 == 8 && i >= 6) n.inputs.push_back("node" + std::to_string(i - 6));
    nodes.push_back(std::move(n));
  }
  return make_session(nodes, {1, 4}, "node" + std::to_string(count / 2));
}

}  // namespace vn::views::testing
