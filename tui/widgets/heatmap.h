// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <vector>

#include "tui/canvas.h"

namespace vn::tui {

/// A 2-D grid of values drawn as shaded cells (" ░▒▓█", or " .:+#" in ASCII) with a one-row
/// legend below: "lo <shades> hi", plus the NaN count when there are NaNs.
///
/// Values map linearly from the range (set_range(), or the finite min..max) to the shades and to
/// roles: the lower third kOk, the middle kWarning, the upper third kError, so that monochrome
/// and ASCII terminals still show magnitude through the glyph. NaN cells draw the `missing` glyph
/// in kError. A grid larger than the area is reduced by taking the maximum of each block of values
/// (NaN wins), so that a single bad element is never averaged away; a grid that fits twice over
/// horizontally uses two cells per value to look square.
class Heatmap {
 public:
  /// Sets a rows × cols grid from row-major `values`; a size mismatch leaves the grid empty.
  void set_values(int rows, int cols, std::vector<double> values);
  /// Fixes the value range; without it the range is the finite min..max of the values.
  void set_range(double lo, double hi);
  /// Returns to the automatic range.
  void clear_range() { range_.reset(); }

  /// Grid size (0 × 0 when empty).
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// The range in use: the fixed one, or the finite min..max (0..0 when there is none).
  std::pair<double, double> range() const;

  /// Draws the grid in the top rows of `area` and the legend in its last row (when the area has
  /// at least two rows); "(no data)" for an empty grid.
  void draw(Canvas& canvas, Rect area) const;

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::vector<double> values_;
  std::optional<std::pair<double, double>> range_;
};

}  // namespace vn::tui
