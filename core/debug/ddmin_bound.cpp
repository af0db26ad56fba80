// SPDX-License-Identifier: Apache-2.0
#include "core/debug/ddmin_bound.h"

#include <algorithm>

namespace vn::debug {

DdminBound::DdminBound(int64_t max_size) : limit_(std::min(max_size, kLimit)) {
  if (limit_ < 2) return;
  level_.resize(static_cast<size_t>(limit_) + 1);
  // best[g - 2] for the sizes done so far: the largest bound over every smaller size s' of a level
  // of min(g, s') chunks (what a shrinking check can lead to); 0 for one node.
  std::vector<int32_t> best(static_cast<size_t>(limit_), 0);
  for (int64_t s = 2; s <= limit_; ++s) {
    std::vector<int32_t>& row = level_[static_cast<size_t>(s)];
    row.assign(static_cast<size_t>(s - 1), 0);
    for (int64_t g = s; g >= 2; --g) {
      // Every chunk checked and none shrinks the candidate: the next level, or the end at g = s.
      const int64_t none = g + (g >= s ? 0 : row[static_cast<size_t>(std::min(2 * g, s) - 2)]);
      // One shrinks it (after at most g checks) to any smaller size, one chunk fewer.
      const int64_t shrunk = g + best[static_cast<size_t>(std::max<int64_t>(g - 1, 2) - 2)];
      row[static_cast<size_t>(g - 2)] = static_cast<int32_t>(std::max(none, shrunk));
    }
    // Levels finer than this size's are clamped to it.
    for (int64_t g = 2; g <= limit_; ++g) {
      const int32_t here = row[static_cast<size_t>(std::min(g, s) - 2)];
      best[static_cast<size_t>(g - 2)] = std::max(best[static_cast<size_t>(g - 2)], here);
    }
  }
}

std::optional<int64_t> DdminBound::checks(int64_t size, int64_t granularity) const {
  if (size < 2) return 0;
  if (size > limit_) return std::nullopt;
  const int64_t g = std::clamp<int64_t>(granularity, 2, size);
  return level_[static_cast<size_t>(size)][static_cast<size_t>(g - 2)];
}

}  // namespace vn::debug
