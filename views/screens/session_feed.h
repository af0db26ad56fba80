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
  /// A feed showing a running job.
  explicit SessionFeed(std::unique_ptr<LayerwiseJob> job) : job_(std::move(job)) { ++generation_; }
  /// A feed showing a finished session (tests, loaded results).
  explicit SessionFeed(std::shared_ptr<const session::LayerwiseSession> done) : done_(std::move(done)) {
    ++generation_;
  }

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
  uint64_t generation_ = 0;
  int64_t selected_node_ = -1;
  uint64_t selection_version_ = 0;
};

}  // namespace vn::views
