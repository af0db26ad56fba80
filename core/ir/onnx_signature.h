// SPDX-License-Identifier: Apache-2.0
// What libonnx's operator schemas (ONNX 1.12: ai.onnx through opset 17) say about a node's types and
// about moving a model to a newer opset, for the rewrites of core/surgeon; and a type check of a
// whole model against those schemas. (core/ir/onnx_schema.h is ONNX 1.23's table of versions,
// attributes and arities at every opset; these are the type constraints libonnx adds up to 17.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/ir/graph.h"

namespace vn {

/// One formal input or output of an op schema.
struct OpFormal {
  std::string name;
  /// The type constraint it is bound to ("T"), or its fixed type string ("tensor(float)") when the
  /// schema lists its types directly: formals with the same `type_str` must have one type.
  std::string type_str;
  bool allows_float16 = false;
  bool allows_float32 = false;
  bool variadic = false;  ///< the last formal; it stands for every remaining input or output
};

/// The formals of an op schema.
struct OpSignature {
  int since_version = 0;
  std::vector<OpFormal> inputs;
  std::vector<OpFormal> outputs;

  /// The formal of input `i` of a node (the variadic last formal for positions past the end);
  /// nullptr when the schema has no such input.
  const OpFormal* input(size_t i) const;
  const OpFormal* output(size_t i) const;
};

/// The schema of `op_type` in `domain` ("" or "ai.onnx" for the default one) in force at `opset`.
/// Above the newest opset libonnx knows for the domain (17 for ai.onnx), the newest schema it has:
/// an approximation of the types only, which callers must document. nullopt for an op libonnx does
/// not know.
std::optional<OpSignature> onnx_op_signature(std::string_view op_type, int64_t opset, std::string_view domain);

/// Whether `node` (default domain) means the same when the model's opset import moves from `from`
/// to `to` (from < to <= 17): nullopt when it does, else why not. It does when the schema in force
/// is the same, or when the newer schema only widens it: the same inputs and outputs (a required
/// input may become optional), no attribute of the node removed, new attributes optional, no
/// default changed that the node relies on, the op not deprecated. Changes of meaning that keep
/// the signature (Softmax's axis in opset 13) are the caller's to know.
std::optional<std::string> onnx_opset_upgrade_blocker(const Node& node, int64_t from, int64_t to);

/// Runs libonnx's shape inference with type checking in strict mode on `model` (without reading
/// tensor data): every node's inputs and outputs against its schema's type constraints (allowed
/// types, one type per constraint) and against the declared types of value_info, graph inputs and
/// outputs. kInvalidModel with libonnx's message (it names the node) on the first problem. Models
/// newer than libonnx (IR version above 8, ai.onnx opset above 17) are not checked: OK with a
/// warning, as for the checker.
Status check_model_types(const Model& model);

}  // namespace vn
