// SPDX-License-Identifier: Apache-2.0
// The model rewrite behind the reference backend's fp64 mode (ReferenceOptions::fp64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"

namespace vn::ref {

/// True for the float types fp64 mode computes in float64: float32, float16 and bfloat16.
bool widened_in_fp64(DType dtype);

/// A copy of `model` that computes in float64, in the main graph and every subgraph (subgraphs are
/// copied, never modified in place):
/// - float32, float16 and bfloat16 initializers and tensor attributes (Constant and
///   ConstantOfShape values) become float64; Constant's value_float(s) become a float64 `value`;
/// - declared types of inputs, outputs and value_info of those types become float64;
/// - attributes that make a node produce one of those types (Cast's `to`, the `dtype` of the
///   Random* and EyeLike/Bernoulli ops, the window ops' `output_datatype`) produce float64, and
///   ops whose float output type defaults to float32 (RandomNormal, RandomUniform, the window ops,
///   ConstantOfShape without a value) get an explicit float64 one.
/// Node order and indices are unchanged, so node indices of the copy are those of `model`.
/// kInvalidModel for a float attribute tensor that cannot be converted.
Result<Model> widen_model_to_fp64(const Model& model);

/// Input positions of `op_type` (default domain, kernel since-version `since_version`) that the
/// ONNX spec restricts to float32, such as Resize's scales; fp64 mode narrows them back at the
/// node. Empty for most ops.
std::vector<size_t> fp32_pinned_inputs(std::string_view op_type, int64_t since_version);

/// True for ops whose float outputs can only be float32 (DequantizeLinear, DynamicQuantizeLinear,
/// TfIdfVectorizer); fp64 mode widens those outputs after the node.
bool fp32_pinned_outputs(std::string_view op_type);

}  // namespace vn::ref
