// SPDX-License-Identifier: Apache-2.0
#include "core/session/job.h"
#include "core/session/answer.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace vn::session {
namespace {

TEST(Job, PublishesProgressLogAndResult) {
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();
  auto job = Job<int>::start([started](JobContext& ctx) -> Result<int> {
    ctx.log("first");
    ctx.progress(0.5, "half");
    started.wait();
    return 42;
  });
  // Progress is readable while the work still runs.
  while (job->progress()->label != "half") std::this_thread::yield();
  const auto during = job->progress();
  EXPECT_EQ(during->state, JobState::kRunning);
  EXPECT_DOUBLE_EQ(during->fraction, 0.5);
  EXPECT_EQ(during->log, std::vector<std::string>{"first"});
  EXPECT_EQ(job->result(), nullptr);
  go.set_value();
  job->wait();
  const auto after = job->progress();
  EXPECT_EQ(after->state, JobState::kSucceeded);
  EXPECT_DOUBLE_EQ(after->fraction, 1.0);
  ASSERT_NE(job->result(), nullptr);
  EXPECT_EQ(*job->result(), 42);
  // Snapshots are immutable: the one read during the run did not change.
  EXPECT_EQ(during->state, JobState::kRunning);
  EXPECT_GT(after->version, during->version);
}

TEST(Job, CancelStopsPollingWork) {
  auto job = Job<int>::start([](JobContext& ctx) -> Result<int> {
    while (!ctx.cancelled()) std::this_thread::yield();
    return Status(StatusCode::kCancelled, "stopped");
  });
  job->cancel();
  job->wait();
  EXPECT_EQ(job->progress()->state, JobState::kCancelled);
  EXPECT_EQ(job->result(), nullptr);
}

TEST(Job, FailureKeepsTheStatus) {
  auto job = Job<int>::start([](JobContext&) -> Result<int> { return Status(StatusCode::kIoError, "disk"); });
  job->wait();
  EXPECT_EQ(job->progress()->state, JobState::kFailed);
  EXPECT_EQ(job->progress()->status.message(), "disk");
}

TEST(Job, DestructorCancelsAndJoins) {
  std::atomic<bool> saw_cancel{false};
  {
    auto job = Job<int>::start([&](JobContext& ctx) -> Result<int> {
      while (!ctx.cancelled()) std::this_thread::yield();
      saw_cancel = true;
      return 0;
    });
  }
  EXPECT_TRUE(saw_cancel);
}

TEST(AnswerBox, HandsOneAnswerToTheWaitingWorker) {
  AnswerBox<int> box;
  auto job = Job<int>::start([&](JobContext& ctx) -> Result<int> {
    const std::optional<int> a = box.wait(*ctx.cancel_flag());
    if (!a) return Status(StatusCode::kCancelled, "no answer");
    return *a * 2;
  });
  box.post(21);
  job->wait();
  ASSERT_NE(job->result(), nullptr);
  EXPECT_EQ(*job->result(), 42);
}

TEST(AnswerBox, CancelEndsTheWait) {
  AnswerBox<int> box;
  auto job = Job<int>::start([&](JobContext& ctx) -> Result<int> {
    if (!box.wait(*ctx.cancel_flag())) return Status(StatusCode::kCancelled, "no answer");
    return 1;
  });
  job->cancel();
  job->wait();
  EXPECT_EQ(job->progress()->state, JobState::kCancelled);
}

}  // namespace
}  // namespace vn::session
