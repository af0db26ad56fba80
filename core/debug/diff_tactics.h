// SPDX-License-Identifier: Apache-2.0
// `inspect diff-tactics`: which tactic choices separate bad engine builds from good ones, from the
// tactic replays `debug build` sorted into good/ and bad/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace vn::debug {

/// One layer's choice in a replay: Polygraphy's Algorithm identity and a readable name.
struct TacticChoice {
  /// "(Implementation: i, Tactic: t) | Inputs: (TensorInfo(...),) | Outputs: (...)", the string
  /// Polygraphy prints; two choices are the same when these are (all four Algorithm fields).
  std::string algorithm;
  /// "gemm__split_k4 (fp32)" from Vernier's own fields; the algorithm string for replays written
  /// elsewhere (TensorRT tactics have no names).
  std::string label;
};

/// A tactic replay as diff-tactics sees it: layer name -> choice.
using ReplayChoices = std::map<std::string, TacticChoice>;

/// The tactic replays found under `path`: the file itself, or every regular file below the folder
/// (recursively, in path order) that parses as a TacticReplayData (current or legacy Polygraphy
/// type tag). Files that are not tactic replays are skipped, as Polygraphy skips them; `skipped`
/// (when given) receives their paths. Errors: kNotFound when `path` does not exist.
Result<std::vector<ReplayChoices>> load_tactic_replays(const std::filesystem::path& path,
                                                       std::vector<std::filesystem::path>* skipped = nullptr);

/// How strongly one choice of one layer separates bad builds from good ones.
struct TacticSuspect {
  std::string layer;
  TacticChoice choice;
  int64_t bad = 0;   ///< bad builds that made this choice
  int64_t good = 0;  ///< good builds that made it
  /// bad / bad builds - good / good builds, in [-1, 1]: 1 when every bad build and no good build
  /// made the choice. A side with no builds counts as frequency 0.
  double score = 0;
  /// One-sided Fisher exact test: the probability of at least `bad` of the builds making this
  /// choice falling among the bad ones if the choice had nothing to do with failing (given the
  /// builds' totals). Small means unlikely to be chance.
  double p_value = 1;
  /// Never seen in a good build: Polygraphy's own criterion.
  bool only_in_bad() const { return good == 0; }
};

/// The suspects of one layer, best first.
struct LayerSuspects {
  std::string layer;
  std::vector<TacticSuspect> suspects;
};

/// The result of diff_tactics.
struct TacticDiff {
  int64_t good_replays = 0;
  int64_t bad_replays = 0;
  /// Layers with at least one choice of positive score, ordered by their best suspect (score,
  /// then p-value, then layer name); within a layer by score, then p-value.
  std::vector<LayerSuspects> layers;
};

/// Scores every choice made in a bad build by frequency in bad builds minus frequency in good
/// builds, and keeps those with a positive score. Layers missing from a replay count as not making
/// any choice there.
TacticDiff diff_tactics(const std::vector<ReplayChoices>& good, const std::vector<ReplayChoices>& bad);

/// P(X >= k) for X hypergeometric: `n` draws without replacement from `total` items of which
/// `marked` are marked. Exposed for tests.
double hypergeometric_upper_tail(int64_t k, int64_t n, int64_t marked, int64_t total);

}  // namespace vn::debug
