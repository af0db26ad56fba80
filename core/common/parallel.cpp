// SPDX-License-Identifier: Apache-2.0
#include "core/common/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/common/threads.h"

namespace vn {

/// A loop's indices, cut into one contiguous range per thread.
struct LoopIndices::Shared {
  struct alignas(64) Range {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  /// Shares [0, count) among `threads`, thread t taking [t count / threads, (t + 1) count / threads).
  void reset(int64_t count, int threads) {
    if (threads > capacity) {
      heap = std::make_unique<Range[]>(static_cast<size_t>(threads));
      ranges = heap.get();
      capacity = threads;
    }
    // A thread claims its own range a block at a time (about an eighth of it) and the others'
    // one index at a time.
    step = std::max<int64_t>(count / threads / 8, 1);
    for (int t = 0; t < threads; ++t) {
      ranges[static_cast<size_t>(t)].next.store(count * t / threads, std::memory_order_relaxed);
      ranges[static_cast<size_t>(t)].end = count * (t + 1) / threads;
    }
  }

  Range one;  // a loop on one thread needs no allocation
  std::unique_ptr<Range[]> heap;
  Range* ranges = &one;
  int capacity = 1;
  int64_t step = 1;
};

bool LoopIndices::next(int64_t& i) {
  // The thread's own range first, as a static schedule would share the loop: on a quiet machine
  // each thread meets the part of the data it wrote in the loop before, in its own cache. Then
  // whatever is left of the others' ranges (a thread the OS holds back, or one that never came).
  while (claimed_ == claimed_end_) {
    if (visited_ == threads_) return false;
    LoopIndices::Shared::Range& r = shared_.ranges[static_cast<size_t>((thread_ + visited_) % threads_)];
    const int64_t step = visited_ == 0 ? shared_.step : 1;
    if (r.next.load(std::memory_order_relaxed) < r.end) {
      const int64_t first = r.next.fetch_add(step, std::memory_order_relaxed);
      if (first < r.end) {
        claimed_ = first;
        claimed_end_ = std::min(first + step, r.end);
        continue;
      }
    }
    ++visited_;
  }
  i = claimed_++;
  return true;
}

namespace {

// How long an idle worker, or a caller waiting for its workers, spins before it sleeps. Layers
// follow each other within microseconds, and a worker that spins through the gap starts the next
// loop at once, where one that slept costs a wake-up (tens of microseconds, more in a virtual
// machine): on the 2-core machine, 2 threads, MobileNetV3 took 7.7 ms with 50 us spins and 7.1-7.3
// with 300 us or 1 ms. But a spinning thread takes a core that another program on a loaded
// machine wants, and from this program's working threads: beside one busy program, 1 ms spins
// made it 18 ms (1 thread: 11). So a spinner that finds it was preempted (kPreempted between two
// looks at the clock) sleeps at once, and spins only kLoadedSpin for kLoadedFor after (13.7 ms).
constexpr std::chrono::microseconds kSpin{1000};
constexpr std::chrono::microseconds kPreempted{50};
constexpr std::chrono::microseconds kLoadedSpin{50};
constexpr std::chrono::milliseconds kLoadedFor{1000};

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// Waits until `a` differs from `old`, spinning for kSpin and then sleeping; returns the new value.
template <typename T>
T wait_for_change(const std::atomic<T>& a, T old) {
  // A thread preempted while spinning spins briefly for a while after: the machine is loaded.
  thread_local std::chrono::steady_clock::time_point loaded_until;
  auto last = std::chrono::steady_clock::now();
  const auto until = last + (last < loaded_until ? kLoadedSpin : kSpin);
  for (int i = 1;; ++i) {
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
    relax();
    if (i % 32 == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last > kPreempted) {
        loaded_until = now + kLoadedFor;
        break;
      }
      if (now > until) break;
      last = now;
    }
  }
  for (;;) {
    a.wait(old, std::memory_order_acquire);
    const T v = a.load(std::memory_order_acquire);
    if (v != old) return v;
  }
}

thread_local bool tls_in_loop = false;

}  // namespace

/// The workers of one OS thread that starts parallel loops.
///
/// A loop is numbered; its workers are woken with its number on their ticket. A worker takes part
/// only if it enters the loop before the caller closes it, which the caller does once it finds no
/// index left: the caller then waits for the workers that entered, not for one the OS has not run
/// yet.
class LoopTeam {
 public:
  ~LoopTeam() {
    stop_.store(true, std::memory_order_release);
    for (auto& w : workers_) {
      w->ticket.fetch_add(1, std::memory_order_release);
      w->ticket.notify_one();
    }
    for (auto& w : workers_) w->thread.join();
  }

