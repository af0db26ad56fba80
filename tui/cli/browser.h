// SPDX-License-Identifier: Apache-2.0
// The full-screen browser over a layer-wise comparison session (Graph, Layers, Log, Help).
#pragma once

#include <memory>

#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"
#include "core/session/layerwise_session.h"

namespace vn::cli {

/// True when stdin and stdout are both terminals (the UI needs one; pipes get plain reports).
bool on_terminal();

/// Starts the comparison of `model` on `feeds` on a worker thread and browses it full-screen
/// until the user quits. `:set atol X` / `:set rtol X` compare the kept tensors again with the
/// new tolerance, `:goto NODE` selects a node, `:export FILE` writes the layer table.
/// Returns the exit code (kExitBadInput when the terminal cannot be opened).
int browse_layerwise(Model model, TensorMap feeds, session::LayerwiseSessionOptions options);

}  // namespace vn::cli
