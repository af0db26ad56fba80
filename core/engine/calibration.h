// SPDX-License-Identifier: Apache-2.0
// Post-training int8 calibration: the model runs in float32 over a calibration set, and each
// tensor's activation scale comes from the statistics of its values, by min-max, percentile or
// entropy (TensorRT's KL-divergence threshold search); plus the calibration cache file that
// stores the scales so a later build needs no calibration data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/data/synthetic.h"
#include "core/engine/quantize.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_map.h"
#include "core/ops/op_registry.h"

namespace vn::engine {

/// How a tensor's clipping threshold (amax; scale = amax / 127) is chosen from its values.
enum class CalibrationMethod : uint8_t {
  kMinMax,      ///< the largest |x| seen: nothing clips, outliers cost the bulk its resolution
  kPercentile,  ///< the given percentile of |x| (99.99 by default): the rarest values clip
  kEntropy,     ///< the threshold whose quantized histogram loses the least information (KL divergence)
};

/// "minmax", "percentile", "entropy".
std::string_view calibration_method_name(CalibrationMethod method);
/// Inverse of calibration_method_name.
std::optional<CalibrationMethod> calibration_method_from_name(std::string_view name);

/// Bins of the |x| histograms of percentile and entropy calibration, as in TensorRT.
inline constexpr int kHistogramBins = 2048;
/// Quantized levels of the entropy search: the 128 magnitudes of int8's positive half.
inline constexpr int kEntropyLevels = 128;

/// A histogram of |x| over [0, range) in kHistogramBins equal bins; values at or beyond the range
/// count in the last bin.
struct AbsHistogram {
  double range = 0;
  std::vector<double> counts = std::vector<double>(kHistogramBins, 0.0);

  /// Adds |v| of every finite value.
  void add(std::span<const float> values);
  double bin_width() const { return range / kHistogramBins; }
};

/// The `percentile` (in (0, 100]) of the values of `h`, interpolated linearly inside its bin.
double percentile_threshold(const AbsHistogram& h, double percentile);

/// The entropy threshold of TensorRT's calibrator (as NVIDIA's pytorch-quantization computes it):
/// among thresholds of i bins, i from kEntropyLevels to kHistogramBins, the one that minimizes
/// KL(P || Q), where P is the histogram cut at i with the clipped tail added to its last bin, and
/// Q is the first i bins merged evenly into kEntropyLevels levels and spread back over their
/// non-empty bins. The zero bin counts as its neighbour (ReLU's spike at 0 would dominate); ties go
/// to the larger threshold. Returns i x bin width (the range for an empty histogram).
double entropy_threshold(const AbsHistogram& h);

/// The calibration method and its parameter.
struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kEntropy;
  /// The percentile of kPercentile. Defaults to 99.99.
  double percentile = 99.99;
};

/// Collects the statistics of calibration and turns them into scales. Pass 1 (observe_range) sees
/// every batch to find each tensor's max |x|; percentile and entropy need pass 2
/// (observe_histogram), which sees the same batches again to fill histograms over [0, max |x|].
class Calibrator {
 public:
  explicit Calibrator(CalibrationOptions options) : options_(options) {}

  /// Pass 1: records max |x| of a float32 tensor (other dtypes are ignored).
  void observe_range(const std::string& name, const Tensor& tensor);
  /// True when the method needs pass 2.
  bool needs_histograms() const { return options_.method != CalibrationMethod::kMinMax; }
  /// Pass 2: adds a float32 tensor's values to its histogram (a tensor pass 1 did not see is ignored).
  void observe_histogram(const std::string& name, const Tensor& tensor);
  /// The threshold of every tensor observed, by the method.
  std::unordered_map<std::string, double> thresholds() const;
  /// scale_from_amax of every threshold.
  ScaleTable scales() const;

 private:
  CalibrationOptions options_;
  std::unordered_map<std::string, double> max_abs_;
  std::unordered_map<std::string, AbsHistogram> histograms_;
};

/// Calibrates `model`: builds a float32 engine with every tensor marked (so every tensor is
/// observed, whatever fusions a later build makes) and runs it over `feeds`, once for minmax and
/// twice for percentile and entropy. Returns the scale of every float32 graph input and tensor
/// the engine produces. Errors: kInvalidArgument for no feeds; the engine's build and run errors.
Result<ScaleTable> calibrate(const Model& model, const std::vector<TensorMap>& feeds, const CalibrationOptions& options,
                             const ops::OpRegistry& registry, int num_threads);

/// Where an int8 build gets its activation scales, in this order of precedence: an existing
/// `cache` file; else calibration over `feeds`, else over the files of `data`, else over synthetic
/// feeds from `synthetic` (said with a warning), writing `cache` when one is named. A model with
/// QuantizeLinear/DequantizeLinear nodes is explicitly quantized and is not calibrated.
struct Int8Options {
  CalibrationOptions calibration;
  /// --calibration-data: files in the formats of data::load_feeds.
  std::vector<std::filesystem::path> data;
  /// Calibration feeds given directly (by a program or a test).
  std::vector<TensorMap> feeds;
  /// The synthetic inputs used without data (the run's data options); unset input shapes fall
  /// back to BuildOptions::input_shapes.
  data::SyntheticOptions synthetic;
  /// --calibration-cache: read when it exists (no calibration), else written after calibrating.
  std::filesystem::path cache;
  /// Scales given directly, by tensor name (no calibration): those of another model's
  /// calibration whose tensors this model holds under other names (isolated-layers models).
  std::optional<ScaleTable> scales;
};

/// The activation scales of a model and where they came from.
struct ObtainedScales {
  ScaleTable scales;
  /// For plans and reports: "entropy calibration over 16 feed(s) of calib.json", "... read from the
  /// calibration cache c.json", or why nothing was calibrated.
  std::string description;
  bool synthetic = false;  ///< calibrated on synthetic feeds (a warning was logged)
};

/// Obtains the activation scales of `model` as `options` says (see Int8Options for the order of
/// sources), synthetic feeds taking `input_shapes` for the dims their options leave unset, and
/// writes the cache when one is named and calibration ran. A model with QuantizeLinear or
/// DequantizeLinear nodes is explicitly quantized: no scales, and the description says so.
/// Errors: kInvalidArgument for a cache written for another model (by model_hash) or no feeds;
/// kIoError for unreadable data or cache files; calibrate's errors.
Result<ObtainedScales> obtain_int8_scales(const Model& model, const Int8Options& options,
                                          const std::map<std::string, Shape>& input_shapes,
                                          const ops::OpRegistry& registry, int num_threads);

/// The contents of a calibration cache (`--calibration-cache`).
struct CalibrationCache {
  std::string model_hash;  ///< model_hash() of the model it was calibrated on
  std::string model_name;
  CalibrationMethod method = CalibrationMethod::kEntropy;
  ScaleTable scales;
};

/// Writes the cache as JSON (atomically): {"format": "vernier-calibration-cache", "version": 1,
/// "model": {"name", "hash"}, "method": "entropy", "scales": {"tensor": scale, ...}}. Scales are
/// written with enough digits to read back bit-identical. kIoError when it cannot be written.
Status save_calibration_cache(const CalibrationCache& cache, const std::filesystem::path& path);
/// Reads a cache file. kIoError naming the file and what is malformed.
Result<CalibrationCache> load_calibration_cache(const std::filesystem::path& path);

}  // namespace vn::engine
