// SPDX-License-Identifier: Apache-2.0
#include "core/common/paths.h"

#include <algorithm>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "core/common/hash.h"

namespace vn {
namespace {

bool kept(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_' || c == '+';
}


}  // namespace

std::string safe_file_name(std::string_view name) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxSafeFileNameBytes));
  for (unsigned char c : name) out.push_back(kept(c) ? static_cast<char>(c) : '_');
  if (out.find_first_not_of('.') == std::string::npos) out.insert(out.begin(), '_');
  if (out[0] == '-') out[0] = '_';
  if (out.size() > kMaxSafeFileNameBytes) {
    const std::string tail = fmt::format("~{:016x}", fnv1a(name));
    out.resize(kMaxSafeFileNameBytes - tail.size());
    out += tail;
  }
  return out;
}

std::filesystem::path safe_join(const std::filesystem::path& dir, std::string_view name) {
  return dir / safe_file_name(name);
}

Status check_overwrite(const std::filesystem::path& path, bool force, std::string_view what) {
  if (force) return Status::OK();
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    return make_error(StatusCode::kInvalidArgument, "{} {} already exists; pass --force to overwrite it", what,
                      path.string());
  }
  return Status::OK();
}

}  // namespace vn
