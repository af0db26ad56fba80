// SPDX-License-Identifier: Apache-2.0
// Shared by the libFuzzer targets (issue 9): every target feeds the bytes to one of Vernier's
// readers and only requires that it returns (a value or a Status) without crashing, leaking or
// tripping a sanitizer. Readers that take a path get the bytes through a file in a private folder.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace vn::fuzz {

/// A folder private to this process, created on first use, holding `weights.bin` (4 KiB of zeros)
/// so that external-data references have something real to resolve to.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("vernier-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "weights.bin", std::ios::binary) << std::string(4096, '\0');
    return d;
  }();
  return dir;
}

/// Writes the input to `<scratch>/<name>` and returns the path.
inline std::filesystem::path write_input(const uint8_t* data, size_t size, const char* name) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

inline std::string_view as_view(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace vn::fuzz
