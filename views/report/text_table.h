// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace vn::views {

/// A plain-text table for terminal reports: columns padded to the widest cell by display width,
/// numbers right-aligned when the column says so.
class TextTable {
 public:
  enum class Align { kLeft, kRight };

  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  size_t row_count() const { return rows_.size(); }
  /// The table with a header row and a rule under it; each line starts with `indent`.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vn::views
