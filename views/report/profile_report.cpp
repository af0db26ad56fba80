// SPDX-License-Identifier: Apache-2.0
#include "views/report/profile_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "views/report/text_table.h"

namespace vn::views {
namespace {

std::string percent(double share) { return fmt::format("{:.1f}%", share * 100.0); }
std::string millis(double ms) { return fmt::format("{:.3f}", ms); }

}  // namespace

std::string format_profile(const RunProfile& p, size_t top) {
  using A = TextTable::Align;
  std::string out = fmt::format(
      "[I] Profile of {} | {} iteration(s) | {} ms per run, {} ms in {} layer(s) ({}), {} ms between them\n",
      p.runner, p.iterations, millis(p.run_ms), millis(p.layers_ms), p.layers.size(),
      percent(p.run_ms > 0 ? p.layers_ms / p.run_ms : 0), millis(std::max(0.0, p.run_ms - p.layers_ms)));
  TextTable ops({"op", "count", "total ms", "mean ms", "share"}, {A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight});
  for (const OpProfile& op : p.ops) {
    ops.add_row({op.op, std::to_string(op.count), millis(op.total_ms), millis(op.mean_ms), percent(op.share)});
  }
  out += ops.render("    ");
  TextTable layers({"rank", "layer", "op", "ms", "share"}, {A::kRight, A::kLeft, A::kLeft, A::kRight, A::kRight});
  double rest_ms = 0, rest_share = 0;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerProfile& l = p.layers[i];
    if (i < top) {
      layers.add_row({std::to_string(i + 1), l.name, l.op, millis(l.ms), percent(l.share)});
    } else {
      rest_ms += l.ms;
      rest_share += l.share;
    }
  }
  if (p.layers.size() > top) {
    layers.add_row({"", fmt::format("({} more layers)", p.layers.size() - top), "", millis(rest_ms),
                    percent(rest_share)});
  }
  out += "\n" + layers.render("    ");
  return out;
}

}  // namespace vn::views
