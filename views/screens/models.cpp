// SPDX-License-Identifier: Apache-2.0
#include "views/screens/models.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "core/compare/layerwise.h"
#include "core/compare/tensor_digest.h"
#include "core/compare/tensor_stats.h"

namespace vn::views {
namespace {

std::string shape_text(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::vector<std::string_view> split_fused(std::string_view name) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t plus = name.find(" + ");
    parts.push_back(name.substr(0, plus));
    if (plus == std::string_view::npos) break;
    name.remove_prefix(plus + 3);
  }
  return parts;
}

// Whether the layer's accumulated error was measured: one of its outputs compared, or a comparison
// that kept the layers' errors without the tensors' (a triage's).
bool has_accumulated_error(const LayerComparison& layer) {
  return layer.accumulated.empty() || std::any_of(layer.accumulated.begin(), layer.accumulated.end(), [](int t) { return t >= 0; });
}

}  // namespace

ErrorLevel error_level(double excess, bool nonfinite) {
  if (nonfinite) return ErrorLevel::kNonFinite;
  if (std::isnan(excess)) return ErrorLevel::kError;
  if (excess < 0) return ErrorLevel::kNone;
  if (excess <= 1) return ErrorLevel::kOk;
  if (excess <= 10) return ErrorLevel::kWarn;
  return ErrorLevel::kError;
}

tui::ColorRole error_role(ErrorLevel level) {
  switch (level) {
    case ErrorLevel::kNone:
      return tui::ColorRole::kDim;
    case ErrorLevel::kOk:
      return tui::ColorRole::kOk;
    case ErrorLevel::kWarn:
      return tui::ColorRole::kWarning;
    case ErrorLevel::kError:
    case ErrorLevel::kNonFinite:
      return tui::ColorRole::kError;
  }
  return tui::ColorRole::kDefault;
}

std::string_view error_symbol(ErrorLevel level, const tui::Glyphs& glyphs) {
  switch (level) {
    case ErrorLevel::kNone:
      return " ";
    case ErrorLevel::kOk:
      return glyphs.check;
    case ErrorLevel::kWarn:
      return "!";
    case ErrorLevel::kError:
      return glyphs.cross_mark;
    case ErrorLevel::kNonFinite:
      return "N";
  }
  return " ";
}

std::string format_value(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value < 0) return "-";
  return fmt::format("{:.2e}", value);
}

std::string format_ratio(double excess) {
  if (std::isnan(excess)) return "nan";
  if (std::isinf(excess)) return excess > 0 ? "inf" : "-inf";
  if (excess < 0) return "-";
  if (excess == 0) return "0";
  if (excess < 1e-3 || excess >= 1e4) return fmt::format("{:.1e}", excess);
  return fmt::format("{:.3g}", excess);
}

std::vector<std::string> graph_lanes(const std::vector<std::vector<int64_t>>& preds) {
  const size_t n = preds.size();
  std::vector<int64_t> remaining(n, 0);
  std::vector<std::vector<int64_t>> unique_preds(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> p = preds[i];
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    std::erase_if(p, [&](int64_t v) { return v < 0 || static_cast<size_t>(v) >= i; });
    for (int64_t v : p) ++remaining[static_cast<size_t>(v)];
    unique_preds[i] = std::move(p);
  }
  std::vector<int64_t> lanes;  // the node whose output runs down each lane; -1 when free
  std::vector<int64_t> lane_of(n, -1);
  std::vector<std::string> rows(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& p = unique_preds[i];
    std::vector<bool> closes(lanes.size(), false), read(lanes.size(), false);
    int col = -1;
    for (int64_t v : p) {
      const int64_t lane = lane_of[static_cast<size_t>(v)];
      if (lane < 0) continue;
      read[static_cast<size_t>(lane)] = true;
      if (--remaining[static_cast<size_t>(v)] == 0) {
        closes[static_cast<size_t>(lane)] = true;
        if (col < 0 || lane < col) col = static_cast<int>(lane);
      }
    }
    if (col < 0) {
      const auto free = std::find(lanes.begin(), lanes.end(), -1);
      col = static_cast<int>(free - lanes.begin());
      if (free == lanes.end()) {
        lanes.push_back(-1);
        closes.push_back(false);
        read.push_back(false);
      }
    }
    std::string cells(lanes.size() * 2, static_cast<char>(LaneCell::kEmpty));
    int lo = col, hi = col;
    for (size_t j = 0; j < lanes.size(); ++j) {
      const int jj = static_cast<int>(j);
      char c = static_cast<char>(lanes[j] >= 0 ? LaneCell::kPass : LaneCell::kEmpty);
      if (jj == col) {
        c = static_cast<char>(LaneCell::kNode);
      } else if (read[j]) {
        c = static_cast<char>(closes[j] ? (jj > col ? LaneCell::kMergeRight : LaneCell::kMergeLeft)
                                        : (jj > col ? LaneCell::kTapRight : LaneCell::kTapLeft));
        lo = std::min(lo, jj);
        hi = std::max(hi, jj);
      }
      cells[2 * j] = c;
    }
    for (int j = lo; j < hi; ++j) {
      cells[static_cast<size_t>(2 * j + 1)] = static_cast<char>(LaneCell::kHorizontal);
      if (j > lo && j != col && !read[static_cast<size_t>(j)]) {
        const char c = cells[static_cast<size_t>(2 * j)];
        cells[static_cast<size_t>(2 * j)] =
            static_cast<char>(c == static_cast<char>(LaneCell::kPass) ? LaneCell::kCross : LaneCell::kHorizontal);
      }
    }
    for (size_t j = 0; j < lanes.size(); ++j) {
      if (closes[j]) lanes[j] = -1;
    }
    if (remaining[i] > 0) {
      lanes[static_cast<size_t>(col)] = static_cast<int64_t>(i);
      lane_of[i] = col;
    }
    while (!lanes.empty() && lanes.back() < 0) lanes.pop_back();
    while (cells.size() >= 2 && cells[cells.size() - 2] == ' ' && cells.back() == ' ') cells.resize(cells.size() - 2);
    rows[i] = std::move(cells);
  }
  return rows;
}

