// SPDX-License-Identifier: Apache-2.0
// The timing cache: the median time of every (layer signature, tactic, precision) the builder has
// timed, so that rebuilding a model, or building another with the same layers, skips the timing
// runs, as TensorRT's timing cache does.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/common/status.h"

namespace vn::engine {

/// Median times by key. A key names what the time depends on: the layer's member ops and their
/// attributes, the shapes and formats of its inputs and weights, the tactic, the precision and the
/// thread count; not the layer's name, so identical layers share entries.
///
/// File format (JSON): {"format": "vernier-timing-cache", "version": 1, "entries": {KEY: ms, ...}}.
class TimingCache {
 public:
  /// Reads a cache file. kIoError naming the file when it is unreadable or not a timing cache.
  static Result<TimingCache> load(const std::filesystem::path& path);
  /// Writes the cache atomically.
  Status save(const std::filesystem::path& path) const;

  /// The recorded median for `key`; counts a hit or a miss.
  std::optional<double> find(const std::string& key);
  void record(const std::string& key, double median_ms) { entries_[key] = median_ms; }

  size_t size() const { return entries_.size(); }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  std::map<std::string, double> entries_;
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace vn::engine
