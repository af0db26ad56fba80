// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/engine/timing_cache.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/ir/mapped_file.h"

namespace vn::engine {

namespace {
constexpr const char* kFormat = "vernier-timing-cache";
}  // namespace

Result<TimingCache> TimingCache::load(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json json, read_json_file(path, "timing cache"));
  const bool valid = json.is_object() && json.contains("format") && json["format"] == kFormat &&
                     json.contains("version") && json["version"] == 1 && json.contains("entries") &&
                     json["entries"].is_object();
  VN_RETURN_IF_NOT(valid, StatusCode::kIoError, "{}: not a Vernier timing cache (version 1)", path.string());
  TimingCache cache;
  for (const auto& [key, value] : json["entries"].items()) {
    VN_RETURN_IF_NOT(value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() >= 0,
                     StatusCode::kIoError, "{}: timing cache entry '{}' is not a time in ms", path.string(), key);
    cache.entries_[key] = value.get<double>();
  }
  return cache;
}

Status TimingCache::save(const std::filesystem::path& path) const {
  nlohmann::json json = {{"format", kFormat}, {"version", 1}, {"entries", entries_}};
  return file_write_atomic(path, json.dump(1) + "\n");
}

std::optional<double> TimingCache::find(const std::string& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

}  // namespace vn::engine