std::vector<GraphRow> graph_rows(const Graph& graph, const session::LayerwiseSession* session) {
  const GraphIndex index(graph);
  const size_t n = graph.nodes.size();
  std::vector<std::vector<int64_t>> preds(n);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& input : graph.nodes[i].inputs) {
      if (!input.empty()) preds[i].push_back(index.producer(input));
    }
  }
  std::vector<std::string> lanes = graph_lanes(preds);
  std::unordered_map<std::string_view, size_t> node_by_name;
  for (size_t i = 0; i < n; ++i) node_by_name.emplace(graph.nodes[i].name, i);
  // Which engine layer each node ended up in (fused members included), for precision and error.
  std::vector<int64_t> layer_of(n, -1);
  if (session != nullptr) {
    const auto& layers = session->comparison.layers;
    for (size_t l = 0; l < layers.size(); ++l) {
      for (std::string_view member : split_fused(layers[l].layer.name)) {
        if (auto it = node_by_name.find(member); it != node_by_name.end()) layer_of[it->second] = static_cast<int64_t>(l);
      }
      const int64_t node = layers[l].layer.node;
      if (node >= 0 && static_cast<size_t>(node) < n) layer_of[static_cast<size_t>(node)] = static_cast<int64_t>(l);
    }
  }
  // Declared types by name, looked up once per node (Graph::find_value_info scans every list).
  std::unordered_map<std::string_view, const ValueInfo*> declared;
  for (const auto* list : {&graph.value_info, &graph.outputs}) {
    for (const ValueInfo& v : *list) declared.emplace(v.name, &v);
  }
  // The compared tensors by name: their digests know the shapes the model does not declare.
  std::unordered_map<std::string_view, const TensorComparison*> compared;
  if (session != nullptr) {
    for (const TensorComparison& t : session->comparison.tensors) compared.emplace(t.name, &t);
  }
  std::vector<GraphRow> rows(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    GraphRow& row = rows[i];
    row.lanes = std::move(lanes[i]);
    row.node = static_cast<int64_t>(i);
    row.op = node.op_type;
    row.name = node_label(graph, row.node);
    if (!node.outputs.empty()) {
      const auto found = declared.find(node.outputs.front());
      const ValueInfo* info = found != declared.end() ? found->second : nullptr;
      if (info != nullptr && info->has_static_shape()) {
        row.shape = shape_text(info->static_shape());
      } else if (const auto t = compared.find(node.outputs.front()); t != compared.end() && t->second->digest) {
        row.shape = shape_text(t->second->digest->shape);
      }
    }
    if (layer_of[i] >= 0) {
      const size_t l = static_cast<size_t>(layer_of[i]);
      const LayerComparison& layer = session->comparison.layers[l];
      const std::string prec = l < session->layer_precision.size() ? session->layer_precision[l] : "";
      const std::string tactic = l < session->layer_tactic.size() ? session->layer_tactic[l] : "";
      row.precision = tactic.empty() ? prec : prec + " / " + tactic;
      const bool compared = has_accumulated_error(layer);
      row.excess = compared ? layer.accumulated_excess : -1;
      row.level = error_level(row.excess, layer.nonfinite);
      row.rank = layer.rank;
    }
  }
  return rows;
}

