// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"

#include <fstream>
#include <sstream>

#include "core/common/json_depth.h"

namespace vn {

Result<nlohmann::ordered_json> read_json_file(const std::filesystem::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  VN_RETURN_IF_NOT(in, StatusCode::kIoError, "{}: cannot open the {}", path.string(), what);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (Status deep = check_json_depth(text); !deep.ok()) return deep.with_context(path.string());
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  VN_RETURN_IF_NOT(!json.is_discarded(), StatusCode::kIoError, "{}: not a JSON file, so not a {}", path.string(), what);
  return json;
}

}  // namespace vn
