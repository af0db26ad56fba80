// SPDX-License-Identifier: Apache-2.0
// Debug replays: the verdict of every iteration of a debug tool, in Polygraphy's file format
// (`--save-debug-replay`, `--load-debug-replay`), so a search can be resumed or replayed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/debug/check.h"

namespace vn::debug {

/// One iteration: Polygraphy's IterationContext plus the verdict and its reason. `state` is the
/// tool's own data ({"num_nodes": n} for reduce).
struct ReplayEntry {
  nlohmann::json state = nlohmann::json::object();
  int64_t iteration = 0;
  Verdict verdict = Verdict::kUnresolved;
  std::string reason;
};

/// The iterations of one debug session by key ("_N<i>" or "_N<i>_<suffix>").
///
/// File format: a JSON object mapping keys to {"state", "iteration_info": {"iteration": i},
/// "success", "polygraphy_class": "IterationContext"}, which Polygraphy reads as is. `success` is
/// false only for a bad verdict; Vernier adds "verdict" ("good", "bad", "unresolved") and
/// "reason". A Polygraphy replay (no "verdict") loads with good/bad from "success".
class DebugReplay {
 public:
  /// "_N<iteration>" or "_N<iteration>_<suffix>".
  static std::string key(int64_t iteration, std::string_view suffix);

  /// Reads a replay. kIoError when unreadable or not a JSON object of iteration entries (naming
  /// the key at fault).
  static Result<DebugReplay> load(const std::filesystem::path& path);

  /// The entry recorded under `key`, if any.
  const ReplayEntry* find(const std::string& key) const;
  /// Adds or replaces an entry.
  void record(const std::string& key, ReplayEntry entry);
  /// Removes an entry (undo).
  void erase(const std::string& key) { entries_.erase(key); }
  size_t size() const { return entries_.size(); }
  const std::map<std::string, ReplayEntry>& entries() const { return entries_; }

  nlohmann::json to_json() const;
  /// Writes the replay atomically (temporary file, then rename).
  Status save(const std::filesystem::path& path) const;

 private:
  std::map<std::string, ReplayEntry> entries_;
};

/// The verdict named "good", "bad" or "unresolved" (verdict_name's spellings); nullopt otherwise.
std::optional<Verdict> verdict_from_name(std::string_view name);

/// "<stem>_skip_current<ext>" beside `replay_path`: the replay with the current iteration already
/// recorded as unresolved, written before each check, so that loading it skips an iteration that
/// crashed or hung Vernier itself.
std::filesystem::path skip_current_path(const std::filesystem::path& replay_path);

}  // namespace vn::debug
