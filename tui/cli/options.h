// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/backend/runner_client.h"
#include "core/eut/engine_under_test.h"
#include "core/compare/compare.h"
#include "core/data/synthetic.h"
#include "core/debug/tolerance_reach.h"
#include "core/engine/engine_backend.h"
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
  /// The synthetic-input settings of these flags (seed, iterations, ranges, shapes).
  Result<data::SyntheticOptions> synthetic_options() const;
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

/// `vernier run --profile`: time every layer of the backends that can.
struct ProfileOptions {
  bool profile = false;
  size_t top = 20;  ///< layers listed, longest first; the rest are summed in one row

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
  bool local_errors = false;
  std::string report_json;

  void add_to(CLI::App& app);
  /// The CompareConfig these flags describe; fails naming a malformed value.
  Result<CompareConfig> config() const;
};

/// The engine build option group of CLI.md, shared by `run --engine` and `convert`.
struct EngineOptions {
  bool fp16 = false;
  bool bf16 = false;
  bool tf32 = false;
  bool int8 = false;
  std::vector<std::string> layer_precisions;
  std::string precision_constraints = "none";
  std::string calibration_data;
  std::string calibration_method;
  std::string calibration_cache;
  std::string save_tactics;
  std::string load_tactics;
  bool deterministic = false;
  std::optional<uint64_t> builder_seed;
  double timing_margin = 0.1;
  std::string timing_cache;
  std::string save_engine;
  std::string load_engine;
  /// The timing cache of the last engine_options() call, saved by save_artifacts().
  mutable std::shared_ptr<engine::TimingCache> timing_cache_state;
  std::vector<std::string> inject_faults;

  void add_to(CLI::App& app);
  /// The engine backend's options: parsed precisions, constraints and faults, and the files of
  /// --load-tactics and --load-engine read. `input_shapes` are the data group's --input-shapes
  /// (the shapes the builder times with); `synthetic` the inputs int8 calibrates on without
  /// --calibration-data. Fails naming the flag and value at fault, and refuses calibration flags
  /// without --int8 and build flags combined with --load-engine (the plan fixes them).
  Result<engine::EngineOptions> engine_options(const std::vector<std::string>& input_shapes,
                                               const data::SyntheticOptions& synthetic = {}) const;
  /// Writes --save-engine and --save-tactics from a built plan, printing where.
  Status save_artifacts(const engine::Plan& plan) const;
};

/// The `--engine-runner` option group of `vernier run`: options and time limits of the runners.
struct RunnerFlags {
  std::vector<std::string> engine_runners;  ///< NAME or command line, one per runner
  std::vector<std::string> options;         ///< KEY=VALUE
  double timeout_s = 300;
  double load_timeout_s = 600;

  /// Adds the flags; returns the --engine-runner option, whose occurrences order the backends.
  CLI::Option* add_to(CLI::App& app);
  /// --runner-option KEY=VALUE pairs in order; fails naming an item without '=' or without a key.
  Result<std::vector<std::pair<std::string, std::string>>> parsed_options() const;
  /// The engine under test run by the runner `spec` (one of engine_runners) with these options.
  Result<std::shared_ptr<eut::EngineUnderTest>> engine_under_test(const std::string& spec) const;
  /// --engine-model FILE (commands that test one engine; `run` has its own): the engine runs this
  /// model, part for part, in place of the model the reference runs.
  std::string engine_model;

  /// Adds --engine-model.
  void add_engine_model(CLI::App& app);
  /// For commands that test one engine: the runner given, or null (the built-in engine) when none
  /// was, running --engine-model when given (core/eut/engine_model.h); more than one
  /// --engine-runner is refused, and an --engine-model that does not load.
  Result<std::shared_ptr<eut::EngineUnderTest>> single_engine() const;
};

/// One line about a plan: layers and the nodes fused or folded into them, layers per precision,
/// fusions prevented by marked outputs, injected faults.
std::string plan_summary(const engine::Plan& plan);

/// The precision of a plan's layers with the coarsest rounding (fp32 when none is reduced): it
/// sets the default tolerance of comparisons with that engine.
engine::PrecisionId loosest_precision(const engine::Plan& plan);

/// The tolerance preset for comparing an engine that may run in `precision` with a float32
/// reference: Polygraphy's 1e-5 for fp32, looser where the format's rounding alone exceeds it.
Tolerance engine_tolerance_preset(engine::PrecisionId precision);

/// Sets the default atol/rtol of `config` to engine_tolerance_preset(precision) where the command
/// line gave none, and says so; nothing for fp32. Returns where each tolerance came from.
debug::ToleranceOrigin apply_tolerance_preset(engine::PrecisionId precision, CompareConfig& config);

/// The loosest precision a build allowed `allowed` may choose: the tolerance preset of the debug
/// tools, whose builds vary from one iteration to the next.
using engine::loosest_allowed;

/// Where the bundled assets live: $VERNIER_ASSETS, else the source tree's assets/ (for a build
/// tree), else <exe>/../share/vernier/assets.
std::filesystem::path assets_dir();

/// Formats a number as Polygraphy does (%.5g).
std::string format_number(double v);

}  // namespace vn::cli
