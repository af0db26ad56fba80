// SPDX-License-Identifier: Apache-2.0
// --save-outputs files and Polygraphy's runner names (declared in polygraphy_json.h).
#include <ctime>

#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"

namespace vn::io {

Status save_outputs_file(const RunResults& results, const std::filesystem::path& path) {
  if (path.extension() == ".json") return save_run_results(results, path);
  if (path.extension() == ".npz") {
    if (results.size() != 1 || results[0].iterations.size() != 1) {
      return make_error(StatusCode::kInvalidArgument,
                        "--save-outputs {}: an .npz holds one iteration of one backend; use a .json file",
                        path.string());
    }
    return npz_save(results[0].iterations[0].outputs, path);
  }
  return make_error(StatusCode::kInvalidArgument, "--save-outputs {}: expected a .json or .npz file name",
                    path.string());
}

std::string polygraphy_runner_name(const std::string& prefix, int index) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%m/%d/%y-%H:%M:%S", &tm);
  return fmt::format("{}-runner-N{}-{}", prefix, index, stamp);
}

}  // namespace vn::io
