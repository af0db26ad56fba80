// SPDX-License-Identifier: Apache-2.0
// The ops the engine's own layers implement (the layer kinds of fusion.cpp), listed once: for each,
// the op versions and the attributes its layers honour. A node outside the list, of another
// version, or carrying an attribute its layer would not read, runs on its reference kernel
// instead, which implements it as the standard says or refuses it; so the engine never drops a
// part of an op that its own layers do not know.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/ir/graph.h"

namespace vn::engine {

/// One op the engine's layers implement natively.
struct NativeOp {
  std::string_view op;
  int min_version = 1;  ///< the oldest ONNX since-version the layers implement
  int max_version = 1;  ///< the newest
  /// Attributes the layers read, comma-separated; any other attribute sends the node to its
  /// reference kernel.
  std::string_view attributes;
};

/// The list (default domain only).
std::span<const NativeOp> native_ops();

/// Whether the engine's own layers may run `node` of a model whose default opset is `opset`.
bool runs_natively(const Node& node, int64_t opset);

}  // namespace vn::engine
