// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/io/npy.h"
#include "tests/util/process.h"

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

using TempDir = ::vn::test::TempDir;

}  // namespace vn::io::testing
