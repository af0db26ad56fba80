// SPDX-License-Identifier: Apache-2.0
// The triage's live screens besides the Flowchart: Graph, Layers and Tensor over the walk's model
// from the start and its layer-wise comparison once the step published it, and Reduce from the
// moment a reduction starts, each check and iteration as it comes. The walk's watch
// (flow::TriageWatch) hands copies to the cockpit under its lock from the walk's threads; the UI
// thread moves them into the screens (pump), so the screens never wait on the walk.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/flow/watch.h"
#include "tui/app.h"
#include "views/screens/flowchart_view.h"
#include "views/screens/models.h"
#include "views/screens/session_feed.h"

namespace vn::views {

class ReduceView;

/// What `:view ID` says in the triage of a screen that is not there yet (Reduce, Tactics); "" for
/// the others.
std::string triage_absent_screen(std::string_view id);

class TriageCockpit {
 public:
  TriageCockpit();

  /// The watch for TriageConfig::watch. Its hooks hold the cockpit's shared state, not the
  /// cockpit: they may outlive it.
  flow::TriageWatch watch();

  // UI thread only from here on.

  /// The feed of the Graph, Layers and Tensor screens.
  const std::shared_ptr<SessionFeed>& feed() const { return feed_; }
  /// Adds the Graph, Layers and Tensor screens to `app` (as its next tabs).
  void add_screens(tui::App& app);
  /// Moves what the walk published into the screens: the model, the comparison, the note the
  /// screens show until it arrives (the layer-wise step's progress while it runs); the Reduce
  /// screen, added to `app` as its last tab when the reduction starts. Once per turn of the loop.
  void pump(tui::App& app);
  /// Newer progress of the running probe, for the Flowchart screen (FlowchartView::ProgressFn).
  std::optional<flow::ProbeProgress> take_progress();
  /// Opens what an evidence line cites (FlowchartView::OpenFn): selects the layer's or the node's
  /// row for every screen; returns "layers" or "graph", "" when the model has no such node.
  std::string open(const EvidenceLink& link);
  /// The Reduce screen once the reduction started, else null.
  ReduceView* reduce_view() const { return reduce_; }

 private:
  // What the walk published and the UI has not taken yet.
  struct Shared {
    std::mutex mutex;
    std::shared_ptr<const session::LayerwiseSession> session;
    bool compared = false;  // `session` holds the layer-wise comparison
    std::string why_none;   // the layer-wise step compared nothing, and why
    uint64_t session_version = 0;
    std::string select;  // a node to select when the user has selected none (the extracted one)
    std::optional<flow::ProbeProgress> progress;
    uint64_t progress_version = 0;
    std::optional<ReduceModel> reduce;
    std::vector<std::string> reduce_labels;
    uint64_t reduce_version = 0;
  };

  void update_note();

  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::shared_ptr<SessionFeed> feed_ = std::make_shared<SessionFeed>();
  ReduceView* reduce_ = nullptr;
  uint64_t session_seen_ = 0;
  uint64_t progress_seen_ = 0;
  uint64_t progress_taken_ = 0;
  uint64_t reduce_seen_ = 0;
  bool compared_ = false;
  std::string why_none_;
  std::optional<flow::ProbeProgress> progress_;
};

}  // namespace vn::views
