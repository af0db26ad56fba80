// SPDX-License-Identifier: Apache-2.0
// One fused layer of a model, built to run a kernel of the engine alone (the int8 tests).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/engine/folding.h"
#include "core/engine/fusion.h"
#include "core/engine/layer.h"
#include "core/ops/op_registry.h"

namespace vn::engine::test {

inline const std::string kHeader = "<ir_version: 8, opset_import: [\"\" : 13]>\n";

/// A model that fuses into one layer, with everything a kernel needs to run it alone.
struct OneLayer {
  Model model;
  FoldedGraph folded;
  LayerGraph graph;

  explicit OneLayer(Model m) : model(std::move(m)) {
    Result<FoldedGraph> f = fold_constants(model, ops::reference_registry());
    EXPECT_TRUE(f.ok()) << f.status().to_string();
    folded = std::move(*f);
    std::vector<std::string> outputs;
    for (const ValueInfo& o : model.graph.outputs) outputs.push_back(o.name);
    Result<LayerGraph> g = fuse_layers(model, folded, outputs);
    EXPECT_TRUE(g.ok()) << g.status().to_string();
    graph = std::move(*g);
    EXPECT_EQ(graph.layers.size(), 1u);
  }

  /// The layer's kernel arguments for an int8 build with `scales`.
  KernelArgs args(TacticId tactic, const ScaleTable& scales) const {
    KernelArgs a;
    a.model = &model;
    a.spec = &graph.layers[0];
    a.constants = &folded.constants;
    a.registry = &ops::reference_registry();
    a.tactic = tactic;
    a.precision = PrecisionId::kInt8;
    a.scales = &scales;
    return a;
  }
};

/// Runs a kernel alone (no requantization of its output) on one input.
inline Tensor run_kernel(const LayerKernel& kernel, const Tensor& x) {
  const Tensor* in[] = {&x};
  std::vector<Tensor> out(1);
  const Status st = kernel.run(in, out);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out[0];
}

}  // namespace vn::engine::test
