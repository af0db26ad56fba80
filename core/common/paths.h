// SPDX-License-Identifier: Apache-2.0
// Turning names that come from models and files (tensor, layer and node names, replay keys) into
// file names that cannot leave the folder they are meant for. Issue 9.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace vn {

/// The longest file name safe_file_name returns, in bytes: below the 255 of common file systems,
/// leaving room for a suffix and an extension added by the caller.
inline constexpr size_t kMaxSafeFileNameBytes = 200;

/// A single path component derived from `name`, usable as a file name on any POSIX file system:
/// - ASCII letters, digits, '.', '-', '_' and '+' are kept; every other byte ('/', '\\', ':', NUL,
///   control characters, spaces, non-ASCII bytes) becomes '_';
/// - a result made only of dots ("", ".", "..") gets a leading '_', so it never names the folder or
///   its parent, and a leading '-' becomes '_' so that the name is never read as an option;
/// - names longer than kMaxSafeFileNameBytes are cut and end with '~' and 16 hex digits of a hash
///   of the whole name, so that long names differing only at their end stay distinct.
/// Distinct names can map to the same file name ("a/b" and "a_b"); callers that write one file per
/// name must detect the collision (see safe_join's contract and never overwrite).
std::string safe_file_name(std::string_view name);

/// `dir / safe_file_name(name)`: a path that is always directly inside `dir`.
std::filesystem::path safe_join(const std::filesystem::path& dir, std::string_view name);

/// Refuses to replace a user's file: kInvalidArgument "<what> <path> already exists; pass --force to
/// overwrite it" when `path` exists (as anything, a dangling symbolic link included) and `force` is
/// false; OK otherwise.
Status check_overwrite(const std::filesystem::path& path, bool force, std::string_view what);

}  // namespace vn
