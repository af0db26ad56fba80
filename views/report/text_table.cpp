// SPDX-License-Identifier: Apache-2.0
#include "views/report/text_table.h"

#include <algorithm>

#include "tui/canvas.h"

namespace vn::views {

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::kLeft);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<int> widths(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], tui::display_width(row[c]));
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);

  auto line = [&](const std::vector<std::string>& row) {
    std::string out = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      const int pad = widths[c] - tui::display_width(row[c]);
      const bool last = c + 1 == row.size();
      if (align_[c] == Align::kRight) out.append(static_cast<size_t>(pad), ' ');
      out += row[c];
      if (align_[c] == Align::kLeft && !last) out.append(static_cast<size_t>(pad), ' ');
      if (!last) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };

  std::string out = line(headers_);
  std::string rule = indent;
  for (size_t c = 0; c < widths.size(); ++c) {
    rule.append(static_cast<size_t>(widths[c]), '-');
    if (c + 1 < widths.size()) rule += "  ";
  }
  out += rule + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

}  // namespace vn::views
