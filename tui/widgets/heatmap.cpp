// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/heatmap.h"

#include <algorithm>
#include <cmath>

#include "tui/i18n.h"
#include "tui/widgets/bars.h"

namespace vn::tui {

void Heatmap::set_values(int rows, int cols, std::vector<double> values) {
  const bool valid = rows > 0 && cols > 0 && values.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols);
  rows_ = valid ? rows : 0;
  cols_ = valid ? cols : 0;
  values_ = valid ? std::move(values) : std::vector<double>{};
}

void Heatmap::set_range(double lo, double hi) { range_ = std::make_pair(std::min(lo, hi), std::max(lo, hi)); }

std::pair<double, double> Heatmap::range() const {
  if (range_) return *range_;
  double lo = INFINITY;
  double hi = -INFINITY;
  for (double v : values_) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return lo > hi ? std::make_pair(0.0, 0.0) : std::make_pair(lo, hi);
}

void Heatmap::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  canvas.fill(area);
  if (rows_ == 0) {
    canvas.put_text(area, area.x, area.y, tr("(no data)"), ColorRole::kDim);
    return;
  }
  const Glyphs& g = canvas.glyphs();
  const int grid_rows = area.h >= 2 ? area.h - 1 : area.h;
  const auto [lo, hi] = range();
  const int shades = static_cast<int>(g.shade.size());
  size_t nan_count = 0;
  for (double v : values_) nan_count += std::isnan(v) ? 1 : 0;

  // Each screen cell shows the maximum of a block of block_rows × block_cols values.
  const int block_rows = (rows_ + grid_rows - 1) / grid_rows;
  const int cell_width = cols_ * 2 <= area.w ? 2 : 1;
  const int block_cols = (cols_ + area.w / cell_width - 1) / std::max(1, area.w / cell_width);
  for (int r = 0; r * block_rows < rows_ && r < grid_rows; ++r) {
    for (int c = 0; c * block_cols < cols_ && (c + 1) * cell_width <= area.w; ++c) {
      double value = -INFINITY;
      bool nan = false;
      for (int i = r * block_rows; i < std::min(rows_, (r + 1) * block_rows); ++i) {
        for (int j = c * block_cols; j < std::min(cols_, (c + 1) * block_cols); ++j) {
          const double v = values_[static_cast<size_t>(i) * static_cast<size_t>(cols_) + static_cast<size_t>(j)];
          if (std::isnan(v)) nan = true;
          value = std::max(value, v);
        }
      }
      std::string glyph;
      ColorRole role = ColorRole::kError;
      if (nan) {
        glyph = g.missing;
      } else {
        const double t = hi > lo ? std::clamp((value - lo) / (hi - lo), 0.0, 1.0) : (value > lo ? 1.0 : 0.0);
        const int level = std::min(shades - 1, static_cast<int>(t * shades));
        glyph = g.shade[static_cast<size_t>(level)];
        role = t < 1.0 / 3 ? ColorRole::kOk : (t < 2.0 / 3 ? ColorRole::kWarning : ColorRole::kError);
      }
      std::string cell;
      for (int k = 0; k < cell_width; ++k) cell += glyph;
      canvas.put_text(area, area.x + c * cell_width, area.y + r, cell, role);
    }
  }
  if (area.h < 2) return;
  std::string legend = short_number(lo) + " ";
  for (std::string_view shade : g.shade) legend += shade;
  legend += ' ';
  legend += short_number(hi);
  if (nan_count > 0) {
    legend += "  NaN ";
    legend += std::to_string(nan_count);
  }
  canvas.put_text(area, area.x, area.y + area.h - 1, legend, ColorRole::kDim);
}

}  // namespace vn::tui
