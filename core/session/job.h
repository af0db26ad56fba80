// SPDX-License-Identifier: Apache-2.0
// Background jobs of a session: long work (a layer-wise comparison, a reduction) runs on a worker
// thread and publishes immutable snapshots of its progress that the UI thread reads without
// waiting. The UI never calls into the job's work; the work never touches the UI.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/common/status.h"

namespace vn::session {

/// Where a job stands.
enum class JobState { kRunning, kSucceeded, kFailed, kCancelled };

/// "running", "done", "failed", "cancelled".
std::string_view job_state_name(JobState state);

/// What a job has published so far. Immutable once published: readers share it.
struct JobProgress {
  JobState state = JobState::kRunning;
  double fraction = 0;            ///< 0..1, as far as the work can tell
  std::string label;              ///< what it is doing now
  std::vector<std::string> log;   ///< lines logged so far, oldest first
  Status status;                  ///< the error of a failed or cancelled job
  uint64_t version = 0;           ///< grows with every publication, so readers can tell news
};

/// What the work function of a job may do: report progress, log, and poll for cancellation.
/// Thread-safe; the work calls it from the worker thread.
class JobContext {
 public:
  /// True once cancel() was asked for; long work polls it and returns kCancelled.
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }
  /// The flag itself, for core APIs that poll one (LayerwiseOptions::cancel, RunOptions::cancel).
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }
  /// Publishes the fraction done (clamped to 0..1) and what is being done.
  void progress(double fraction, std::string label);
  /// Publishes one more log line.
  void log(std::string line);

 private:
  template <class T>
  friend class Job;
  void finish(JobState state, Status status);
  std::shared_ptr<const JobProgress> snapshot() const;
  void publish(const std::function<void(JobProgress&)>& change);

  std::atomic<bool> cancel_{false};
  mutable std::mutex mutex_;
  std::shared_ptr<const JobProgress> current_ = std::make_shared<JobProgress>();
};

/// One piece of long work on its own thread, producing a T. Created running; the destructor
/// cancels it and joins the thread, so a job never outlives its owner.
///
///   auto job = Job<Report>::start([&](JobContext& ctx) -> Result<Report> { ... });
///   job->progress()    // on the UI thread, every poll: a snapshot, never blocks on the work
///   job->result()      // non-null once the job succeeded
template <class T>
class Job {
 public:
  using Work = std::function<Result<T>(JobContext& context)>;

  /// Starts `work` on a new thread.
  static std::unique_ptr<Job> start(Work work) {
    auto job = std::unique_ptr<Job>(new Job());
    Job* self = job.get();
    self->thread_ = std::thread([self, work = std::move(work)] {
      Result<T> result = work(self->context_);
      if (result.ok()) {
        {
          std::lock_guard<std::mutex> lock(self->result_mutex_);
          self->result_ = std::make_shared<const T>(std::move(*result));
        }
        self->context_.finish(JobState::kSucceeded, Status::OK());
      } else {
        const bool cancelled = result.status().code() == StatusCode::kCancelled || self->context_.cancelled();
        self->context_.finish(cancelled ? JobState::kCancelled : JobState::kFailed, result.status());
      }
    });
    return job;
  }

  ~Job() {
    cancel();
    if (thread_.joinable()) thread_.join();
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// The latest published progress; the state says whether the job ended.
  std::shared_ptr<const JobProgress> progress() const { return context_.snapshot(); }
  /// The job's product once it succeeded; null before and after failure or cancellation.
  std::shared_ptr<const T> result() const {
    std::lock_guard<std::mutex> lock(result_mutex_);
    return result_;
  }
  /// Asks the work to stop; it ends in kCancelled at its next poll (or finishes first).
  void cancel() { context_.cancel_.store(true, std::memory_order_relaxed); }
  /// Blocks until the work returned (tests and plain-terminal callers only; the UI polls).
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  Job() = default;
  JobContext context_;
  mutable std::mutex result_mutex_;
  std::shared_ptr<const T> result_;
  std::thread thread_;
};

}  // namespace vn::session
