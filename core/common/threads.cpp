// SPDX-License-Identifier: Apache-2.0
#include "core/common/threads.h"

#include <algorithm>

namespace vn {
namespace {

thread_local int tls_cap = 0;

}  // namespace

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