  void run(int threads, int64_t n, detail::LoopBody call, void* body) {
    while (static_cast<int>(workers_.size()) < threads - 1) {
      auto w = std::make_unique<Worker>();
      Worker* raw = w.get();
      const int id = static_cast<int>(workers_.size()) + 1;
      w->thread = std::thread([this, raw, id] { work(*raw, id); });
      workers_.push_back(std::move(w));
    }
    shared_.reset(n, threads);
    call_ = call;
    body_ = body;
    threads_ = threads;
    const uint32_t loop = ++loops_;
    state_.store(uint64_t{loop} << 32, std::memory_order_release);
    for (int t = 1; t < threads; ++t) {
      Worker& w = *workers_[static_cast<size_t>(t - 1)];
      w.ticket.store(loop, std::memory_order_release);
      w.ticket.notify_one();
    }
    tls_in_loop = true;
    LoopIndices mine(shared_, 0, threads);
    call_(body_, mine);
    tls_in_loop = false;
    uint64_t s = state_.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
    while ((s & kActive) != 0) s = wait_for_change(state_, s);
  }

 private:
  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  static constexpr uint64_t kActive = kClosed - 1;

  struct Worker {
    alignas(64) std::atomic<uint32_t> ticket{0};
    std::thread thread;
  };

  /// Enters loop `loop` unless it is over or closed.
  bool enter(uint32_t loop) {
    uint64_t s = state_.load(std::memory_order_acquire);
    while ((s >> 32) == loop && (s & kClosed) == 0) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    }
    return false;
  }

  void work(Worker& me, int id) {
    // A loop started by a worker's body runs on the worker alone.
    tls_in_loop = true;
    for (uint32_t seen = 0;;) {
      seen = wait_for_change(me.ticket, seen);
      if (stop_.load(std::memory_order_acquire)) return;
      if (!enter(seen)) continue;
      LoopIndices mine(shared_, id, threads_);
      call_(body_, mine);
      state_.fetch_sub(1, std::memory_order_acq_rel);
      state_.notify_one();
    }
  }

  std::vector<std::unique_ptr<Worker>> workers_;
  LoopIndices::Shared shared_;
  detail::LoopBody call_ = nullptr;
  void* body_ = nullptr;
  int threads_ = 1;
  uint32_t loops_ = 0;
  alignas(64) std::atomic<uint64_t> state_{0};  // loop number << 32 | kClosed | workers inside
  std::atomic<bool> stop_{false};
};

namespace detail {

void run_loop(int threads, int64_t n, LoopBody call, void* body) {
  if (n <= 0) return;
  threads = static_cast<int>(std::min<int64_t>(capped_threads(threads), n));
  if (threads <= 1 || tls_in_loop) {
    LoopIndices::Shared shared;
    shared.reset(n, 1);
    LoopIndices all(shared, 0, 1);
    call(body, all);
    return;
  }
  thread_local std::unique_ptr<LoopTeam> team;
  if (!team) team = std::make_unique<LoopTeam>();
  team->run(threads, n, call, body);
}

}  // namespace detail
}  // namespace vn
