// SPDX-License-Identifier: Apache-2.0
// A cap on the threads parallel work may use, set per OS thread. Backends are prepared with a
// thread count (--threads); a caller that runs two of them side by side (the layer-wise
// comparison) gives each its share of the cores by capping the OS thread it runs on, and every
// parallel region started from that thread uses min(prepared count, cap).
#pragma once

#include <cstdint>

namespace vn {

/// The cores this process may run on (its CPU affinity); at least 1.
int available_cores();

/// The threads that work started on the calling OS thread uses when its caller names no count
/// (the comparison's statistics): available_cores() until set_default_threads; a backend sets it
/// to its --threads when it runs.
int default_threads();
void set_default_threads(int threads);

/// The cap of the calling OS thread; 0 when there is none.
int thread_cap();

/// `wanted` threads limited by the calling thread's cap; at least 1.
int capped_threads(int wanted);

/// `wanted` threads (capped) reduced so that each has at least `grain` units of `work`; at least
/// 1. Parallel regions size their team with it: a region of a few microseconds of work started on
/// every core of a large machine costs more than it saves.
int threads_for_work(int wanted, int64_t work, int64_t grain);

/// Sets the calling thread's cap for its lifetime and restores the previous one after.
class ThreadCapScope {
 public:
  /// `cap` <= 0 removes the cap for the scope.
  explicit ThreadCapScope(int cap);
  ~ThreadCapScope();
  ThreadCapScope(const ThreadCapScope&) = delete;
  ThreadCapScope& operator=(const ThreadCapScope&) = delete;

 private:
  int previous_;
};

}  // namespace vn
