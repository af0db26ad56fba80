// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the looping kernels (Loop, Scan): the checks on a body's signature, slicing a
// tensor along an axis, and stacking one tensor per iteration into a scan output.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"
#include "core/ir/tensor.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// The graph attribute `name`, or kInvalidModel when it is missing (or not a graph).
Result<const Graph*> required_body(const KernelContext& ctx, const char* name);

/// Checks that `body` declares `inputs` inputs and `outputs` outputs; kInvalidModel naming the
/// attribute (`what`) otherwise.
Status check_body_signature(const KernelContext& ctx, const Graph& body, const char* what, size_t inputs,
                            size_t outputs);

/// Reads a one-element bool tensor (If's cond, a Loop condition); kInvalidModel otherwise.
Result<bool> read_condition(const KernelContext& ctx, const Tensor& t, const char* what);

/// The sub-tensor of `t` at `index` along `axis`, one rank lower (a copy). Requires
/// 0 <= axis < rank and 0 <= index < t.dim(axis).
Tensor slice_along(const Tensor& t, int64_t axis, int64_t index);

/// Collects one tensor per iteration and stacks them along a new axis: a Loop or Scan output.
/// Elements are held by reference (tensors share storage), so a body that returns the same large
/// tensor every iteration costs no copy until stack().
class Stacker {
 public:
  /// `what` names the output in errors ("scan output 'y'").
  explicit Stacker(std::string what) : what_(std::move(what)) {}

  /// Appends one iteration's element. kShapeMismatch when its dtype or shape differs from the
  /// first element's, or when the stacked tensor would exceed the limit on one tensor
  /// (kMaxTensorBytes), so a runaway loop fails as soon as its output cannot exist.
  Status append(const KernelContext& ctx, const Tensor& element);

  /// Elements appended so far.
  int64_t count() const { return static_cast<int64_t>(parts_.size()); }

  /// The elements stacked along a new axis `axis` (0 <= axis <= element rank; normalize first),
  /// first element first, or last element first when `reverse`. With no elements, the dtype and
  /// element shape come from `declared` (unknown dims count as 0; unknown rank gives rank 1);
  /// kInvalidModel when it declares no dtype.
  Result<Tensor> stack(const KernelContext& ctx, int64_t axis, bool reverse, const ValueInfo& declared) const;

  /// The first element's shape (meaningful when count() > 0).
  const Shape& element_shape() const { return parts_.front().shape(); }

 private:
  std::string what_;
  std::vector<Tensor> parts_;
};

}  // namespace vn::ops
