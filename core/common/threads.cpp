// SPDX-License-Identifier: Apache-2.0
#include "core/common/threads.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace vn {
namespace {

thread_local int tls_cap = 0;
thread_local int tls_default = 0;

}  // namespace

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(CPU_COUNT(&set), 1);
  return std::max(static_cast<int>(std::thread::hardware_concurrency()), 1);
}

int default_threads() { return tls_default > 0 ? tls_default : available_cores(); }

void set_default_threads(int threads) { tls_default = std::max(threads, 0); }

int thread_cap() { return tls_cap; }

int capped_threads(int wanted) {
  const int n = tls_cap > 0 ? std::min(wanted, tls_cap) : wanted;
  return std::max(n, 1);
}

int threads_for_work(int wanted, int64_t work, int64_t grain) {
  const int64_t useful = work / std::max<int64_t>(grain, 1);
  return static_cast<int>(std::clamp<int64_t>(useful, 1, capped_threads(wanted)));
}

ThreadCapScope::ThreadCapScope(int cap) : previous_(tls_cap) { tls_cap = std::max(cap, 0); }

ThreadCapScope::~ThreadCapScope() { tls_cap = previous_; }

}  // namespace vn
