// SPDX-License-Identifier: Apache-2.0
// The full-screen browser over a layer-wise comparison session (Graph, Layers, Log, Help).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"
#include "core/session/layerwise_session.h"

namespace vn::cli {

/// True when stdin and stdout are both terminals that can show the full-screen UI: TERM is set
/// and not "dumb" (pipes and dumb terminals get plain reports and prompts).
bool on_terminal();

/// Starts the comparison of `model` on `feeds` on a worker thread and browses it full-screen
/// until the user quits. `:set atol X` / `:set rtol X` compare the kept tensors again with the
/// new tolerance, `:goto NODE` selects a node, `:export FILE` writes the layer table.
/// Returns the exit code, or nullopt (with the reason in `error`) when the terminal cannot run the
/// UI (TERM=dumb, an unknown TERM): the caller then falls back to its plain report.
std::optional<int> browse_layerwise(Model model, TensorMap feeds, session::LayerwiseSessionOptions options,
                                    std::string& error);

}  // namespace vn::cli
