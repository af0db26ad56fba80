// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "core/common/status.h"

namespace vn {

/// A whole file mapped read-only into memory (mmap, MAP_PRIVATE). The mapping lives as long as the
/// object; hold it through a shared_ptr to keep zero-copy tensor views over it valid (Tensor::view's
/// owner). Replacing or renaming the file on disk does not disturb an existing mapping; truncating it
/// in place does, which is why Vernier itself only ever replaces files by rename.
class MappedFile {
 public:
  /// Maps `path`. Returns kIoError "<path>: cannot open: <reason>" when the file is missing,
  /// unreadable or not a regular file, and kIoError when mmap fails. An empty file maps to
  /// data() == nullptr and size() == 0.
  static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }
  std::string_view bytes() const { return {reinterpret_cast<const char*>(data_), static_cast<size_t>(size_)}; }
  const std::filesystem::path& path() const { return path_; }

  /// Drops this process's copy of the pages wholly inside bytes [0, end): they stop counting in
  /// its resident memory, and a later read of them maps them in again from the file. For readers
  /// that go through a large file once.
  void release_before(uint64_t end) const;

 private:
  MappedFile() = default;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

/// Writes a file so that readers never see it half-written: bytes go to a temporary sibling
/// ("<name>.tmp-<pid>-<n>" in the same folder), and commit() flushes it to disk and renames it over
/// the destination. Destroying an uncommitted writer removes the temporary file and leaves the
/// destination untouched. Move-only; not thread-safe.
class AtomicFileWriter {
 public:
  /// Creates the temporary file. kIoError "<path>: cannot create: <reason>" on failure (missing
  /// folder, no permission).
  static Result<AtomicFileWriter> create(const std::filesystem::path& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  /// Appends `size` bytes. kIoError naming the destination on a short write (disk full).
  Status write(const void* data, size_t size);
  Status write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }
  /// Appends zero bytes until size() == offset; offset must not be below size() (kInternal).
  Status pad_to(uint64_t offset);
  /// Bytes written so far.
  uint64_t size() const { return size_; }
  /// The open descriptor of the temporary file, for streaming writers (protobuf's FileOutputStream).
  /// Bytes written through it are not counted by size().
  int fd() const { return fd_; }
  /// Where the bytes go until commit().
  const std::filesystem::path& temp_path() const { return temp_path_; }
  const std::filesystem::path& path() const { return path_; }

  /// fsyncs, closes and renames the temporary file over path(). After a failure the temporary file
  /// is removed. Calling it twice is a kInternal error.
  Status commit();

 private:
  AtomicFileWriter() = default;
  void discard();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Writes `bytes` to `path` through an AtomicFileWriter. Errors carry the path.
Status file_write_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace vn
