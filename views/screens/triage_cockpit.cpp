// SPDX-License-Identifier: Apache-2.0
#include "views/screens/triage_cockpit.h"

#include "tui/i18n.h"
#include "views/screens/graph_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/tensor_view.h"

namespace vn::views {
namespace {

// The candidate's nodes and their labels on the Reduce screen.
void show_candidate(ReduceModel& m, const std::vector<int64_t>& nodes, const std::vector<std::string>& labels) {
  m.candidate = nodes;
  m.candidate_labels.clear();
  for (int64_t v : nodes) {
    if (v >= 0 && static_cast<size_t>(v) < labels.size()) m.candidate_labels.push_back(labels[static_cast<size_t>(v)]);
  }
}

// The node of `graph` named `name`; a fused layer ("conv2 + relu2") by its first node.
std::optional<int64_t> node_named(const Graph& graph, std::string name) {
  if (const size_t plus = name.find(" + "); plus != std::string::npos) name.resize(plus);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (node_label(graph, static_cast<int64_t>(i)) == name) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

}  // namespace

TriageCockpit::TriageCockpit() = default;

std::string triage_absent_screen(std::string_view id) {
  if (id == "reduce") return std::string(tui::tr("The Reduce screen appears when the triage reduces the model"));
  if (id == "tactics")
    return std::string(tui::tr("The Tactics screen appears when some engine builds pass and some fail"));
  return {};
}

flow::TriageWatch TriageCockpit::watch() {
  flow::TriageWatch w;
  std::shared_ptr<Shared> shared = shared_;
  w.model = [shared](const Model& model) {
    auto s = std::make_shared<session::LayerwiseSession>();
    s->model = model;
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->session = std::move(s);
    shared->compared = false;
    ++shared->session_version;
  };
  w.layerwise = [shared](std::shared_ptr<const session::LayerwiseSession> s, const std::string& why_none) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (s != nullptr) {
      shared->session = std::move(s);
      shared->compared = true;
    } else {
      shared->why_none = why_none;
    }
    ++shared->session_version;
  };
  w.extract = [shared](const flow::ExtractWatch& e) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (!e.nodes.empty()) shared->select = e.nodes.front();
    ++shared->session_version;
  };
  w.reduce_start = [shared](const flow::ReduceStartWatch& start) {
    ReduceModel m;
    m.total_nodes = start.total_nodes;
    m.nodes_kept = start.total_nodes;
    m.status = "reducing";
    m.candidate_file = start.candidate_file.string();
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->reduce = std::move(m);
    shared->reduce_labels = start.labels;
    ++shared->reduce_version;
  };
  w.reduce_check = [shared](const debug::ReduceCandidate& candidate) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (!shared->reduce) return;
    show_candidate(*shared->reduce, candidate.nodes, shared->reduce_labels);
    shared->reduce->checking = true;
    ++shared->reduce_version;
  };
  w.reduce_iteration = [shared](const debug::ReduceIteration& it, const debug::ReduceProgress& p) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (!shared->reduce) return;
    ReduceModel& m = *shared->reduce;
    m.history.push_back(reduce_step(it));
    m.phase = p.phase;
    m.checks_done = p.checks_done;
    m.checks_left = p.checks_left;
    m.nodes_kept = p.nodes_kept;
    m.checking = false;
    // A replayed iteration was announced by no check.
    if (it.replayed) show_candidate(m, it.candidate.nodes, shared->reduce_labels);
    ++shared->reduce_version;
  };
  w.reduce_end = [shared](const std::optional<debug::ReduceCandidate>& minimal) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    if (!shared->reduce) return;
    ReduceModel& m = *shared->reduce;
    m.status = minimal ? "done" : "no failing candidate";
    m.checking = false;
    if (minimal) show_candidate(m, minimal->nodes, shared->reduce_labels);
    ++shared->reduce_version;
  };
  w.progress = [shared](const flow::ProbeProgress& p) {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->progress = p;
    ++shared->progress_version;
  };
  return w;
}

void TriageCockpit::add_screens(tui::App& app) {
  app.add_view(std::make_unique<GraphView>(feed_));
  app.add_view(std::make_unique<LayersView>(feed_));
  app.add_view(std::make_unique<TensorView>(feed_));
}

void TriageCockpit::pump(tui::App& app) {
  std::shared_ptr<const session::LayerwiseSession> session;
  std::string select;
  bool add_reduce = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (session_seen_ != shared_->session_version) {
      session_seen_ = shared_->session_version;
      if (shared_->session != feed_->result()) session = shared_->session;
      compared_ = shared_->compared;
      why_none_ = shared_->why_none;
      select = std::move(shared_->select);
      shared_->select.clear();
    }
    if (progress_seen_ != shared_->progress_version) {
      progress_seen_ = shared_->progress_version;
      progress_ = shared_->progress;
    }
    add_reduce = reduce_ == nullptr && shared_->reduce.has_value();
  }
  if (session != nullptr) feed_->publish(std::move(session));
  update_note();
  if (const auto shown = feed_->result(); shown != nullptr && !select.empty() && feed_->selected_node() < 0) {
    if (const std::optional<int64_t> node = node_named(shown->model.graph, select)) feed_->select(*node);
  }
  if (add_reduce) {
    auto view = std::make_unique<ReduceView>(ReduceView::AnswerFn{}, [shared = shared_, seen = uint64_t{0}]() mutable {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (seen == shared->reduce_version || !shared->reduce) return std::optional<ReduceModel>();
      seen = shared->reduce_version;
      return shared->reduce;
    });
    reduce_ = view.get();
    app.add_view(std::move(view));
  }
}

void TriageCockpit::update_note() {
  std::string note;
  if (compared_) {
    note.clear();
  } else if (!why_none_.empty()) {
    note = tui::trf("No errors: the layer-wise step compared nothing ({})", why_none_);
  } else if (progress_ && progress_->unit == flow::ProgressUnit::kLayer) {
    note = tui::trf("No errors yet: the layer-wise step runs ({})", progress_counts(*progress_));
  } else {
    note = tui::tr("No errors yet: the layer-wise step has not run");
  }
  feed_->set_note(std::move(note));
}

std::optional<flow::ProbeProgress> TriageCockpit::take_progress() {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (progress_taken_ == shared_->progress_version) return std::nullopt;
  progress_taken_ = shared_->progress_version;
  return shared_->progress;
}

std::string TriageCockpit::open(const EvidenceLink& link) {
  const auto shown = feed_->result();
  if (shown == nullptr) return {};
  const std::optional<int64_t> node = node_named(shown->model.graph, link.name);
  if (!node) return {};
  feed_->select(*node);
  return link.kind == EvidenceLink::Kind::kLayer ? "layers" : "graph";
}

}  // namespace vn::views
