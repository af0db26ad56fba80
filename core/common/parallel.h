// SPDX-License-Identifier: Apache-2.0
// Vernier's parallel loops. Each OS thread that starts one owns a team of worker threads, made
// on its first loop and kept for the next. A loop's indices are cut into one contiguous range per
// thread, as a static schedule would: on a quiet machine each thread runs its own range, and meets
// in its cache the part of the data it wrote in the loop before. A thread that is done with its
// range takes what is left of the others', one index at a time; the caller waits only for the
// workers that entered the loop before it ran out of indices. A worker with no loop spins up to
// a millisecond (much less once the OS has preempted it: the machine is loaded) and then sleeps.
// That matters on a loaded machine: a worker the OS holds back keeps only the indices it holds,
// and a sleeping one neither delays the loop nor takes the core the others need (OpenMP's
// spinning teams with fixed shares made a ResNet-50 run on 2 threads four times slower than on
// one while one other program ran on the machine; with these teams it is 1.06 times).
//
// A loop started inside another (on a worker, or on a caller within its own loop) runs on the
// thread that starts it alone. Two OS threads may run loops at the same time, each on its own
// team (the layer-wise comparison runs its two backends so, each capped to its share of cores).
#pragma once

#include <cstdint>
#include <type_traits>

namespace vn {

class LoopIndices;
namespace detail {
using LoopBody = void (*)(void* body, LoopIndices& indices);
/// Runs body on `threads` threads (the caller among them) until each returns.
void run_loop(int threads, int64_t n, LoopBody call, void* body);
}  // namespace detail

/// The indices [0, n) of one parallel loop, handed out to the threads that run it.
class LoopIndices {
 public:
  /// Sets `i` to the next index this thread runs; false when none is left for it.
  bool next(int64_t& i);
  /// This thread's number in the loop's team: 0 for the calling thread, then 1, 2, ...
  int thread() const { return thread_; }
  /// How many threads run the loop.
  int threads() const { return threads_; }

 private:
  friend class LoopTeam;
  friend void detail::run_loop(int, int64_t, detail::LoopBody, void*);
  struct Shared;
  LoopIndices(Shared& shared, int thread, int threads) : shared_(shared), thread_(thread), threads_(threads) {}
  Shared& shared_;
  int thread_;
  int threads_;
  int64_t claimed_ = 0, claimed_end_ = 0;  // the indices this thread claimed and has not run
  int visited_ = 0;                        // the ranges this thread has emptied (its own first)
};

/// Runs body(indices) once on each of up to `threads` threads (the calling thread and workers of
/// its team; `threads` is capped by the calling thread's cap, threads.h), where each claims
/// indices of [0, n) with indices.next(i) until none is left, and returns when all are done. Work
/// done once per thread (a scratch buffer) goes before the claims.
template <typename Body>
void parallel_loop(int threads, int64_t n, Body&& body) {
  auto call = [](void* b, LoopIndices& indices) { (*static_cast<std::remove_reference_t<Body>*>(b))(indices); };
  detail::run_loop(threads, n, call, &body);
}

/// fn(i) for every i in [0, n), on up to `threads` threads: each index on whichever thread claims it.
template <typename F>
void parallel_for(int threads, int64_t n, F&& fn) {
  parallel_loop(threads, n, [&fn](LoopIndices& indices) {
    for (int64_t i; indices.next(i);) fn(i);
  });
}

}  // namespace vn
