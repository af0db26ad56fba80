// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/common/status.h"
#include "core/compare/compare.h"
#include "core/data/synthetic.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"

namespace vn::cli {

/// Splits "[NAME:]VALUE" at the last colon, as Polygraphy does, so tensor names may contain
/// colons. Returns {"", text} when there is no colon.
std::pair<std::string, std::string> split_name_value(const std::string& text);

/// Parses "NAME:[D0,D1,...]" (also "NAME:D0xD1" is refused: brackets are required).
Result<std::pair<std::string, Shape>> parse_input_shape(const std::string& text);

/// Parses "[NAME:][MIN,MAX]" into a name ("" = default) and range.
Result<std::pair<std::string, data::ValRange>> parse_val_range(const std::string& text);

/// The data option group of CLI.md, shared by every command that runs a model.
struct DataOptions {
  uint32_t seed = 1;
  std::vector<std::string> val_ranges;
  std::optional<double> float_min, float_max;
  std::optional<int64_t> int_min, int_max;
  std::vector<std::string> load_inputs;
  std::string save_inputs;
  std::vector<std::string> input_shapes;
  int iterations = 1;

  void add_to(CLI::App& app);
  /// Loads or generates the feeds for `graph` and saves them when --save-inputs is given.
  Result<std::vector<TensorMap>> make_feeds(const Graph& graph) const;
};

/// The output option group: which tensors to mark and where to save results.
struct OutputOptions {
  std::vector<std::string> outputs;
  bool mark_all = false;
  std::string save_outputs;

  void add_to(CLI::App& app);
};

/// The comparison option group of CLI.md.
struct CompareOptions {
  std::vector<std::string> atol;
  std::vector<std::string> rtol;
  std::vector<std::string> check_error_stat;
  std::vector<std::string> error_quantile;
  bool infinities_compare_equal = false;
  bool fail_fast = false;
  std::string report_json;

  void add_to(CLI::App& app);
  /// The CompareConfig these flags describe; fails naming a malformed value.
  Result<CompareConfig> config() const;
};

/// Where the bundled assets live: $VERNIER_ASSETS, else the source tree's assets/ (for a build
/// tree), else <exe>/../share/vernier/assets.
std::filesystem::path assets_dir();

/// Formats a number as Polygraphy does (%.5g).
std::string format_number(double v);

}  // namespace vn::cli
