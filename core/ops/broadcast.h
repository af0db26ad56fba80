// SPDX-License-Identifier: Apache-2.0
// Numpy broadcasting and strided iteration, shared by the elementwise, reduction and data-movement
// kernels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/ir/tensor.h"

namespace vn::ops {

/// Row-major element strides of a dense tensor of `shape`.
Shape contiguous_strides(const Shape& shape);

/// The numpy (multidirectional) broadcast of `shapes`. Fails with kShapeMismatch naming the shapes
/// and the first conflicting dimension. The error carries no node; callers tag it.
Result<Shape> broadcast_shapes(std::span<const Shape> shapes);
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

/// True when `shape` broadcasts to `target` unidirectionally (ONNX Gemm's C, Expand's input).
bool broadcasts_to(const Shape& shape, const Shape& target);

/// Strides for reading a dense tensor of `shape` as if broadcast to `target` (right-aligned, 0 on
/// every broadcast dimension). Precondition: broadcasts_to(shape, target).
Shape broadcast_strides(const Shape& shape, const Shape& target);

/// A loop over the elements of a dense iteration space `shape` in row-major order that tracks the
/// offset of up to kMaxOperands operands, each with its own element strides (0 for a broadcast
/// dimension, any value for a transposed or sliced view) and base offset.
///
/// Dimensions of size 1 are dropped and adjacent dimensions merged wherever every operand allows
/// it, so the innermost loop ("row") is as long as possible. Kernels call for_each_row and process
/// one row with a plain loop or an Eigen map, using inner_stride() to pick a contiguous (1) or
/// broadcast (0) fast path; the callback is a template parameter, so nothing is called per element.
class StridedLoop {
 public:
  static constexpr size_t kMaxOperands = 4;

  /// `strides[k]` has one entry per dimension of `shape`; `bases` (optional) the start offset of
  /// each operand.
  StridedLoop(const Shape& shape, std::span<const Shape> strides, std::span<const int64_t> bases = {});

  /// Total elements of the iteration space (0 when a dimension is 0).
  int64_t numel() const { return numel_; }
  /// Length of one innermost row.
  int64_t row_size() const { return row_size_; }
  /// Number of rows (numel / row_size).
  int64_t rows() const { return rows_; }
  /// Stride of operand k along the row.
  int64_t inner_stride(size_t k) const { return inner_strides_[k]; }
  /// Offset of operand k at the first element (its base).
  int64_t base(size_t k) const { return bases_[k]; }

  /// Calls f(dense_offset, offsets) once per row, where dense_offset is the row's first position
  /// in the dense iteration space and offsets[k] the element offset of operand k there.
  template <typename F>
  void for_each_row(F&& f) const {
    for_rows(0, rows_, std::forward<F>(f));
  }

  /// for_each_row restricted to rows [first, last): lets threads share the rows out.
  template <typename F>
  void for_rows(int64_t first, int64_t last, F&& f) const {
    if (numel_ == 0 || first >= last) return;
    std::array<int64_t, kMaxOperands> offsets = bases_;
    const size_t outer_rank = outer_dims_.size();
    std::vector<int64_t> counter(outer_rank, 0);
    for (size_t d = outer_rank, rest = static_cast<size_t>(first); d-- > 0;) {
      counter[d] = static_cast<int64_t>(rest % static_cast<size_t>(outer_dims_[d]));
      rest /= static_cast<size_t>(outer_dims_[d]);
      for (size_t k = 0; k < operands_; ++k) offsets[k] += outer_strides_[k * outer_rank + d] * counter[d];
    }
    for (int64_t row = first; row < last; ++row) {
      f(row * row_size_, static_cast<const int64_t*>(offsets.data()));
      for (size_t d = outer_rank; d-- > 0;) {
        ++counter[d];
        for (size_t k = 0; k < operands_; ++k) offsets[k] += outer_strides_[k * outer_rank + d];
        if (counter[d] < outer_dims_[d]) break;
        for (size_t k = 0; k < operands_; ++k) offsets[k] -= outer_strides_[k * outer_rank + d] * outer_dims_[d];
        counter[d] = 0;
      }
    }
  }

 private:
  size_t operands_ = 0;
  int64_t numel_ = 0;
  int64_t row_size_ = 1;
  int64_t rows_ = 0;
  std::array<int64_t, kMaxOperands> inner_strides_{};
  std::array<int64_t, kMaxOperands> bases_{};
  std::vector<int64_t> outer_dims_;
  std::vector<int64_t> outer_strides_;  // [operand * outer_rank + dim]
};

}  // namespace vn::ops
