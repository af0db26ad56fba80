// SPDX-License-Identifier: Apache-2.0
// `debug precision`: how many, and which, engine layers must run in a higher precision for a
// check to pass. Polygraphy's search over K, the number of layers marked (the first K in network
// order, or the last K), with its gaps closed: K = 0 is tested, the layers are named, and the
// K layers found can be reduced to a minimal set.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/debug/check.h"
#include "core/engine/plan.h"
#include "core/engine/precision.h"
#include "core/eut/engine_under_test.h"

namespace vn::debug {

/// A layer left out of the search, and why.
struct ExcludedLayer {
  std::string layer;
  std::string reason;
};

/// A layer a precision can be set on.
struct PrecisionCandidate {
  /// The name `--layer-precisions` takes for it: its first member node (a fused layer's own
  /// name joins its members with " + ").
  std::string name;
  std::string layer;  ///< the plan's layer name
};

/// The layers of `plan` that a precision can be set on, in execution (network) order: every layer
/// whose outputs are all floating point. Layers with integer or boolean outputs (shape
/// arithmetic, indices) go to `excluded` with the reason, as Polygraphy leaves out layers with
/// non-float outputs; constants are folded at build time and are never layers.
std::vector<PrecisionCandidate> precision_candidates(const engine::Plan& plan, std::vector<ExcludedLayer>* excluded);

/// The layers of an engine under test without a Vernier plan (a runner's build, as
/// eut::Build::layers describes it) that a precision can be set on: those that run in another
/// precision than `higher`, in execution order. Layers already in `higher`, or whose precision the
/// engine does not tell, go to `excluded` with the reason: marking them changes nothing the
/// search could see.
std::vector<PrecisionCandidate> precision_candidates(const std::vector<eut::BuiltLayer>& layers,
                                                     engine::PrecisionId higher, std::vector<ExcludedLayer>* excluded);

enum class PrecisionMode { kBisect, kLinear };
enum class PrecisionDirection { kForward, kReverse };

/// One checked configuration.
struct PrecisionStep {
  std::string phase;                ///< "bisect", "linear" or "minimize"
  std::vector<std::string> marked;  ///< the layers forced to the higher precision
  CheckResult result;
};

/// What the search found.
struct PrecisionResult {
  /// Every check, in order.
  std::vector<PrecisionStep> steps;
  /// The smallest K that passed (0: the engine passes as built); nullopt when even all layers in
  /// the higher precision fail.
  std::optional<int64_t> k;
  /// The first (forward) or last (reverse) K layers, in network order.
  std::vector<std::string> prefix;
  /// `prefix` with every layer removed whose removal still passes (equal to `prefix` when not
  /// minimized), in network order.
  std::vector<std::string> layers;
};

/// How to search.
struct PrecisionSearchOptions {
  PrecisionMode mode = PrecisionMode::kBisect;
  PrecisionDirection direction = PrecisionDirection::kForward;
  /// Try removing each of the K layers found but the one at the boundary (K - 1 layers failed
  /// without it), keeping the removal when the check still passes: K - 1 more checks.
  bool minimize = true;
  /// Called after every check.
  std::function<void(const PrecisionStep& step)> on_step;
};

/// Checks one configuration: the named layers in the higher precision, the others as the build
/// chooses. Unresolved counts as not passing.
using PrecisionCheckFn = std::function<Result<CheckResult>(const std::vector<std::string>& marked)>;

/// Searches `candidates` (network order). Bisect: K = 0, then K = L, then halving between the
/// largest failing and smallest passing K (assumes that more layers in higher precision never
/// hurt); about log2(L) + 2 checks. Linear: K = 0, 1, 2, ... until one passes. Errors: `check`'s.
Result<PrecisionResult> search_precision(const std::vector<std::string>& candidates,
                                         const PrecisionSearchOptions& options, const PrecisionCheckFn& check);

}  // namespace vn::debug
