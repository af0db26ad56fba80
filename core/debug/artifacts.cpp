// SPDX-License-Identifier: Apache-2.0
#include "core/debug/artifacts.h"

#include <ctime>
#include <system_error>

#include <fmt/format.h>

#include "core/common/paths.h"

namespace vn::debug {

ArtifactSorter::ArtifactSorter(std::filesystem::path dir, std::vector<std::filesystem::path> artifacts,
                               std::chrono::system_clock::time_point start)
    : dir_(std::move(dir)), artifacts_(std::move(artifacts)) {
  const std::time_t t = std::chrono::system_clock::to_time_t(start);
  std::tm local{};
  localtime_r(&t, &local);
  char buffer[32];
  // Polygraphy formats %x and %X and replaces '/' and ':' with '-'; in the C locale that is this.
  std::strftime(buffer, sizeof buffer, "%m-%d-%y_%H-%M-%S", &local);
  stamp_ = buffer;
}

std::string ArtifactSorter::destination_name(const std::filesystem::path& artifact, int64_t iteration,
                                             std::string_view suffix) const {
  std::filesystem::path name = artifact.filename();
  if (name.empty()) name = artifact.parent_path().filename();  // "dir/" names the folder
  std::string result = fmt::format("{}_{}_N{}", name.stem().string(), stamp_, iteration);
  // The suffix comes from data (a replay key, a phase name): it must not add a folder or a "..".
  if (!suffix.empty()) {
    result += '_';
    result += safe_file_name(suffix);
  }
  result += name.extension().string();
  return result;
}

Result<std::vector<SortedArtifact>> ArtifactSorter::sort(int64_t iteration, Verdict verdict,
                                                         std::string_view suffix) const {
  std::vector<SortedArtifact> sorted;
  if (artifacts_.empty()) return sorted;
  const std::filesystem::path folder = dir_ / std::string(verdict_name(verdict));
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create artifact folder: {}", folder.string(), ec.message());
  for (const std::filesystem::path& artifact : artifacts_) {
    SortedArtifact item{artifact, {}, {}};
    if (!std::filesystem::exists(std::filesystem::symlink_status(artifact, ec))) {
      item.problem = "missing";
    } else {
      const std::filesystem::path to = folder / destination_name(artifact, iteration, suffix);
      if (std::filesystem::exists(std::filesystem::symlink_status(to, ec))) {
        item.problem = fmt::format("{} exists; not overwritten", to.string());
      } else {
        std::filesystem::rename(artifact, to, ec);
        if (ec == std::errc::cross_device_link) {
          // Another file system: copy, then remove the original.
          ec.clear();
          std::filesystem::copy(artifact, to, std::filesystem::copy_options::recursive, ec);
          if (!ec) std::filesystem::remove_all(artifact, ec);
        }
        VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot move to {}: {}", artifact.string(), to.string(),
                         ec.message());
        item.to = to;
      }
    }
    sorted.push_back(std::move(item));
  }
  return sorted;
}

}  // namespace vn::debug