std::vector<LayerRow> layer_rows(const session::LayerwiseSession& session) {
  const LayerwiseComparison& c = session.comparison;
  std::vector<LayerRow> rows;
  rows.reserve(c.layers.size());
  for (size_t l = 0; l < c.layers.size(); ++l) {
    const LayerComparison& layer = c.layers[l];
    LayerRow row;
    row.layer = l;
    row.node = layer.layer.node;
    row.name = layer.layer.name;
    row.op = layer.layer.op;
    row.precision = l < session.layer_precision.size() ? session.layer_precision[l] : "";
    row.local = layer.local_excess;
    row.rank = layer.rank;
    bool compared = false;
    for (int t : layer.accumulated) {
      if (t < 0 || static_cast<size_t>(t) >= c.tensors.size()) continue;
      const TensorComparison& tc = c.tensors[static_cast<size_t>(t)];
      if (!compared) {
        row.tensor = t;
        row.abs_max = tc.abs_max;
      }
      compared = true;
      row.min_atol = std::max(row.min_atol, tc.min_atol);
      row.min_rtol = std::max(row.min_rtol, tc.min_rtol);
      row.nan += std::max<int64_t>(0, tc.nan_test - tc.nan_ref);
      row.inf += std::max<int64_t>(0, tc.inf_test - tc.inf_ref);
    }
    row.accumulated = compared || has_accumulated_error(layer) ? layer.accumulated_excess : -1;
    row.level = error_level(row.accumulated, layer.nonfinite);
    rows.push_back(std::move(row));
  }
  return rows;
}

TensorDetail tensor_detail(const TensorComparison& c, size_t heatmap) {
  TensorDetail d;
  d.name = c.name;
  d.passed = c.passed;
  d.level = error_level(tolerance_excess(c), c.nan_test + c.inf_test > c.nan_ref + c.inf_ref);
  auto add = [&](std::string label, std::string value) { d.stats.emplace_back(std::move(label), std::move(value)); };
  add("result", c.passed ? "PASSED" : "FAILED");
  add("err/tol", format_ratio(tolerance_excess(c)));
  if (!c.mismatch.empty()) add("mismatch", c.mismatch);
  add("elements", std::to_string(c.count));
  add("atol", format_value(c.tolerance.atol));
  add("rtol", format_value(c.tolerance.rtol));
  add("max abs", format_value(c.abs_max));
  add("mean abs", format_value(c.abs_mean));
  add("median abs", format_value(c.abs_median));
  add("max rel", format_value(c.rel_max));
  add("mean rel", format_value(c.rel_mean));
  add("min atol", format_value(c.min_atol));
  add("min rtol", format_value(c.min_rtol));
  add("failing", std::to_string(c.mismatch_count));
  add("cosine", fmt::format("{:.6f}", c.cosine));
  add("SNR dB", std::isinf(c.snr_db) ? std::string("inf") : fmt::format("{:.1f}", c.snr_db));
  add("NaN t/r", fmt::format("{} / {}", c.nan_test, c.nan_ref));
  add("Inf t/r", fmt::format("{} / {}", c.inf_test, c.inf_ref));
  for (int b = 0; b < static_cast<int>(c.abs_error_histogram.size()); ++b) {
    if (c.abs_error_histogram[static_cast<size_t>(b)] > 0) {
      d.histogram.emplace_back(error_histogram_bin_label(b), c.abs_error_histogram[static_cast<size_t>(b)]);
    }
  }
  if (!c.digest) return d;
  const TensorDigest& g = *c.digest;
  d.has_digest = true;
  d.shape = shape_text(g.shape);
  d.slice_count = g.slice_count;
  d.slice_max.assign(g.slice_max.begin(), g.slice_max.end());
  for (const TensorDigest::Element& e : g.worst) {
    d.worst.push_back({fmt::format("[{}]", fmt::join(unravel_index(e.index, g.shape), ", ")), e.ref, e.test, e.abs_error});
  }
  d.heatmap_count = g.heatmaps.size();
  if (g.heatmaps.empty()) return d;
  d.heatmap = std::min(heatmap, g.heatmaps.size() - 1);
  const TensorDigest::Heatmap& h = g.heatmaps[d.heatmap];
  d.slice_rows = h.rows;
  d.slice_cols = h.cols;
  d.block_rows = h.block_rows;
  d.block_cols = h.block_cols;
  d.slice.assign(h.values.begin(), h.values.end());
  // The slice's leading indices, "[0, 3, :, :]".
  const size_t lead = g.shape.size() >= 2 ? g.shape.size() - 2 : 0;
  const Shape leading(g.shape.begin(), g.shape.begin() + static_cast<std::ptrdiff_t>(lead));
  std::string label = "[";
  for (int64_t v : unravel_index(h.slice, leading)) label += std::to_string(v) + ", ";
  label += g.shape.size() >= 2 ? ":, :]" : g.shape.size() == 1 ? ":]" : "]";
  d.slice_index = std::move(label);
  return d;
}

ReduceStep reduce_step(const debug::ReduceIteration& it) {
  ReduceStep step;
  step.iteration = it.iteration;
  step.phase = it.phase;
  step.nodes = static_cast<int64_t>(it.candidate.nodes.size());
  step.verdict = it.result.verdict == debug::Verdict::kBad    ? "bad"
                 : it.result.verdict == debug::Verdict::kGood ? "good"
                                                              : "skip";
  step.reason = it.result.reason;
  return step;
}

}  // namespace vn::views
