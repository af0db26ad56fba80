// SPDX-License-Identifier: Apache-2.0
// Helpers for the kernels that compute in double over tensors of any float type (float16,
// bfloat16, float32, float64): reading inputs as doubles, storing doubles into an output of the
// model's type, and the rounding that makes a float16 or bfloat16 computation take the steps of
// ONNX's definition of the op (its function body, where each step rounds to the element type).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/dtype.h"
#include "core/ir/tensor.h"
#include "core/ops/kernel_context.h"

namespace vn::ops {

/// True for float16, bfloat16, float32 and float64.
bool is_real_float(DType dtype);

/// Input i as doubles; kUnsupportedDType naming `what` unless it is one of the four float types.
Result<std::vector<double>> float_input(const KernelContext& ctx, size_t i, std::string_view what);

/// Allocates output i with `dtype` (a float type) and `shape` and stores `values` (one per element,
/// row-major) rounded to the nearest value of `dtype`.
Status set_float_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape, std::span<const double> values);

/// What one step of a computation in a float type does to a value computed exactly (in double).
using StepRound = double (*)(double);

/// The rounding of one step in `dtype`: to the nearest float16 or bfloat16 for those types, whose
/// every step loses more than the tolerance of a comparison; none for float32 and float64, whose
/// steps the kernels carry in double, rounding once at the output. A kernel calls it after each step
/// of the op's definition, so that a float16 model gets the value the standard's steps give.
StepRound step_round(DType dtype);

/// The ONNX element type `onnx_type` (an attribute such as softmax_precision or stash_type) when it
/// is one of the four float types; nullopt otherwise.
std::optional<DType> float_dtype_from_onnx(int64_t onnx_type);

}  // namespace vn::ops
