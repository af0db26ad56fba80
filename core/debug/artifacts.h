// SPDX-License-Identifier: Apache-2.0
// Sorting a debug tool's per-iteration artifacts into good/ and bad/ folders, named as Polygraphy
// names them, never overwriting anything.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/debug/check.h"

namespace vn::debug {

/// What happened to one artifact after an iteration.
struct SortedArtifact {
  std::filesystem::path from;
  std::filesystem::path to;   ///< empty when it was not moved
  std::string problem;        ///< why it was not moved ("missing", "destination exists", ...)
};

/// Moves `--artifacts` files or folders after each iteration to `<dir>/good/`, `<dir>/bad/` or
/// `<dir>/unresolved/`, renamed `<stem>_<MM-DD-YY>_<HH-MM-SS>_N<i>[_<suffix>]<ext>` with the time the
/// tool started (Polygraphy's scheme, e.g. `vernier_debug_11-21-26_08-36-13_N2_outputs.onnx`).
class ArtifactSorter {
 public:
  ArtifactSorter(std::filesystem::path dir, std::vector<std::filesystem::path> artifacts,
                 std::chrono::system_clock::time_point start = std::chrono::system_clock::now());

  /// The destination name of `artifact` for an iteration.
  std::string destination_name(const std::filesystem::path& artifact, int64_t iteration,
                               std::string_view suffix) const;

  /// Moves every artifact; a missing artifact or an existing destination is reported in the
  /// result (and the file left where it is), never an error. Errors: kIoError when the folder
  /// cannot be created or a move fails.
  Result<std::vector<SortedArtifact>> sort(int64_t iteration, Verdict verdict, std::string_view suffix = {}) const;

  bool empty() const { return artifacts_.empty(); }

 private:
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> artifacts_;
  std::string stamp_;
};

}  // namespace vn::debug
