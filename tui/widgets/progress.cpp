// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace vn::tui {
namespace {

// Narrowest bar worth drawing between brackets.
constexpr int kMinBarWidth = 5;

}  // namespace

void ProgressBar::set(double fraction, std::string label, std::string eta_text) {
  fraction_ = std::isnan(fraction) ? 0.0 : std::clamp(fraction, 0.0, 1.0);
  label_ = std::move(label);
  eta_text_ = std::move(eta_text);
}

std::string ProgressBar::format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "ETA --";
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 60) return fmt::format("ETA {}s", total);
  if (total < 3600) return fmt::format("ETA {}m{:02}s", total / 60, total % 60);
  return fmt::format("ETA {}h{:02}m", total / 3600, (total % 3600) / 60);
}

double ProgressBar::estimate_remaining(double elapsed_seconds, double fraction) {
  if (!(fraction > 0)) return NAN;
  return elapsed_seconds * (1.0 - std::min(fraction, 1.0)) / fraction;
}

void ProgressBar::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  const Rect row = area.rows(0, 1);
  canvas.fill(row);
  const Glyphs& g = canvas.glyphs();
  const std::string percent = fmt::format("{:3d}%", static_cast<int>(std::floor(fraction_ * 100)));
  const int percent_width = static_cast<int>(percent.size());
  std::string eta = eta_text_;
  std::string label = label_;
  // Width left for "[bar]" once the other parts and their separating spaces are placed.
  const auto bar_room = [&] {
    int used = percent_width;
    if (!label.empty()) used += display_width(label) + 1;
    if (!eta.empty()) used += display_width(eta) + 2;
    return row.w - used - 1;
  };
  if (bar_room() < kMinBarWidth + 2) eta.clear();
  if (bar_room() < kMinBarWidth + 2 && !label.empty()) {
    const int label_width = row.w - percent_width - 1 - (kMinBarWidth + 2) - 1;
    label = label_width >= 3 ? truncate_to_width(label, label_width, g.ellipsis) : std::string();
  }
  int x = row.x;
  if (!label.empty()) x += canvas.put_text(row, x, row.y, label) + 1;
  const int room = bar_room();
  if (room >= 3) {
    const int inner = room - 2;
    const auto eighths = static_cast<int>(std::lround(fraction_ * inner * 8));
    std::string bar;
    for (int k = 0; k < eighths / 8; ++k) bar += g.bar_full;
    if (eighths % 8 != 0) bar += g.bar_eighths[static_cast<size_t>(eighths % 8)];
    canvas.put_text(row, x, row.y, "[");
    canvas.put_text(Rect{x + 1, row.y, inner, 1}.intersect(row), x + 1, row.y, bar, ColorRole::kAccent);
    canvas.put_text(row, x + inner + 1, row.y, "]");
    x += room + 1;
  }
  x += canvas.put_text(row, x, row.y, percent);
  if (!eta.empty()) canvas.put_text(row, x + 2, row.y, eta);
}

}  // namespace vn::tui
