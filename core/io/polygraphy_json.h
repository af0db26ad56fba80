// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/tensor_map.h"

namespace vn::io {

/// One iteration of one runner, as Polygraphy's IterationResult: outputs in the runner's order.
struct IterationResult {
  TensorMap outputs;
  std::optional<double> runtime;  ///< seconds; null in the file when absent
  std::string runner_name;
};

/// One runner's iterations, as one (runner_name, [IterationResult, ...]) pair of Polygraphy's RunResults.
struct RunnerResults {
  std::string runner_name;
  std::vector<IterationResult> iterations;
};

/// Polygraphy's RunResults (--save-outputs / --load-outputs): duplicate runner names allowed, order kept.
using RunResults = std::vector<RunnerResults>;

/// Parses a RunResults JSON document. The top level must be an object tagged RunResults; "lst" holds
/// [runner_name, [IterationResult, ...]] pairs. Type tags are accepted in both styles: a
/// "polygraphy_class" key anywhere in the object, or the legacy
/// "__polygraphy_encoded_<Class>": "polygraphy_serialized_json_type" key. An IterationResult needs
/// "outputs" (name -> array, see decode_polygraphy_array); "runtime" may be a number, null or absent;
/// a missing "runner_name" defaults to the enclosing runner's name; unknown keys are ignored.
/// Errors are kIoError and name the runner, iteration and output at fault. JSON nested deeper than 64
/// levels is refused before parsing.
Result<RunResults> run_results_from_json(std::string_view text);

/// Reads and parses a RunResults file; errors carry the path.
Result<RunResults> load_run_results(const std::filesystem::path& path);

/// Writes RunResults byte for byte as Polygraphy does (json.dumps(obj, indent=4), no trailing newline):
/// outputs as LazyArray objects wrapping ndarray objects (base64 of np.save bytes), "polygraphy_class"
/// last in every tagged object, runtime as Python's float repr (null when absent or not finite, since
/// Python's NaN/Infinity literals are not JSON), non-ASCII text escaped as Python's ensure_ascii does.
/// Fails for tensors numpy cannot hold (bfloat16, strings) and for names that are not valid UTF-8.
Result<std::string> run_results_to_json(const RunResults& results);

/// Serializes and writes atomically (file_write_atomic); errors carry the path.
Status save_run_results(const RunResults& results, const std::filesystem::path& path);

/// Saves results as --save-outputs does: a RunResults .json, or an .npz holding the one iteration
/// of one runner. Errors: kInvalidArgument for another extension or an .npz of several.
Status save_outputs_file(const RunResults& results, const std::filesystem::path& path);

/// A runner's name as Polygraphy gives it, "<prefix>-runner-N<index>-<%m/%d/%y-%H:%M:%S>" (local
/// time), so that saved files read the same in both tools.
std::string polygraphy_runner_name(const std::string& prefix, int index);

/// Parses a feed list (Polygraphy --save-inputs, --load-inputs, data to-input): a JSON list with one
/// untagged object per iteration mapping input names to arrays (see decode_polygraphy_array).
Result<std::vector<TensorMap>> feed_list_from_json(std::string_view text);

/// Reads and parses a feed-list file; errors carry the path.
Result<std::vector<TensorMap>> load_feed_list(const std::filesystem::path& path);

/// Writes a feed list byte for byte as Polygraphy does: plain ndarray objects, json.dumps(indent=4) layout.
Result<std::string> feed_list_to_json(const std::vector<TensorMap>& feeds);

/// Serializes and writes atomically (file_write_atomic); errors carry the path.
Status save_feed_list(const std::vector<TensorMap>& feeds, const std::filesystem::path& path);

/// Decodes one Polygraphy-encoded array object:
/// - {"array": <base64 of np.save bytes>, "polygraphy_class": "ndarray"}; the legacy payloads are read
///   too: latin-1 text of the .npy bytes instead of base64, and an .npz whose first member is the array;
/// - a LazyArray (alias LazyNumpyArray) wrapping one in "values";
/// - a FormattedArray's "array", reshaped to its "shape" when the element counts agree (a vectorized
///   TensorRT layout whose counts differ is refused);
/// - either type-marker style (see run_results_from_json).
/// A torch "Tensor" payload is refused ("... is a torch tensor; re-save it with numpy arrays"), as are
/// an unknown polygraphy_class (named in the message), another Polygraphy class, and untagged objects.
Result<Tensor> decode_polygraphy_array(const nlohmann::json& value);
/// The same for a document parsed with nlohmann::ordered_json (as the readers above do).
Result<Tensor> decode_polygraphy_array(const nlohmann::ordered_json& value);

}  // namespace vn::io
