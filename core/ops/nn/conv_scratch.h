// SPDX-License-Identifier: Apache-2.0
// Per-thread scratch buffers of the Conv kernels (conv.cpp, conv_direct.cpp). Internal to them.
#pragma once

#include <cstddef>
#include <memory>

namespace vn::ops {

// Scratch buffers up to this size are kept on their thread for the next use.
inline constexpr size_t kKeptScratchBytes = size_t{1} << 20;

/// A scratch buffer of at least n elements for this thread. Its users write every element they
/// read, so it is not zeroed; buffers up to `keep` bytes (1 MiB unless told) are kept for the
/// thread's next convolution, which spares small models the page faults of fresh memory, while
/// larger ones are freed when the Scratch goes, so that they never add to the peak memory of a
/// large model. `slot` 0 is the thread's im2col tile (or conv_direct's padded input), 1 the
/// im2col all threads read, 2 weights.
template <typename T>
class Scratch {
 public:
  Scratch(size_t n, int slot, size_t keep = kKeptScratchBytes) : buffer_(buffers()[slot]), keep_(keep) {
    if (buffer_.size < n) {
      buffer_.data.reset();  // the old one goes first, so that the two never coexist
      buffer_.data = std::make_unique_for_overwrite<T[]>(n);
      buffer_.size = n;
    }
  }
  ~Scratch() {
    if (buffer_.size * sizeof(T) > keep_) buffer_ = Buffer();
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return buffer_.data.get(); }

 private:
  struct Buffer {
    std::unique_ptr<T[]> data;
    size_t size = 0;
  };
  static Buffer* buffers() {
    thread_local Buffer kept[3];
    return kept;
  }
  Buffer& buffer_;
  size_t keep_;
};

}  // namespace vn::ops
