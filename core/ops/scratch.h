// SPDX-License-Identifier: Apache-2.0
// Per-thread scratch buffers of the convolutions (conv.cpp, conv_direct.cpp) and the matrix
// product (sgemm_driver.cpp). Internal to core/ops.
#pragma once

#include <cstddef>
#include <memory>

namespace vn::ops {

// Scratch buffers up to this size are kept on their thread for the next use.
inline constexpr size_t kKeptScratchBytes = size_t{1} << 20;

/// What a thread's scratch buffer holds: one buffer per slot and element type, so that users
/// which nest never share one.
enum class ScratchSlot {
  kTile,          ///< a convolution's im2col tile of this thread, or conv_direct's padded input
  kSharedPanels,  ///< the im2col panels all threads read
  kWeights,       ///< packed or transformed convolution weights
  kGemmB,         ///< sgemm's packed chunk of B
  kGemmA,         ///< sgemm's packed transposed A
  kInterleaved,   ///< conv_direct's padded copies of eight depthwise channels, and them interleaved
  kCount,
};

/// A scratch buffer of at least n elements for this thread. Its users write every element they
/// read, so it is not zeroed; buffers up to `keep` bytes (1 MiB unless told) are kept for the
/// thread's next use of the slot, which spares small models the page faults of fresh memory,
/// while larger ones are freed when the Scratch goes, so that they never add to the peak memory
/// of a large model.
template <typename T>
class Scratch {
 public:
  Scratch(size_t n, ScratchSlot slot, size_t keep = kKeptScratchBytes)
      : buffer_(buffers()[static_cast<size_t>(slot)]), keep_(keep) {
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
    thread_local Buffer kept[static_cast<size_t>(ScratchSlot::kCount)];
    return kept;
  }
  Buffer& buffer_;
  size_t keep_;
};

}  // namespace vn::ops
