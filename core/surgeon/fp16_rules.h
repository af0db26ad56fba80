// SPDX-License-Identifier: Apache-2.0
// The ops `convert --to-onnx --fp16` keeps in float32 whatever ONNX allows: one list, enumerated by
// its tests and the README.
#pragma once

#include <span>
#include <string_view>

namespace vn::surgeon {

/// An op kept in float32 by name, and why.
struct Fp16BlockedOp {
  std::string_view op_type;
  std::string_view reason;
};

/// onnxconverter-common's DEFAULT_OP_BLOCK_LIST (its ONNX-ML ops included, though their custom
/// domain alone keeps them), then the random generators, whose draws differ between float types.
std::span<const Fp16BlockedOp> fp16_blocked_ops();

/// The reason `op_type` is kept in float32, or "" when it is not listed.
std::string_view fp16_block_reason(std::string_view op_type);

/// Whether `op_type` draws random numbers (its values depend on nothing fixed).
bool fp16_random_op(std::string_view op_type);

}  // namespace vn::surgeon
