// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/io/npy.h"

namespace vn::io::testing {

/// The committed Polygraphy/numpy fixtures (tests/data/polygraphy).
inline std::filesystem::path fixture_path(const std::string& name) {
  return std::filesystem::path(VN_SOURCE_DIR) / "tests" / "data" / "polygraphy" / name;
}

inline std::string read_fixture(const std::string& name) {
  Result<std::string> bytes = read_file_bytes(fixture_path(name));
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  return bytes.ok() ? *bytes : std::string();
}

/// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("vn_io_{}_{}_{}", ::getpid(), info ? info->test_suite_name() : "x", info ? info->name() : "x");
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  /// Number of entries in the directory (to check that no temporary files are left behind).
  size_t entry_count() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path_)) ++n;
    return n;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace vn::io::testing
