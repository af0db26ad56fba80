// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

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

Status JsonReader::fail(std::string_view what) const {
  return make_error(StatusCode::kIoError, "{}: {}{}", document_, where_.empty() ? "" : where_ + ": ", what);
}

Result<const nlohmann::ordered_json*> JsonReader::field(const nlohmann::ordered_json& j, const char* key) const {
  if (!j.is_object()) return fail(fmt::format("missing \"{}\"", key));
  const auto it = j.find(key);
  if (it == j.end()) return fail(fmt::format("missing \"{}\"", key));
  return &*it;
}

Result<std::string> JsonReader::string(const nlohmann::ordered_json& j, const char* key) const {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
  if (!v->is_string()) return fail(fmt::format("\"{}\" must be a string", key));
  return v->get<std::string>();
}

Result<std::vector<std::string>> JsonReader::strings(const nlohmann::ordered_json& j, const char* key) const {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
  std::vector<std::string> out;
  if (!v->is_array()) return fail(fmt::format("\"{}\" must be a list of strings", key));
  for (const nlohmann::ordered_json& e : *v) {
    if (!e.is_string()) return fail(fmt::format("\"{}\" must be a list of strings", key));
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<double> JsonReader::number(const nlohmann::ordered_json& j, const char* key) const {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
  if (!v->is_number()) return fail(fmt::format("\"{}\" must be a number", key));
  return v->get<double>();
}

Result<int64_t> JsonReader::integer(const nlohmann::ordered_json& j, const char* key) const {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
  if (!v->is_number_integer()) return fail(fmt::format("\"{}\" must be an integer", key));
  return v->get<int64_t>();
}

Result<bool> JsonReader::boolean(const nlohmann::ordered_json& j, const char* key) const {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json* v, field(j, key));
  if (!v->is_boolean()) return fail(fmt::format("\"{}\" must be true or false", key));
  return v->get<bool>();
}

}  // namespace vn
