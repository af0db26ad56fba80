// SPDX-License-Identifier: Apache-2.0
// How many checks the delta-debugging stage of a ddmin reduction (Reducer::reduce, stage 3) can
// still make, whatever the verdicts: the bound a reduction's progress reports as "at most".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace vn::debug {

/// The most checks the delta-debugging stage makes from a level of `granularity` chunks over a
/// candidate of `size` nodes, found by following its control flow with each check going either
/// way: every chunk of a level failing to shrink the candidate (the granularity doubles, up to the
/// size, where the stage ends), or one shrinking it by a node or more (the granularity drops by
/// one, to 2 at least). Tabulated for sizes up to a limit; larger ones have no bound.
class DdminBound {
 public:
  /// Sizes this table bounds: min(`max_size`, kLimit).
  explicit DdminBound(int64_t max_size);

  /// Beyond it the table (quadratic in the size) is not made.
  static constexpr int64_t kLimit = 1024;

  /// The bound for a level of `granularity` (clamped to 2..size) at `size` nodes, counting the
  /// level's own checks; 0 below two nodes; nullopt for a size beyond the table.
  std::optional<int64_t> checks(int64_t size, int64_t granularity) const;
  /// `before` checks plus the bound from a level of `granularity` over `size` nodes; -1 (no
  /// bound) beyond the table.
  int64_t after(int64_t before, int64_t size, int64_t granularity = 2) const {
    const std::optional<int64_t> later = checks(size, granularity);
    return later ? before + *later : -1;
  }

 private:
  int64_t limit_ = 0;
  // Row s holds, for g = 2..s, the bound from a level of g chunks (index g - 2).
  std::vector<std::vector<int32_t>> level_;
};

}  // namespace vn::debug
