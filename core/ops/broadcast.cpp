// SPDX-License-Identifier: Apache-2.0
#include "core/ops/broadcast.h"

#include <algorithm>
#include <string>

namespace vn::ops {

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  return strides;
}

Result<Shape> broadcast_shapes(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t dim = 1;
    for (const Shape& s : shapes) {
      if (s.size() + i < rank) continue;
      const int64_t d = s[s.size() - rank + i];
      if (d == 1) continue;
      if (dim != 1 && d != dim) {
        std::string list;
        for (const Shape& t : shapes) list += (list.empty() ? "" : " and ") + shape_to_string(t);
        return make_error(StatusCode::kShapeMismatch,
                          "shapes {} cannot be broadcast together: dimension {} from the right is {} in one and {} in "
                          "another (each must be equal or 1)",
                          list, rank - i, dim, d);
      }
      dim = d;
    }
    out[i] = dim;
  }
  return out;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape shapes[] = {a, b};
  return broadcast_shapes(shapes);
}

bool broadcasts_to(const Shape& shape, const Shape& target) {
  if (shape.size() > target.size()) return false;
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && shape[i] != target[lead + i]) return false;
  }
  return true;
}

Shape broadcast_strides(const Shape& shape, const Shape& target) {
  const Shape dense = contiguous_strides(shape);
  Shape strides(target.size(), 0);
  const size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) strides[lead + i] = shape[i] == 1 ? 0 : dense[i];
  return strides;
}

StridedLoop::StridedLoop(const Shape& shape, std::span<const Shape> strides, std::span<const int64_t> bases)
    : operands_(strides.size()) {
  VN_CHECK(operands_ <= kMaxOperands, "StridedLoop over {} operands", operands_);
  for (size_t k = 0; k < operands_; ++k) {
    VN_CHECK(strides[k].size() == shape.size(), "operand {} has {} strides for rank {}", k, strides[k].size(),
             shape.size());
    bases_[k] = k < bases.size() ? bases[k] : 0;
  }
  numel_ = shape_numel(shape);
  if (numel_ == 0) return;

  // Merge from the innermost dimension outward: dimension d folds into the running block when
  // every operand's stride for d equals its block stride times the block's length.
  std::vector<int64_t> dims;                 // merged dims, innermost first
  std::vector<std::vector<int64_t>> merged;  // per operand, innermost first
  merged.resize(operands_);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    bool mergeable = !dims.empty();
    for (size_t k = 0; k < operands_ && mergeable; ++k) {
      mergeable = strides[k][d] == merged[k].back() * dims.back();
    }
    if (mergeable) {
      dims.back() *= shape[d];
    } else {
      dims.push_back(shape[d]);
      for (size_t k = 0; k < operands_; ++k) merged[k].push_back(strides[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (size_t k = 0; k < operands_; ++k) merged[k].push_back(0);
  }
  row_size_ = dims.front();
  rows_ = numel_ / row_size_;
  for (size_t k = 0; k < operands_; ++k) inner_strides_[k] = merged[k].front();
  const size_t outer_rank = dims.size() - 1;
  outer_dims_.resize(outer_rank);
  outer_strides_.resize(operands_ * outer_rank);
  for (size_t i = 0; i < outer_rank; ++i) {
    // Outer dims are stored outermost first; dims/merged are innermost first.
    const size_t src = dims.size() - 1 - i;
    outer_dims_[i] = dims[src];
    for (size_t k = 0; k < operands_; ++k) outer_strides_[k * outer_rank + i] = merged[k][src];
  }
}

}  // namespace vn::ops
