// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/ir/dtype.h"
#include "core/ir/tensor.h"

namespace vn {

class Graph;

/// One dimension of a declared (possibly symbolic) shape: a known size, a named parameter
/// ("batch"), or unknown (value -1 and no param).
struct Dim {
  int64_t value = -1;
  std::string param;

  bool known() const { return value >= 0; }
  static Dim of(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string p) { return Dim{-1, std::move(p)}; }
  bool operator==(const Dim&) const = default;
};

/// The declared type of a graph value: element type and shape, either of which may be unknown.
struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;
  std::optional<std::vector<Dim>> shape;  ///< nullopt: rank unknown
  std::string doc_string;

  /// True when every dim is known.
  bool has_static_shape() const;
  /// The concrete shape; only meaningful when has_static_shape().
  Shape static_shape() const;
  /// "float32 (1, 3, 224, 224)" or "float32 (batch, 3, ?, ?)" or "? ?".
  std::string type_string() const;
};

enum class AttrType { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs };

std::string_view attr_type_name(AttrType type);

/// An ONNX node attribute. Only the field selected by `type` is meaningful. Subgraphs (If/Loop
/// bodies) are shared pointers so that copying a Graph copies them cheaply; they are not mutated
/// through a shared copy.
struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<const Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<const Graph>> graphs;
  std::string ref_attr_name;  ///< set inside function bodies
  std::string doc_string;
};

/// A graph node. Empty strings in `inputs` mark omitted optional inputs, as in ONNX.
struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  ///< "" or "ai.onnx" for the default domain
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string doc_string;

  const Attribute* attr(std::string_view attr_name) const;
  /// "node 'conv1' (Conv)" style reference for errors; `index` is the node's position.
  NodeRef ref(int64_t index) const { return NodeRef{index, name, op_type}; }
};

/// A named constant tensor (an ONNX initializer).
struct Initializer {
  std::string name;
  Tensor tensor;
};

/// A computation graph: nodes in order (topological after import), declared inputs and outputs,
/// intermediate value types and initializers. A node's index in `nodes` is its stable identity:
/// layer tables, bisection markers and error messages all refer to it. Tensors are identified by
/// name (ONNX's single-assignment rule makes names unique).
class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;       ///< may include initializer names (ONNX IR < 4 style)
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;   ///< types of intermediate tensors
  std::vector<Initializer> initializers;
  std::string doc_string;

  const Initializer* find_initializer(std::string_view tensor_name) const;
  /// The declared type of any named value (input, output, value_info, or initializer), if known.
  std::optional<ValueInfo> find_value_info(std::string_view tensor_name) const;
  /// Inputs that are not also initializers: what a user has to feed.
  std::vector<const ValueInfo*> runtime_inputs() const;
  /// Index of the node that produces `tensor_name`, or -1.
  int64_t producer_of(std::string_view tensor_name) const;
};

/// An opset import: a domain and its version.
struct OpsetId {
  std::string domain;
  int64_t version = 0;
};

/// A whole model: the main graph plus what ONNX stores around it.
struct Model {
  int64_t ir_version = 8;
  std::vector<OpsetId> opset_imports;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata;
  Graph graph;
  /// Folder the model was loaded from (external data is resolved against it); may be empty.
  std::filesystem::path base_dir;

  /// The version imported for `domain` ("" and "ai.onnx" are the same), or -1.
  int64_t opset(std::string_view domain_name = "") const;
};

/// True for the default ONNX domain spellings "" and "ai.onnx".
inline bool is_default_domain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

/// Name → index maps over a graph, built once for repeated lookups.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  /// Producing node index, or -1 for graph inputs, initializers and unknown names.
  int64_t producer(std::string_view tensor_name) const;
  /// Indices of the nodes that read `tensor_name`, in node order.
  const std::vector<int64_t>& consumers(std::string_view tensor_name) const;
  bool is_initializer(std::string_view tensor_name) const;
  bool is_graph_input(std::string_view tensor_name) const;
  bool is_graph_output(std::string_view tensor_name) const;

 private:
  std::unordered_map<std::string, int64_t> producer_;
  std::unordered_map<std::string, std::vector<int64_t>> consumers_;
  std::unordered_map<std::string, bool> initializer_;
  std::unordered_map<std::string, bool> input_;
  std::unordered_map<std::string, bool> output_;
};

/// How reports name node `index` of `graph`: its ONNX name, or "<OpType>_<index>" when unnamed.
std::string node_label(const Graph& graph, int64_t index);

}  // namespace vn
