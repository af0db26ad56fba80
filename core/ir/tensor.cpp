// SPDX-License-Identifier: Apache-2.0
#include "core/ir/tensor.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <vector>

#include <Eigen/Core>

namespace vn {

namespace {

// Buffers of at least this size are mapped straight from the kernel rather than taken from the
// heap. On the heap, a layer-by-layer interpreter's peak memory would grow with fragmentation
// instead of following the live tensors. Smaller ones stay on the heap: mapping costs page
// faults, and unmapping memory that several threads touched a TLB shootdown on every core
// (mapping tensors from 256 KiB, or 64 KiB, made plain runs of MobileNetV2 and EfficientNet-B0
// 10-25% slower here, even with freed buffers kept for reuse).
constexpr size_t kMapThreshold = size_t{1} << 20;
// The threshold while a MapSmallTensors lives (measured on layer-wise comparisons: ResNet-18's
// peak 125-131 -> 114 MiB, the Transformer encoder's 39-40 -> 34.5; from 256 KiB, 119 and 39).
constexpr size_t kSmallMapThreshold = size_t{64} << 10;
std::atomic<int> small_map_scopes{0};

// Freed mapped buffers kept for the next tensor of about the same size (a network allocates the
// same few activation sizes over and over): reuse costs a memset, or nothing for a tensor about to
// be overwritten, instead of a page fault per 4 KiB. A tensor takes the smallest kept buffer of its
// size up to 1.5 times it: DenseNet-121's concatenations grow by 32 channels a layer, and as
// exact sizes they cycled through the kept buffers, each unmapped before its next use (7 fresh
// mappings of 1-3 MB per inference; 12.5 MB faulted in). Bounded, the oldest unmapped first: 16 MiB kept,
// or more while live and kept buffers together stay within twice the most mapped bytes ever live
// at once. A fixed 16 MiB let a transformer's large activations evict each other at every layer
// (Whisper's 51 MiB attention scores and 9 MiB MLP activations mapped afresh each layer: 553 ->
// 431 ms a run at 1 thread, peak memory 146 -> 155 MiB).
class MapCache {
 public:
  static constexpr size_t kMinBytes = size_t{16} << 20;
  static constexpr size_t kMaxBytesSmall = size_t{4} << 20;
  // A kept buffer serves a tensor of at least 2/3 of its size.
  static constexpr size_t kSlackNum = 3, kSlackDen = 2;

  /// A buffer of at least `bytes`, its first `bytes` zeroed when `zero` (fresh mappings always
  /// are), or nullptr when the kernel has none to map. `*size` is the buffer's size, to give back.
  void* take(size_t bytes, bool zero, size_t* size) {
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The smallest fit, the most recently kept among equals.
      auto best = kept_.rend();
      for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
        if (it->bytes >= bytes && it->bytes / kSlackNum * kSlackDen <= bytes &&
            (best == kept_.rend() || it->bytes < best->bytes)) {
          best = it;
          if (it->bytes == bytes) break;
        }
      }
      if (best != kept_.rend()) {
        p = best->data;
        *size = best->bytes;
        kept_bytes_ -= best->bytes;
        add_live(best->bytes);
        kept_.erase(std::next(best).base());
      }
    }
    if (p != nullptr) {
      if (zero) std::memset(p, 0, bytes);
      return p;
    }
    *size = bytes;
    // Populated at once: every page of a tensor is written, and faulting them in one by one cost
    // twice as much here (ResNet-18 layer-wise: 8.6 thousand faults per inference, 2.8 with it).
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    add_live(bytes);
    return p;
  }

  /// Keeps the mapped buffer `p` of `bytes` for reuse, unmapping the oldest kept ones to make room.
  void give(void* p, size_t bytes) {
    std::vector<Buffer> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      live_bytes_ -= bytes;
      // Kept bytes allowed: 16 MiB, or up to where live and kept reach twice the live peak. While
      // mid-size tensors are mapped (a layer-wise comparison), many more buffers pass through
      // here, and two runs' worth of kept ones raised the peak: keep fewer.
      const size_t room = 2 * live_peak_ > live_bytes_ ? 2 * live_peak_ - live_bytes_ : 0;
      const bool small = small_map_scopes.load(std::memory_order_relaxed) > 0;
      const size_t cap = small ? kMaxBytesSmall : std::max(kMinBytes, room);
      if (bytes <= cap) {
        while (kept_bytes_ + bytes > cap) {
          evicted.push_back(kept_.front());
          kept_bytes_ -= kept_.front().bytes;
          kept_.pop_front();
        }
        kept_.push_back({p, bytes});
        kept_bytes_ += bytes;
      } else {
        evicted.push_back({p, bytes});
      }
    }
    for (const Buffer& b : evicted) munmap(b.data, b.bytes);
  }

 private:
  struct Buffer {
    void* data;
    size_t bytes;
  };
  /// Counts `bytes` more as live; under mutex_.
  void add_live(size_t bytes) {
    live_bytes_ += bytes;
    live_peak_ = std::max(live_peak_, live_bytes_);
  }

  std::mutex mutex_;
  std::deque<Buffer> kept_;  // oldest first
  size_t kept_bytes_ = 0;
  size_t live_bytes_ = 0;  // mapped buffers handed out and not given back
  size_t live_peak_ = 0;   // the most of them at once
};

