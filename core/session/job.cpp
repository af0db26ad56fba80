// SPDX-License-Identifier: Apache-2.0
#include "core/session/job.h"

#include <algorithm>
#include <cmath>

namespace vn::session {

std::string_view job_state_name(JobState state) {
  switch (state) {
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

void JobContext::publish(const std::function<void(JobProgress&)>& change) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Copy-on-write: readers keep the snapshot they hold, unchanged, for as long as they like. The
  // copy includes the log, which is why jobs log stages, not elements.
  auto next = std::make_shared<JobProgress>(*current_);
  change(*next);
  ++next->version;
  current_ = std::move(next);
}

void JobContext::progress(double fraction, std::string label) {
  const double clamped = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.0;
  publish([&](JobProgress& p) {
    p.fraction = clamped;
    p.label = std::move(label);
  });
}

void JobContext::log(std::string line) {
  publish([&](JobProgress& p) { p.log.push_back(std::move(line)); });
}

void JobContext::finish(JobState state, Status status) {
  publish([&](JobProgress& p) {
    p.state = state;
    p.status = std::move(status);
    if (state == JobState::kSucceeded) p.fraction = 1;
  });
}

std::shared_ptr<const JobProgress> JobContext::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

}  // namespace vn::session
