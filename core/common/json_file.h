// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace vn {

/// Reads and parses a JSON file holding a `what` ("tactic replay", "Vernier plan", ...), refusing
/// nesting deeper than kMaxJsonDepth before parsing (check_json_depth). The document keeps its key
/// order. kIoError "<path>: cannot open the <what>" when unreadable, the depth error with the path,
/// "<path>: not a JSON file, so not a <what>" when it does not parse. Checking the document's
/// structure is the caller's.
Result<nlohmann::ordered_json> read_json_file(const std::filesystem::path& path, std::string_view what);

/// Reads the fields of a hand-validated JSON document with errors that say where it is malformed:
/// every error is kIoError "<document>: <where>: <what>" ("plan: layer 3: missing \"name\""), or
/// "<document>: <what>" when `where` is empty. A reader of a format keeps one JsonReader per
/// place (a layer, an entry) and adds its own typed fields on top.
class JsonReader {
 public:
  JsonReader(std::string document, std::string where) : document_(std::move(document)), where_(std::move(where)) {}

  /// The error for `what` at this reader's place.
  Status fail(std::string_view what) const;
  /// The field `key` of object `j`; "missing \"key\"" when `j` is no object or lacks it.
  Result<const nlohmann::ordered_json*> field(const nlohmann::ordered_json& j, const char* key) const;
  /// The string field `key`; "\"key\" must be a string" when it is another type.
  Result<std::string> string(const nlohmann::ordered_json& j, const char* key) const;
  /// The list of strings `key`; "\"key\" must be a list of strings" otherwise.
  Result<std::vector<std::string>> strings(const nlohmann::ordered_json& j, const char* key) const;
  /// The number field `key`; "\"key\" must be a number" otherwise.
  Result<double> number(const nlohmann::ordered_json& j, const char* key) const;
  /// The integer field `key`; "\"key\" must be an integer" otherwise.
  Result<int64_t> integer(const nlohmann::ordered_json& j, const char* key) const;
  /// The boolean field `key`; "\"key\" must be true or false" otherwise.
  Result<bool> boolean(const nlohmann::ordered_json& j, const char* key) const;

 private:
  std::string document_;
  std::string where_;
};

}  // namespace vn
