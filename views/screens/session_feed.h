// SPDX-License-Identifier: Apache-2.0
// What the session's screens share: the layer-wise job they show (its progress while it runs, its
// result once done) and the selected node, so that moving in one screen moves the others.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/session/job.h"
#include "core/session/layerwise_session.h"

namespace vn::views {

using LayerwiseJob = session::Job<session::LayerwiseSession>;

/// Shared by the Graph, Layers and Log screens of one session. UI thread only; the job inside
/// runs on its own thread and is read through snapshots.
class SessionFeed {
 public:
  /// A feed with nothing to show until publish() (the triage's: its walk publishes the model,
  /// then the layer-wise comparison).
  SessionFeed() = default;
  /// A feed showing a running job.
  explicit SessionFeed(std::unique_ptr<LayerwiseJob> job) : job_(std::move(job)) { ++generation_; }
  /// A feed showing a finished session (tests, loaded results).
  explicit SessionFeed(std::shared_ptr<const session::LayerwiseSession> done) : done_(std::move(done)) {
    ++generation_;
  }

  /// Shows `session` from now on, in place of any job or earlier session: the screens rebuild.
  /// A session without a comparison (the model alone) shows its graph, and `note` says why
  /// there are no errors yet.
  void publish(std::shared_ptr<const session::LayerwiseSession> session, std::string note = {}) {
    job_.reset();
    done_ = std::move(session);
    note_ = std::move(note);
    ++generation_;
    ++note_version_;
  }
  /// What the screens say in place of the errors the session does not have yet.
  const std::string& note() const { return note_; }
  /// Changes the note alone (the layer-wise step's progress); the screens redraw, not rebuild.
  void set_note(std::string note) {
    if (note == note_) return;
    note_ = std::move(note);
    ++note_version_;
  }
  /// Grows with every change of the note.
  uint64_t note_version() const { return note_version_; }

  /// Replaces the job (a re-run with other settings); the old one is cancelled and joined.
  void restart(std::unique_ptr<LayerwiseJob> job) {
    job_ = std::move(job);
    done_.reset();
    ++generation_;
  }
  /// Grows with every restart(): screens rebuild when it changes.
  uint64_t generation() const { return generation_; }
  /// The job's progress; null for a feed made from a finished session.
  std::shared_ptr<const session::JobProgress> progress() const { return job_ ? job_->progress() : nullptr; }
  /// The session once available.
  std::shared_ptr<const session::LayerwiseSession> result() const { return job_ ? job_->result() : done_; }
  /// True while a job runs.
  bool running() const {
    const auto p = progress();
    return p != nullptr && p->state == session::JobState::kRunning;
  }
  /// Asks the running job to stop.
  void cancel() {
    if (job_) job_->cancel();
  }

  /// The selected node (-1: none) and a counter that grows with every select().
  int64_t selected_node() const { return selected_node_; }
  uint64_t selection_version() const { return selection_version_; }
  /// Selects `node` for every screen.
  void select(int64_t node) {
    selected_node_ = node;
    ++selection_version_;
  }
  /// The screen that opened the Tensor screen last (Esc goes back there).
  std::string opened_from = "layers";

 private:
  std::unique_ptr<LayerwiseJob> job_;
  std::shared_ptr<const session::LayerwiseSession> done_;
  std::string note_;
  uint64_t note_version_ = 0;
  uint64_t generation_ = 0;
  int64_t selected_node_ = -1;
  uint64_t selection_version_ = 0;
};

}  // namespace vn::views
