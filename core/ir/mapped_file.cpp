// SPDX-License-Identifier: Apache-2.0
#include "core/ir/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace vn {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// MappedFile
// ---------------------------------------------------------------------------------------------

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(StatusCode::kIoError, "{}: cannot open: {}", path.string(), errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(StatusCode::kIoError, "{}: cannot open: {}", path.string(), errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(StatusCode::kIoError, "{}: cannot open: not a regular file", path.string());
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(file->size_), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return make_error(StatusCode::kIoError, "{}: cannot map {} bytes: {}", path.string(), file->size_,
                        errno_text(err));
    }
    file->data_ = static_cast<const std::byte*>(p);
  }
  // The mapping stays valid after the descriptor is closed.
  ::close(fd);
  return std::shared_ptr<const MappedFile>(std::move(file));
}

void MappedFile::release_before(uint64_t end) const {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  end = std::min(end, size_) / page * page;
  // Advice only: a failure leaves the pages resident, which costs memory, not correctness.
  if (data_ && end > 0) ::madvise(const_cast<std::byte*>(data_), static_cast<size_t>(end), MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), static_cast<size_t>(size_));
}

// ---------------------------------------------------------------------------------------------
// AtomicFileWriter
// ---------------------------------------------------------------------------------------------

Result<AtomicFileWriter> AtomicFileWriter::create(const std::filesystem::path& path) {
  static std::atomic<uint64_t> counter{0};
  AtomicFileWriter w;
  w.path_ = path;
  w.temp_path_ = path;
  w.temp_path_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  w.fd_ = ::open(w.temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w.fd_ < 0) return make_error(StatusCode::kIoError, "{}: cannot create: {}", path.string(), errno_text(errno));
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_path_.c_str());
}

Status AtomicFileWriter::write(const void* data, size_t size) {
  if (fd_ < 0) return make_error(StatusCode::kInternal, "{}: write after commit", path_.string());
  const char* p = static_cast<const char*>(data);
  size_t left = size;
  while (left > 0) {
    // Linux writes at most ~2 GiB per call; larger buffers loop.
    const ssize_t n = ::write(fd_, p, left < (size_t{1} << 30) ? left : (size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(StatusCode::kIoError, "{}: write failed: {}", path_.string(), errno_text(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  size_ += size;
  return Status::OK();
}

Status AtomicFileWriter::pad_to(uint64_t offset) {
  if (offset < size_) {
    return make_error(StatusCode::kInternal, "{}: pad to {} below the current size {}", path_.string(), offset, size_);
  }
  static const char kZeros[4096] = {};
  while (size_ < offset) {
    const uint64_t n = offset - size_ < sizeof(kZeros) ? offset - size_ : sizeof(kZeros);
    VN_RETURN_IF_ERROR(write(kZeros, static_cast<size_t>(n)));
  }
  return Status::OK();
}

Status AtomicFileWriter::commit() {
  if (fd_ < 0) return make_error(StatusCode::kInternal, "{}: commit called twice", path_.string());
  if (::fsync(fd_) != 0) {
    const int err = errno;
    discard();
    return make_error(StatusCode::kIoError, "{}: fsync failed: {}", path_.string(), errno_text(err));
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_path_.c_str());
    return make_error(StatusCode::kIoError, "{}: close failed: {}", path_.string(), errno_text(err));
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_path_.c_str());
    return make_error(StatusCode::kIoError, "{}: cannot rename the temporary file into place: {}", path_.string(),
                      errno_text(err));
  }
  return Status::OK();
}

Status file_write_atomic(const std::filesystem::path& path, std::string_view bytes) {
  VN_ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::create(path));
  VN_RETURN_IF_ERROR(w.write(bytes));
  return w.commit();
}

}  // namespace vn
