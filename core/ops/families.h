// SPDX-License-Identifier: Apache-2.0
// One registration function per reference-kernel family; register_all_ops calls them in the order
// of ONNX's category folders. Each registers its kernels at every since-version (≤ 17, the
// highest opset libonnx 1.12 knows) whose semantics it implements.
#pragma once

#include "core/ops/op_registry.h"

namespace vn::ops {

// generator/
void register_constant_ops(OpRegistry& registry);  ///< Constant, ConstantOfShape, Range
// logical/
void register_logical_ops(OpRegistry& registry);  ///< Equal, Less, Greater, Not, And, Or
// math/
void register_activation_ops(OpRegistry& registry);          ///< Relu, LeakyRelu, Sigmoid, Tanh, Clip, Elu, ...
void register_elementwise_unary_ops(OpRegistry& registry);   ///< Abs, Neg, Exp, Log, Sqrt, Reciprocal, Erf, ...
void register_elementwise_binary_ops(OpRegistry& registry);  ///< Add, Sub, Mul, Div, Pow
void register_variadic_ops(OpRegistry& registry);            ///< Max, Min, Sum, Mean
void register_gemm_ops(OpRegistry& registry);                ///< Gemm, MatMul
void register_softmax_ops(OpRegistry& registry);             ///< Softmax, LogSoftmax
// nn/
void register_conv_ops(OpRegistry& registry);           ///< Conv
void register_pool_ops(OpRegistry& registry);           ///< MaxPool, AveragePool, Global*Pool
void register_normalization_ops(OpRegistry& registry);  ///< BatchNormalization
void register_dropout_ops(OpRegistry& registry);        ///< Dropout
// reduction/
void register_reduce_ops(OpRegistry& registry);  ///< ReduceMean, ReduceSum, ReduceMax, ReduceMin
// tensor/
void register_shape_ops(OpRegistry& registry);         ///< Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Identity
void register_transpose_ops(OpRegistry& registry);     ///< Transpose
void register_concat_split_ops(OpRegistry& registry);  ///< Concat, Split
void register_gather_ops(OpRegistry& registry);        ///< Gather
void register_slice_ops(OpRegistry& registry);         ///< Slice
void register_cast_ops(OpRegistry& registry);          ///< Cast
void register_expand_ops(OpRegistry& registry);        ///< Expand
void register_where_ops(OpRegistry& registry);         ///< Where
void register_pad_ops(OpRegistry& registry);           ///< Pad

}  // namespace vn::ops
