// SPDX-License-Identifier: Apache-2.0
// Local errors of an engine that cannot run its layers alone (a runner): one run of an
// isolated-layers model (surgeon/isolate.h), every node fed with the reference's values of its
// inputs, gives each node's output computed by the engine from exact inputs.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/common/status.h"
#include "core/compare/layerwise.h"
#include "core/eut/engine_under_test.h"
#include "core/ir/tensor_map.h"

namespace vn::eut {

struct IsolatedLocalErrors {
  /// The engine's build flags for the isolated models (a runner that does not lower precision gets
  /// them converted as any model: each layer rounds its exact inputs as it would its producers').
  engine::BuildOptions build;
  CompareConfig compare;
  int threads = 0;
  /// The most bytes of feeds and outputs one isolated model holds; larger models run in several,
  /// the reference running again for each (memory bounded, time not).
  uint64_t chunk_bytes = uint64_t{512} << 20;
  const std::atomic<bool>* cancel = nullptr;
};

/// Fills LayerComparison::local of every layer of `result` (a layer-wise comparison of `model` on
/// `feeds` against an engine without layers alone, whose layers are the graph's nodes: see
/// compare_layerwise's graph_layers) and ranks the culprits again. Layers whose node the engine
/// cannot run isolated keep no local error, with the reason in local_skipped. Errors: the
/// reference's, an isolated model that cannot be written, kCancelled; an engine that refuses an
/// isolated model leaves those layers skipped with its reason.
Status add_isolated_local_errors(LayerwiseComparison& result, const Model& model, const TensorMap& feeds,
                                 EngineUnderTest& engine, const IsolatedLocalErrors& options);

}  // namespace vn::eut
