// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace vn::test {

/// What a finished child process left behind.
struct ProcessResult {
  int exit_code = -1;   ///< exit status, or 128 + signal number when killed by a signal
  std::string out;      ///< everything written to stdout
  std::string err;      ///< everything written to stderr
};

/// Runs `argv` (no shell) with stdin closed, in `cwd` when given, and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {});

/// The path of the vernier binary built alongside the tests.
std::string vernier_binary();

/// Runs the vernier binary built alongside the tests with `args`.
ProcessResult run_vernier(const std::vector<std::string>& args, const std::filesystem::path& cwd = {});

/// The demo model every test that needs a small real model runs (assets/models/demo.onnx).
/// Only in test programs, which define VN_SOURCE_DIR.
#ifdef VN_SOURCE_DIR
inline std::string demo_model() { return std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx"; }
#endif

/// A fresh empty folder under the system temp dir, removed with its contents when the object
/// dies. The one scratch folder of the tests.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  /// Number of entries in the folder (to check that no temporary file is left behind).
  size_t entry_count() const;

 private:
  std::filesystem::path path_;
};

/// Writes `bytes` to `path`.
void write_file(const std::filesystem::path& path, const std::string& bytes);
/// Reads a whole file.
std::string read_file(const std::filesystem::path& path);

}  // namespace vn::test
