// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace vn::session {

/// One answer handed from the UI thread to a worker that waits for it (the interactive good/bad
/// of a reduction running on a job's thread).
template <class A>
class AnswerBox {
 public:
  /// Worker side: blocks until post() delivers an answer, or returns nullopt once `cancel` is set
  /// (checked every `poll`, so a cancelled job never hangs on a question nobody answers).
  std::optional<A> wait(const std::atomic<bool>& cancel,
                        std::chrono::milliseconds poll = std::chrono::milliseconds(100)) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!answer_) {
      if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
      ready_.wait_for(lock, poll);
    }
    std::optional<A> answer = std::move(answer_);
    answer_.reset();
    return answer;
  }
  /// UI side: delivers `answer` (replacing one not yet taken).
  void post(A answer) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      answer_ = std::move(answer);
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::optional<A> answer_;
};

}  // namespace vn::session
