// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tui/canvas.h"

namespace vn::tui {

/// One horizontal bar: a label, a value (drawn to scale) and the text printed after the bar.
struct Bar {
  std::string label;
  double value = 0;
  /// Shown right of the bar; empty prints nothing.
  std::string value_text;
  ColorRole role = ColorRole::kAccent;
};

/// Horizontal bars with labels, one per row: "label  ████▌      value". Bars scale to the largest
/// value (or set_max()); negative values draw no bar, NaN draws the `missing` glyph in kError.
/// Partial cells use eighth blocks (whole cells in ASCII). When the area is narrow the value text
/// goes first, then the label; rows beyond the area's height are not drawn.
class BarChart {
 public:
  /// Replaces the bars.
  void set_bars(std::vector<Bar> bars) { bars_ = std::move(bars); }
  /// The bars, first drawn on top.
  const std::vector<Bar>& bars() const { return bars_; }
  /// Fixes the value of a full-length bar; 0 (the default) scales to the largest value.
  void set_max(double max) { max_ = max; }
  /// Scales bar lengths by log10(1 + value) instead of value (for counts spanning decades).
  void set_log_scale(bool log_scale) { log_scale_ = log_scale; }

  /// Draws the bars into `area`, first bar on the top row.
  void draw(Canvas& canvas, Rect area) const;

 private:
  std::vector<Bar> bars_;
  double max_ = 0;
  bool log_scale_ = false;
};

/// A one-row chart of a series, one cell per value with eighth-height blocks ("▁▂▃▅▇"), scaled
/// between the smallest and largest finite value shown. When there are more values than cells the
/// newest (last) values are shown. Non-finite values draw the `missing` glyph.
class Sparkline {
 public:
  /// Replaces the series, oldest value first.
  void set_values(std::vector<double> values) { values_ = std::move(values); }
  /// The series, oldest value first.
  const std::vector<double>& values() const { return values_; }
  /// Draws into the first row of `area` in `role`.
  void draw(Canvas& canvas, Rect area, ColorRole role = ColorRole::kAccent) const;

 private:
  std::vector<double> values_;
};

/// Counts of values in consecutive bins [edges[i], edges[i+1]), drawn as labelled horizontal bars.
/// When the area has fewer rows than bins, neighbouring bins merge so that the whole range stays
/// visible; NaN and infinite values, which fit no bin, get their own rows.
class Histogram {
 public:
  /// A histogram of `bin_count` equal bins between the smallest and largest finite value of
  /// `values` (one bin when they are all equal; none when no value is finite).
  static Histogram from_values(std::span<const double> values, int bin_count);

  /// Sets the bins: `edges` has counts.size() + 1 increasing values (otherwise no bin is kept).
  void set_bins(std::vector<double> edges, std::vector<uint64_t> counts);
  /// Counts of values outside every bin, shown as "NaN" and "inf" rows when non-zero.
  void set_non_finite(uint64_t nan_count, uint64_t inf_count);
  /// Bar lengths on a log10(1 + count) scale (default true: error counts span decades).
  void set_log_scale(bool log_scale) { log_scale_ = log_scale; }

  /// Bin edges (one more than the bins) and the count of each bin.
  const std::vector<double>& edges() const { return edges_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  /// Values in no bin: NaN, and infinities of either sign.
  uint64_t nan_count() const { return nan_count_; }
  uint64_t inf_count() const { return inf_count_; }

  /// Draws one row per (possibly merged) bin labelled with its range, then the non-finite rows.
  void draw(Canvas& canvas, Rect area) const;

 private:
  std::vector<double> edges_;
  std::vector<uint64_t> counts_;
  uint64_t nan_count_ = 0;
  uint64_t inf_count_ = 0;
  bool log_scale_ = true;
};

/// Compact number text for labels: 3 significant digits, "nan", "inf", "-inf".
std::string short_number(double value);

}  // namespace vn::tui
