// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/ir/dtype.h"

namespace vn {

/// A concrete shape: every dimension known and non-negative. Rank 0 is a scalar.
using Shape = std::vector<int64_t>;

/// The largest tensor Vernier allocates: 2^36 bytes (64 GiB). A declared size above it in a file
/// header or model is refused before any allocation.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 36;

/// Sets the process heap's thresholds for a program that runs networks: allocations under 4 MiB
/// come from the heap, and up to 16 MiB freed at its top is kept for the next inference. Call
/// once, at program start, before any thread. glibc would otherwise adapt both thresholds to the
/// sizes freed so far and give pages back between layers, which a small network pays for in page
/// faults on every inference. Tensors of 1 MiB and more are mapped on their own either way.
void configure_heap_for_tensors();

/// While at least one lives (in any thread; they nest), tensors from 64 KiB instead of 1 MiB are
/// mapped on their own rather than taken from the heap. For work that interleaves runs on several
/// threads with long-lived small allocations, as a layer-wise comparison does: there, freed
/// tensors on the heap fragment it, and it grows past the tensors alive. Plain runs go without:
/// mapping mid-size tensors slows networks of many such tensors (MobileNetV2, EfficientNet-B0).
class MapSmallTensors {
 public:
  MapSmallTensors();
  ~MapSmallTensors();
  MapSmallTensors(const MapSmallTensors&) = delete;
  MapSmallTensors& operator=(const MapSmallTensors&) = delete;
};

/// Number of elements; 1 for a scalar. Assumes a validated shape.
int64_t shape_numel(const Shape& shape);
/// Validates dims (non-negative, product and byte size within kMaxTensorBytes) and returns the count.
Result<int64_t> shape_numel_checked(const Shape& shape, DType dtype);
/// "(1, 3, 224, 224)" in numpy's spelling; "()" for a scalar.
std::string shape_to_string(const Shape& shape);

/// Calls `f.template operator()<T>()` with T the C++ element type of `dtype`.
/// Usage: dispatch_dtype(t.dtype(), [&]<typename T>() { ... });
template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
#define VN_DTYPE(e, name, ctype, onnx, descr, size) \
  case DType::e: return f.template operator()<ctype>();
#include "core/ir/dtype_list.inc"
#undef VN_DTYPE
  }
  VN_CHECK(false, "unknown dtype {}", static_cast<int>(dtype));
}

/// A dense, C-ordered, typed n-dimensional array. Storage is shared between copies (copying a
/// Tensor is cheap and aliases the data); use clone() for a deep copy. Owned storage is 64-byte
/// aligned and zero-initialized. A tensor may also be a zero-copy view over memory it does not own
/// (a memory-mapped file), kept alive through `owner`; such views are read-only.
/// A default-constructed Tensor is undefined (defined() is false).
class Tensor {
 public:
  Tensor() = default;

  /// Allocates a zero-filled tensor; fails for negative dims or sizes over kMaxTensorBytes.
  static Result<Tensor> create(DType dtype, Shape shape);
  /// create() without the zero fill, for a writer that sets every element before anything reads
  /// one: the contents start unspecified. Strings are constructed empty as by create().
  static Result<Tensor> create_for_overwrite(DType dtype, Shape shape);
  /// Allocates a zero-filled tensor whose shape is already known to be valid; aborts otherwise.
  Tensor(DType dtype, Shape shape);
  /// A read-only view over `data` (at least numel * dtype_size bytes), kept alive by `owner`.
  /// Not for kString.
  static Tensor view(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data);

  /// A tensor holding a copy of `values` with the given shape (numel must match).
  template <typename T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, std::vector<T>{value});
  }

  bool defined() const { return storage_ != nullptr; }
  /// Whether the data is a mapping of its own (large tensors; see MapSmallTensors), not heap.
  bool mapped() const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool writable() const;
  /// Whether this Tensor is the only holder of its storage (no copy, view or reshape shares it).
  bool sole_owner() const;
  /// Whether this Tensor and `other` hold one storage that nothing else holds (a kernel's output
  /// written over its dying input, KernelContext::allocate_output_elementwise).
  bool shares_storage_only_with(const Tensor& other) const;

  const void* raw() const;
  /// Aborts on a read-only view: kernels write only into tensors they allocated.
  void* mutable_raw();

  template <typename T>
  const T* data() const {
    check_type(dtype_of<T>);
    return static_cast<const T*>(raw());
  }
  template <typename T>
  T* mutable_data() {
    check_type(dtype_of<T>);
    return static_cast<T*>(mutable_raw());
  }
  template <typename T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  template <typename T>
  std::span<T> mutable_values() {
    return {mutable_data<T>(), static_cast<size_t>(numel_)};
  }

  /// A deep, writable copy.
  Tensor clone() const;
  /// The same storage seen with another shape of the same element count; aborts otherwise.
  Tensor reshaped(Shape shape) const;

  /// Element-wise equality of dtype, shape and bytes (strings compared by value; NaNs by bits).
  bool same_as(const Tensor& other) const;

 private:
  struct Storage;
  void check_type(DType requested) const;
  static Result<Tensor> allocate(DType dtype, Shape shape, bool zero);

  DType dtype_ = DType::kFloat32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
};

/// Converts every element to `to` (numpy astype semantics: float→int truncates toward zero,
/// anything→bool is "non-zero"). Strings convert only to strings.
Result<Tensor> tensor_cast(const Tensor& tensor, DType to);

/// Reads an integer tensor (int32/int64/uint8...) as int64 values, e.g. a Reshape's shape input.
Result<std::vector<int64_t>> tensor_to_int64s(const Tensor& tensor);

/// Reads any real-valued tensor as doubles (bool → 0/1). Fails for strings.
Result<std::vector<double>> tensor_to_doubles(const Tensor& tensor);

template <typename T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t(dtype_of<T>, std::move(shape));
  VN_CHECK(static_cast<size_t>(t.numel()) == values.size(), "from_vector: {} values for {} elements", values.size(),
           t.numel());
  T* out = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace vn
