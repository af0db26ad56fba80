// SPDX-License-Identifier: Apache-2.0
// The full-screen browser over a layer-wise comparison (Graph, Layers, Tensor, Log, Help), for
// `vernier demo --browse`, `vernier run ... --tui` and `vernier browse REPORT.json`.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/session/layerwise_session.h"

namespace vn::cli {

/// True when stdin and stdout are both terminals that can show the full-screen UI: TERM is set
/// and not "dumb" (pipes and dumb terminals get plain reports and prompts).
bool on_terminal();

/// What the browser shows.
struct BrowseSource {
  /// A finished session; or, when null, `job` runs on a worker thread and produces one.
  std::shared_ptr<const session::LayerwiseSession> done;
  std::function<Result<session::LayerwiseSession>(session::JobContext&)> job;
  /// Compares the same model and inputs again under other tolerances (`:set atol|rtol X`), on a
  /// worker thread; empty when that is impossible, `no_rerun` then says why.
  std::function<Result<session::LayerwiseSession>(const CompareConfig&, session::JobContext&)> rerun;
  std::string no_rerun;
  /// The tolerances the session was compared with (`:set` changes one of them).
  CompareConfig config;
  /// The Log screen's first line: where the session comes from.
  std::string origin;
};

/// A source that builds the engine and compares `model` on `feeds` on the worker thread, and
/// compares again on the same prepared backends for `:set`.
BrowseSource live_source(Model model, TensorMap feeds, session::LayerwiseSessionOptions options);

/// Browses `source` full-screen until the user quits: `:set atol X` / `:set rtol X` compare again,
/// `:goto NODE` selects a node, `:export FILE` writes the layer table (TSV). The mouse and the
/// language follow ui_options(). Returns 0, or nullopt (with the reason in `error`) when the
/// terminal cannot run the UI (TERM=dumb, an unknown TERM): the caller then falls back to its plain
/// report. A signal that ended the UI is raised again once the terminal is restored.
std::optional<int> browse(BrowseSource source, std::string& error);

}  // namespace vn::cli
