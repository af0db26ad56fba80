// SPDX-License-Identifier: Apache-2.0
// Internal to onnx_tensor_proto.cpp, onnx_proto.cpp and onnx_checks.cpp: the helpers the tensor,
// graph and check halves of the protobuf conversions share.
#pragma once

#include <string>

#include "core/common/status.h"
#include "core/ir/onnx_proto.h"
#include "core/ir/tensor.h"

namespace vn::detail {

/// "tensor 'w'", or "unnamed tensor": how messages name a TensorProto.
std::string tensor_what(const onnx::TensorProto& proto);
/// Releases the data a converted TensorProto holds; clear() alone keeps the string's capacity.
void release_tensor_data(onnx::TensorProto& proto);
/// tensor_from_proto with `what` naming the tensor in errors.
Result<Tensor> tensor_from_proto_impl(const onnx::TensorProto& proto, ProtoReadContext& ctx, const std::string& what);
/// tensor_from_sparse_proto with `what` naming the tensor in errors.
Result<Tensor> sparse_from_proto_impl(const onnx::SparseTensorProto& proto, ProtoReadContext& ctx,
                                      const std::string& what);

}  // namespace vn::detail