// Never destroyed: tensors in static storage may be freed after it would be.
MapCache& map_cache() {
  static auto* cache = new MapCache;
  return *cache;
}

}  // namespace

struct Tensor::Storage {
  void* data = nullptr;
  size_t mapped_bytes = 0;              // non-zero when data came from mmap
  bool writable = false;
  DType dtype = DType::kFloat32;
  int64_t count = 0;                    // elements constructed (strings only)
  std::shared_ptr<const void> owner;    // keeps a foreign buffer alive (views)

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (!owner && data) {
      if (dtype == DType::kString) {
        auto* strings = static_cast<std::string*>(data);
        for (int64_t i = 0; i < count; ++i) strings[i].~basic_string();
      }
      if (mapped_bytes) {
        map_cache().give(data, mapped_bytes);
      } else {
        std::free(data);
      }
    }
  }
};

void configure_heap_for_tensors() {
  // Setting either threshold turns glibc's adaptation off for both. Under 4 MiB, Eigen's 1 MiB
  // product buffers stay on the heap (at 1 MiB they were mapped and unmapped for every MatMul of
  // the Transformer encoder: ~860 page faults per inference); above it, a model's large protobuf
  // strings are mapped, so that loading does not leave the heap fragmented (at 32 MiB ResNet-18's
  // peak grew from 80 to 112 MiB). 16 MiB kept at the top covers a small network's buffers (the
  // 2 ms detection head faulted ~200 pages back in on every inference under the adaptive trim).
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
}

MapSmallTensors::MapSmallTensors() { small_map_scopes.fetch_add(1, std::memory_order_relaxed); }
MapSmallTensors::~MapSmallTensors() { small_map_scopes.fetch_sub(1, std::memory_order_relaxed); }

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<int64_t> shape_numel_checked(const Shape& shape, DType dtype) {
  uint64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) return make_error(StatusCode::kShapeMismatch, "shape {} has a negative dimension", shape_to_string(shape));
    if (d == 0) zero = true;
  }
  if (zero) return int64_t{0};
  const uint64_t limit = kMaxTensorBytes / dtype_size(dtype);
  for (int64_t d : shape) {
    // Checked before multiplying so that a hostile shape cannot overflow the product.
    if (static_cast<uint64_t>(d) > limit / n) {
      return make_error(StatusCode::kShapeMismatch, "shape {} of {} is larger than the {} GiB limit on one tensor",
                        shape_to_string(shape), dtype_name(dtype), kMaxTensorBytes >> 30);
    }
    n *= static_cast<uint64_t>(d);
  }
  return static_cast<int64_t>(n);
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

Result<Tensor> Tensor::create(DType dtype, Shape shape) { return allocate(dtype, std::move(shape), true); }

Result<Tensor> Tensor::create_for_overwrite(DType dtype, Shape shape) {
  return allocate(dtype, std::move(shape), false);
}

Result<Tensor> Tensor::allocate(DType dtype, Shape shape, bool zero) {
  VN_ASSIGN_OR_RETURN(int64_t n, shape_numel_checked(shape, dtype));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = n;
  auto storage = std::make_shared<Storage>();
  storage->dtype = dtype;
  storage->writable = true;
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  const size_t rounded = ((bytes + 63) / 64) * 64;
  const size_t map_threshold =
      small_map_scopes.load(std::memory_order_relaxed) > 0 ? kSmallMapThreshold : kMapThreshold;
  if (rounded >= map_threshold && dtype != DType::kString) {
    size_t mapped = 0;
    storage->data = map_cache().take(rounded, zero, &mapped);
    if (storage->data != nullptr) storage->mapped_bytes = mapped;
  } else {
    storage->data = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  }
  if (!storage->data) {
    return make_error(StatusCode::kIoError, "out of memory allocating {} bytes for a {} tensor of shape {}", bytes,
                      dtype_name(dtype), shape_to_string(t.shape_));
  }
  if (dtype == DType::kString) {
    auto* strings = static_cast<std::string*>(storage->data);
    for (int64_t i = 0; i < n; ++i) new (&strings[i]) std::string();
    storage->count = n;
  } else if (!storage->mapped_bytes && zero) {
    std::memset(storage->data, 0, rounded == 0 ? 64 : rounded);
  }
  t.storage_ = std::move(storage);
  return t;
}

Tensor::Tensor(DType dtype, Shape shape) {
  Result<Tensor> r = create(dtype, std::move(shape));
  VN_CHECK(r.ok(), "{}", r.status().to_string());
  *this = std::move(r).value();
}

Tensor Tensor::view(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data) {
  VN_CHECK(dtype != DType::kString, "string tensors cannot be views");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  auto storage = std::make_shared<Storage>();
  storage->dtype = dtype;
  storage->data = const_cast<void*>(data);
  storage->writable = false;
  storage->owner = owner ? std::move(owner) : std::make_shared<int>(0);
  t.storage_ = std::move(storage);
  return t;
}

