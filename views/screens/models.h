// SPDX-License-Identifier: Apache-2.0
// View models of the screens: plain structs the views draw, built by pure functions from core
// results (DESIGN.md §8; style-anchors §3.12 "model/presenter split"). Nothing here draws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/debug/reduce.h"
#include "core/session/layerwise_session.h"
#include "tui/style.h"

namespace vn::views {

/// How bad a layer's or tensor's error is, from its tolerance excess (the factor by which the
/// tolerance would have to grow): within tolerance, up to 10x over, more, or NaN/Inf produced.
enum class ErrorLevel : uint8_t { kNone, kOk, kWarn, kError, kNonFinite };

/// kNone for a negative excess (not measured), kNonFinite when `nonfinite`, kOk up to 1, kWarn
/// up to 10, kError above (and for an infinite excess).
ErrorLevel error_level(double excess, bool nonfinite);
/// The colour role of a level (kDim, kOk, kWarning, kError, kError).
tui::ColorRole error_role(ErrorLevel level);
/// The symbol of a level, so that the level reads without colour, the same on every screen:
/// " ", check, "!", cross, "N".
std::string_view error_symbol(ErrorLevel level, const tui::Glyphs& glyphs);
/// "1.5e-03"-style compact number; "-" for a negative value, "inf", "nan".
std::string format_value(double value);
/// A tolerance excess (error / tolerance) as people read factors: "0", "0.35", "105", "1.2e+04";
/// "-" when not measured (negative), "inf", "nan".
std::string format_ratio(double excess);

/// Cells of the lane part of a graph row, two columns per lane: the lane itself, then the
/// connector to its right. Mapped to glyphs when drawn.
enum class LaneCell : char {
  kEmpty = ' ',
  kPass = '|',        ///< an edge passing by this row
  kNode = 'o',        ///< this row's node
  kHorizontal = '-',  ///< a connector between the node and a lane that joins it
  kCross = '+',       ///< a passing edge crossed by a connector
  kMergeRight = 'J',  ///< a lane right of the node that ends here (╯)
  kMergeLeft = 'L',   ///< a lane left of the node that ends here (╰)
  kTapRight = 'U',    ///< a lane right of the node read here that goes on (┤)
  kTapLeft = 'T',     ///< a lane left of the node read here that goes on (├)
};

/// One row of the Graph screen: one node.
struct GraphRow {
  std::string lanes;  ///< LaneCell values, two per lane
  int64_t node = -1;
  std::string op;
  std::string name;
  std::string shape;      ///< of the first output, "(1, 8, 32, 32)"; "" when unknown
  std::string precision;  ///< "fp16 / conv_winograd"; "" when the node is in no engine layer
  ErrorLevel level = ErrorLevel::kNone;
  double excess = -1;  ///< of the layer reporting this node's output; -1 when not compared
  int rank = 0;
};

/// Lane layout of a DAG in topological order, one row per node like `git log --graph`: each
/// node sits in a lane of one of its producers (or a new one), edges to later readers run down
/// their lane. `preds[i]` are the earlier nodes node i reads. Returns the lane cells of every row.
/// Linear in nodes × lanes in use.
std::vector<std::string> graph_lanes(const std::vector<std::vector<int64_t>>& preds);

/// The rows of the Graph screen for `graph` (topological order); with `session`, each node's
/// precision, tactic and error come from the layer reporting it.
std::vector<GraphRow> graph_rows(const Graph& graph, const session::LayerwiseSession* session);

/// One row of the Layers screen.
struct LayerRow {
  size_t layer = 0;  ///< index into LayerwiseComparison::layers
  int64_t node = -1;
  std::string name;
  std::string op;
  std::string precision;
  double accumulated = -1;  ///< tolerance excess of its outputs' accumulated errors
  double local = -1;        ///< of its local error; -1 when not measured
  double abs_max = -1;      ///< of the first compared output
  double min_atol = -1;     ///< smallest atol that passes (worst output); -1 when not compared
  double min_rtol = -1;
  int64_t nan = 0;  ///< NaN + Inf in the test's outputs where the reference has none
  int64_t inf = 0;
  int rank = 0;
  ErrorLevel level = ErrorLevel::kNone;
  int tensor = -1;  ///< index into LayerwiseComparison::tensors of its first compared output
};

/// One row per layer of the comparison, in execution order.
std::vector<LayerRow> layer_rows(const session::LayerwiseSession& session);

/// One element of the worst-elements list.
struct WorstElement {
  std::string index;  ///< "[0, 3, 7, 1]"
  double ref = 0;
  double test = 0;
  double abs_error = 0;
};

/// The Tensor detail screen of one compared tensor. Labels are English; the screen translates them.
struct TensorDetail {
  std::string name;
  std::string shape;
  bool passed = false;
  ErrorLevel level = ErrorLevel::kNone;
  std::vector<std::pair<std::string, std::string>> stats;  ///< label, value
  std::vector<std::pair<std::string, int64_t>> histogram;  ///< bin label, count (non-empty bins)
  bool has_digest = false;  ///< false: the comparison kept nothing of the tensors
  /// |test - ref| of the chosen kept slice (the last two dims), row-major, each cell the maximum
  /// of a block of block_rows x block_cols elements.
  int slice_rows = 0;
  int slice_cols = 0;
  int64_t block_rows = 1;
  int64_t block_cols = 1;
  std::vector<double> slice;
  std::string slice_index;  ///< "[0, 3, :, :]"
  size_t heatmap = 0;       ///< which kept map is shown
  size_t heatmap_count = 0; ///< maps kept
  int64_t slice_count = 0;  ///< 2-D slices in the tensor
  std::vector<double> slice_max;    ///< the largest error of every slice (when kept)
  std::vector<WorstElement> worst;  ///< largest absolute errors first
};

/// The detail of `comparison`; with its digest, the kept map number `heatmap` (clamped) and the
/// worst elements.
TensorDetail tensor_detail(const TensorComparison& comparison, size_t heatmap);

/// One check of the Reduce screen's history.
struct ReduceStep {
  int64_t iteration = 0;
  std::string phase;
  int64_t nodes = 0;
  std::string verdict;  ///< "bad", "good", "skip"
  std::string reason;
};

/// The Reduce screen.
struct ReduceModel {
  int64_t total_nodes = 0;
  std::vector<int64_t> candidate;  ///< node indices of the current candidate (ascending)
  std::vector<std::string> candidate_labels;  ///< "conv2 (Conv)" per candidate node
  std::vector<ReduceStep> history;
  std::string phase;
  int64_t checks_done = 0;
  int64_t checks_left = 0;
  int64_t nodes_kept = 0;
  bool asking = false;  ///< the good/bad question about `candidate` is open
  bool checking = false;  ///< the check of `candidate` runs now (a triage's reduction)
  /// Where the external check reads the candidate; empty for the built-in check.
  std::string candidate_file;
  std::string status;   ///< "reducing", "done: 1 node", "quit"
};

/// A history row from a reducer iteration.
ReduceStep reduce_step(const debug::ReduceIteration& iteration);

}  // namespace vn::views
