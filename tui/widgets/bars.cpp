// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/bars.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vn::tui {
namespace {

// Bars narrower than this are unreadable, so the value text and then the label give way first.
constexpr int kMinBarWidth = 4;

double scaled(double value, bool log_scale) { return log_scale ? std::log10(1.0 + std::max(0.0, value)) : value; }

}  // namespace

std::string short_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", value);
}

void BarChart::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  canvas.fill(area);
  const Glyphs& g = canvas.glyphs();
  int label_width = 0;
  int value_width = 0;
  double max = max_;
  for (const Bar& bar : bars_) {
    label_width = std::max(label_width, display_width(bar.label));
    value_width = std::max(value_width, display_width(bar.value_text));
    if (max_ <= 0 && std::isfinite(bar.value)) max = std::max(max, bar.value);
  }
  label_width = std::min(label_width, area.w / 3);
  value_width = std::min(value_width, area.w / 4);
  const auto bar_width_for = [&] {
    return area.w - (label_width > 0 ? label_width + 1 : 0) - (value_width > 0 ? value_width + 1 : 0);
  };
  if (bar_width_for() < kMinBarWidth) value_width = 0;
  if (bar_width_for() < kMinBarWidth) label_width = 0;
  const int bar_width = std::max(0, bar_width_for());
  const double full_scale = max > 0 ? scaled(max, log_scale_) : 1.0;

  const size_t rows = std::min(bars_.size(), static_cast<size_t>(area.h));
  for (size_t i = 0; i < rows; ++i) {
    const Bar& bar = bars_[i];
    const int y = area.y + static_cast<int>(i);
    int x = area.x;
    if (label_width > 0) {
      canvas.put_text(area, x, y, fit_to_width(bar.label, label_width, Align::kLeft, g.ellipsis));
      x += label_width + 1;
    }
    if (std::isnan(bar.value)) {
      canvas.put_text(area, x, y, g.missing, ColorRole::kError);
    } else if (bar_width > 0) {
      const double t = std::clamp(scaled(bar.value, log_scale_) / full_scale, 0.0, 1.0);
      const auto eighths = static_cast<int>(std::lround(t * bar_width * 8));
      std::string text;
      for (int k = 0; k < eighths / 8; ++k) text += g.bar_full;
      if (eighths % 8 != 0) text += g.bar_eighths[static_cast<size_t>(eighths % 8)];
      canvas.put_text(Rect{x, y, bar_width, 1}.intersect(area), x, y, text, bar.role);
    }
    if (value_width > 0) {
      canvas.put_text(area, area.x + area.w - value_width, y,
                      fit_to_width(bar.value_text, value_width, Align::kRight, g.ellipsis));
    }
  }
}

void Sparkline::draw(Canvas& canvas, Rect area, ColorRole role) const {
  if (area.empty()) return;
  const Rect row = area.rows(0, 1);
  canvas.fill(row);
  const Glyphs& g = canvas.glyphs();
  const size_t shown = std::min(values_.size(), static_cast<size_t>(area.w));
  const size_t first = values_.size() - shown;
  double lo = INFINITY;
  double hi = -INFINITY;
  for (size_t i = first; i < values_.size(); ++i) {
    if (!std::isfinite(values_[i])) continue;
    lo = std::min(lo, values_[i]);
    hi = std::max(hi, values_[i]);
  }
  const int last_level = static_cast<int>(g.spark.size()) - 1;
  for (size_t i = 0; i < shown; ++i) {
    const double v = values_[first + i];
    const int x = area.x + static_cast<int>(i);
    if (!std::isfinite(v)) {
      canvas.put_text(row, x, row.y, g.missing, ColorRole::kError);
      continue;
    }
    const int level = hi > lo ? static_cast<int>(std::lround((v - lo) / (hi - lo) * last_level)) : last_level / 2;
    canvas.put_text(row, x, row.y, g.spark[static_cast<size_t>(level)], role);
  }
}

Histogram Histogram::from_values(std::span<const double> values, int bin_count) {
  Histogram h;
  double lo = INFINITY;
  double hi = -INFINITY;
  uint64_t nan_count = 0;
  uint64_t inf_count = 0;
  for (double v : values) {
    if (std::isnan(v)) {
      ++nan_count;
    } else if (std::isinf(v)) {
      ++inf_count;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  h.set_non_finite(nan_count, inf_count);
  if (lo > hi) return h;
  const int bins = lo == hi ? 1 : std::max(1, bin_count);
  std::vector<double> edges;
  for (int i = 0; i <= bins; ++i) edges.push_back(i == bins ? hi : lo + (hi - lo) * i / bins);
  std::vector<uint64_t> counts(static_cast<size_t>(bins), 0);
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const auto bin = hi > lo ? static_cast<int>((v - lo) / (hi - lo) * bins) : 0;
    ++counts[static_cast<size_t>(std::clamp(bin, 0, bins - 1))];
  }
  h.set_bins(std::move(edges), std::move(counts));
  return h;
}

void Histogram::set_bins(std::vector<double> edges, std::vector<uint64_t> counts) {
  const bool valid = edges.size() == counts.size() + 1 && std::is_sorted(edges.begin(), edges.end());
  edges_ = valid ? std::move(edges) : std::vector<double>{};
  counts_ = valid ? std::move(counts) : std::vector<uint64_t>{};
}

void Histogram::set_non_finite(uint64_t nan_count, uint64_t inf_count) {
  nan_count_ = nan_count;
  inf_count_ = inf_count;
}

void Histogram::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  const int extra_rows = (nan_count_ > 0 ? 1 : 0) + (inf_count_ > 0 ? 1 : 0);
  const int bin_rows = std::max(1, area.h - extra_rows);
  const size_t n = counts_.size();
  const size_t merge = n == 0 ? 1 : (n + static_cast<size_t>(bin_rows) - 1) / static_cast<size_t>(bin_rows);
  std::vector<Bar> bars;
  for (size_t first = 0; first < n; first += merge) {
    const size_t last = std::min(n, first + merge);
    uint64_t count = 0;
    for (size_t i = first; i < last; ++i) count += counts_[i];
    bars.push_back({short_number(edges_[first]) + ".." + short_number(edges_[last]), static_cast<double>(count),
                    std::to_string(count), ColorRole::kAccent});
  }
  if (nan_count_ > 0) {
    bars.push_back({"NaN", static_cast<double>(nan_count_), std::to_string(nan_count_), ColorRole::kError});
  }
  if (inf_count_ > 0) {
    bars.push_back({"inf", static_cast<double>(inf_count_), std::to_string(inf_count_), ColorRole::kWarning});
  }
  BarChart chart;
  chart.set_bars(std::move(bars));
  chart.set_log_scale(log_scale_);
  chart.draw(canvas, area);
}

}  // namespace vn::tui
