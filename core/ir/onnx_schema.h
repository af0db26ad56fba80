// SPDX-License-Identifier: Apache-2.0
// The operator schemas of ONNX 1.23 (default domain through opset 28), generated into
// onnx_schemas_a_k.inc and onnx_schemas_l_z.inc by scripts/gen_onnx_schemas.py. libonnx 1.12
// knows opsets up to 17 only; this table is how Vernier knows, at any opset it accepts, which
// version of an op a node runs, which attributes and how many inputs and outputs that version has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vn {

/// One version of an operator, as ONNX defines it.
struct OnnxSchema {
  std::string_view domain;  ///< "" for ai.onnx
  std::string_view op;
  int since_version = 0;
  bool deprecated = false;
  int min_inputs = 0;
  int max_inputs = 0;  ///< INT32_MAX when the last input is variadic
  int min_outputs = 0;
  int max_outputs = 0;
  /// Formal inputs, comma-separated; "name?" is optional, "name*" variadic (always the last).
  std::string_view inputs;
  std::string_view outputs;
  /// Attribute names, sorted and comma-separated; "name!" is required.
  std::string_view attributes;

  /// Whether `name` is an attribute of this version.
  bool has_attribute(std::string_view name) const;
  /// The required attributes.
  std::vector<std::string_view> required_attributes() const;
  /// The formal name of input `i` (a variadic input names every position from its own on);
  /// empty past the last.
  std::string_view input_name(size_t i) const;
  /// "ReduceMean-18".
  std::string label() const;
};

/// The ONNX release the table comes from, its IR version and its newest default-domain opset.
inline constexpr std::string_view kOnnxTableVersion = "1.23.1";
inline constexpr int64_t kNewestIrVersion = 14;
inline constexpr int64_t kNewestDefaultOpset = 28;

/// True for the domains ONNX defines: "" (also spelled "ai.onnx"), "ai.onnx.ml",
/// "ai.onnx.preview.training", "ai.onnx.preview".
bool is_onnx_domain(std::string_view domain);
/// The newest opset of an ONNX domain in the table (28 for the default domain), 0 for others.
int64_t newest_onnx_opset(std::string_view domain);

/// Every version of `op` in `domain`, oldest first; empty when ONNX does not define the op there.
std::span<const OnnxSchema> onnx_schema_versions(std::string_view domain, std::string_view op);
/// The version in force at `opset`: the one with the highest since_version <= opset. nullptr when
/// the op is unknown in the domain or `opset` predates its first version. For an opset newer than
/// the table's, the newest version is returned: callers refuse such opsets first (a newer opset
/// may have changed the op).
const OnnxSchema* onnx_schema(std::string_view domain, std::string_view op, int64_t opset);

/// Every schema of the table, sorted by domain, op and version.
std::span<const OnnxSchema> all_onnx_schemas();

}  // namespace vn
