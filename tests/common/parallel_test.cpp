// SPDX-License-Identifier: Apache-2.0
#include "core/common/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/common/threads.h"

namespace vn {
namespace {

/// How many times each index of [0, n) ran.
struct Runs {
  explicit Runs(int64_t n) : count(static_cast<size_t>(n)) {}
  std::vector<std::atomic<int>> count;
};

TEST(Parallel, EveryIndexRunsExactlyOnceOnAnyThreadCount) {
  for (int threads : {1, 2, 3, 8, 17}) {
    for (int64_t n : {0, 1, 2, 5, 16, 1000}) {
      Runs runs(n);
      std::set<int> ids;
      std::mutex mu;
      parallel_loop(threads, n, [&](LoopIndices& indices) {
        EXPECT_LE(indices.threads(), std::min<int64_t>(threads, n));
        for (int64_t i; indices.next(i);) {
          runs.count[static_cast<size_t>(i)]++;
          std::lock_guard<std::mutex> lock(mu);
          ids.insert(indices.thread());
        }
      });
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(runs.count[static_cast<size_t>(i)], 1) << threads << " " << n << " " << i;
      for (int id : ids) EXPECT_LT(id, threads);
    }
  }
}

TEST(Parallel, ALoopInsideALoopRunsOnTheThreadThatStartsIt) {
  std::atomic<int> inner_runs{0}, wrong{0};
  parallel_for(4, 8, [&](int64_t) {
    const std::thread::id me = std::this_thread::get_id();
    parallel_loop(4, 10, [&](LoopIndices& indices) {
      if (indices.thread() != 0 || indices.threads() != 1 || std::this_thread::get_id() != me) wrong++;
      for (int64_t i; indices.next(i);) inner_runs++;
    });
  });
  EXPECT_EQ(inner_runs, 80);
  EXPECT_EQ(wrong, 0);
}

TEST(Parallel, TheCallingThreadsCapLimitsItsLoops) {
  ThreadCapScope one(1);
  std::set<std::thread::id> seen;
  parallel_for(8, 100, [&](int64_t) { seen.insert(std::this_thread::get_id()); });
  EXPECT_EQ(seen, (std::set<std::thread::id>{std::this_thread::get_id()}));
}

TEST(Parallel, TwoCallersRunTheirLoopsAtTheSameTime) {
  // Each OS thread has a team of its own: loops started side by side both complete, correctly.
  std::vector<std::atomic<int64_t>> sums(2);
  const auto caller = [&](int which) {
    for (int round = 0; round < 200; ++round) {
      parallel_for(3, 64, [&](int64_t i) { sums[static_cast<size_t>(which)] += i; });
    }
  };
  std::thread a(caller, 0), b(caller, 1);
  a.join();
  b.join();
  EXPECT_EQ(sums[0], 200 * 64 * 63 / 2);
  EXPECT_EQ(sums[1], 200 * 64 * 63 / 2);
}

TEST(Parallel, AThreadHeldBackHoldsOnlyTheBlockItClaimed) {
  // A worker that stalls on its first index (as one the OS deschedules on a loaded machine) holds
  // the block of its range it claimed (an eighth of the range: 12 of its 100), no more: the
  // calling thread runs its own 100 and then the rest of the worker's range, rather than waiting
  // for the worker's whole share to come back.
  std::atomic<int> by_caller{0}, by_worker{0};
  std::atomic<bool> stalled{false};
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(2, 200, [&](int64_t) {
    if (std::this_thread::get_id() == caller) {
      // The caller goes on once the worker holds its first block (at most 10 s on a loaded
      // machine), so that the worker has come whatever the OS did.
      for (int i = 0; i < 10000 && !stalled; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      by_caller++;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return;
    }
    by_worker++;
    if (!stalled.exchange(true)) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  // The worker stalled on the first index of the block it took; in the half second it slept, the
  // caller ran all but that block (about 190 ms at 1 ms each).
  EXPECT_TRUE(stalled);
  EXPECT_EQ(by_caller + by_worker, 200);
  EXPECT_EQ(by_worker, 12);
}

TEST(Parallel, OnAQuietMachineEachThreadRunsItsOwnContiguousRange) {
  // Like a static schedule: thread t's indices are [t n / T, (t + 1) n / T) when no thread lags,
  // so consecutive loops over the same data find it in the cache of the thread that wrote it.
  // Each thread waits at its first index until all four have come (at most 10 s on a loaded
  // machine), so that none lags by more than an index.
  const int64_t n = 40;
  std::vector<int> thread(static_cast<size_t>(n), -1);
  std::atomic<int> came{0};
  parallel_loop(4, n, [&](LoopIndices& indices) {
    bool first = true;
    for (int64_t i; indices.next(i);) {
      if (first) {
        first = false;
        came++;
        for (int t = 0; t < 10000 && came < indices.threads(); ++t) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      thread[static_cast<size_t>(i)] = indices.thread();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(thread[static_cast<size_t>(i)], i * 4 / n) << i;
}

TEST(Parallel, TheCoresAreThoseOfTheProcessAffinity) {
  EXPECT_GE(available_cores(), 1);
  EXPECT_LE(available_cores(), static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u)));
  const int before = default_threads();
  EXPECT_EQ(before, available_cores());
  set_default_threads(3);
  EXPECT_EQ(default_threads(), 3);
  int other = 0;
  std::thread([&] { other = default_threads(); }).join();
  EXPECT_EQ(other, available_cores());  // per OS thread
  set_default_threads(0);
  EXPECT_EQ(default_threads(), available_cores());
}

}  // namespace
}  // namespace vn