bool Tensor::writable() const { return storage_ && storage_->writable; }

bool Tensor::sole_owner() const { return storage_ && storage_.use_count() == 1; }

bool Tensor::shares_storage_only_with(const Tensor& other) const {
  return storage_ && storage_ == other.storage_ && storage_.use_count() == 2;
}

bool Tensor::mapped() const { return storage_ && storage_->mapped_bytes != 0; }

const void* Tensor::raw() const {
  VN_CHECK(storage_ != nullptr, "access to an undefined tensor");
  return storage_->data;
}

void* Tensor::mutable_raw() {
  VN_CHECK(storage_ != nullptr, "access to an undefined tensor");
  VN_CHECK(storage_->writable, "write to a read-only tensor view");
  return storage_->data;
}

void Tensor::check_type(DType requested) const {
  VN_CHECK(requested == dtype_, "tensor of {} accessed as {}", dtype_name(dtype_), dtype_name(requested));
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, shape_);
  if (dtype_ == DType::kString) {
    auto src = values<std::string>();
    auto dst = t.mutable_values<std::string>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (nbytes() > 0) {
    std::memcpy(t.mutable_raw(), raw(), nbytes());
  }
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  VN_CHECK(shape_numel(shape) == numel_, "reshape of {} elements to {}", numel_, shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

bool Tensor::same_as(const Tensor& other) const {
  if (defined() != other.defined()) return false;
  if (!defined()) return true;
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::kString) {
    auto a = values<std::string>();
    auto b = other.values<std::string>();
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  return nbytes() == 0 || std::memcmp(raw(), other.raw(), nbytes()) == 0;
}

namespace {

template <typename To, typename From>
To convert_element(From v) {
  if constexpr (is_narrow_v<To>) {
    // Cast's rules with its defaults (core/ir/narrow_types.h): integers wrap into int4/int2.
    if constexpr (std::is_integral_v<From> && !std::is_same_v<From, uint64_t>) {
      return To::from_bits(narrow_encode_int(To::kFormat, static_cast<int64_t>(v)));
    } else if constexpr (std::is_same_v<From, uint64_t>) {
      // Modular conversion keeps the low bits, which is all that wrapping reads.
      return narrow_is_integer(To::kFormat) ? To::from_bits(narrow_encode_int(To::kFormat, static_cast<int64_t>(v)))
                                            : To::from_double(static_cast<double>(v));
    } else {
      return To::from_double(static_cast<double>(v));
    }
  } else if constexpr (is_narrow_v<From>) {
    // Every narrow value is exact in double (and in float): one rounding, into To.
    return convert_element<To>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(v) != 0.0;
  } else if constexpr (std::is_same_v<To, Eigen::half> || std::is_same_v<To, Eigen::bfloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    // Float to int: truncate toward zero as numpy does; NaN and out-of-range values are
    // undefined in C++, so they are pinned to 0 / the type's limits instead.
    const double d = static_cast<double>(v);
    if (std::isnan(d)) return To(0);
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

Result<Tensor> tensor_cast(const Tensor& tensor, DType to) {
  if (!tensor.defined()) return make_error(StatusCode::kInternal, "cast of an undefined tensor");
  if (tensor.dtype() == to) return tensor;
  if (tensor.dtype() == DType::kString || to == DType::kString) {
    return make_error(StatusCode::kUnsupportedDType, "cannot cast {} to {}", dtype_name(tensor.dtype()), dtype_name(to));
  }
  VN_ASSIGN_OR_RETURN(Tensor out, Tensor::create(to, tensor.shape()));
  dispatch_dtype(tensor.dtype(), [&]<typename From>() {
    if constexpr (!std::is_same_v<From, std::string>) {
      dispatch_dtype(to, [&]<typename To>() {
        if constexpr (!std::is_same_v<To, std::string>) {
          const From* src = tensor.data<From>();
          To* dst = out.mutable_data<To>();
          for (int64_t i = 0; i < tensor.numel(); ++i) dst[i] = convert_element<To>(src[i]);
        }
      });
    }
  });
  return out;
}

Result<std::vector<int64_t>> tensor_to_int64s(const Tensor& tensor) {
  if (!tensor.defined()) return make_error(StatusCode::kInternal, "read of an undefined tensor");
  if (!dtype_is_integer(tensor.dtype())) {
    return make_error(StatusCode::kUnsupportedDType, "expected an integer tensor, got {}", dtype_name(tensor.dtype()));
  }
  std::vector<int64_t> out(static_cast<size_t>(tensor.numel()));
  dispatch_dtype(tensor.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* p = tensor.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
    }
  });
  return out;
}

Result<std::vector<double>> tensor_to_doubles(const Tensor& tensor) {
  if (!tensor.defined()) return make_error(StatusCode::kInternal, "read of an undefined tensor");
  if (tensor.dtype() == DType::kString) return make_error(StatusCode::kUnsupportedDType, "expected numbers, got strings");
  std::vector<double> out(static_cast<size_t>(tensor.numel()));
  dispatch_dtype(tensor.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      const T* p = tensor.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
    }
  });
  return out;
}

}  // namespace vn
