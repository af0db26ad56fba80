// SPDX-License-Identifier: Apache-2.0
#include "core/ir/subgraph.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/ir/onnx_import.h"
#include "core/ir/topo.h"

namespace vn {
namespace {

using ::testing::HasSubstr;

// A diamond with initializers on two branches:
//   X -> a(Relu) -> A -> b(Mul by Wb) -> B --> d(Add) -> D -> e(Sigmoid) -> E
//                     \-> c(Add Wc)   -> C -/
Model diamond_model() {
  Result<Model> m = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
diamond (float[2,3] X) => (float[2,3] E)
<float[3] Wb = {1.0, 2.0, 3.0}, float[3] Wc = {4.0, 5.0, 6.0}, float[3] unused = {0.0, 0.0, 0.0}>
{
  A = Relu(X)
  B = Mul(A, Wb)
  C = Add(A, Wc)
  D = Add(B, C)
  E = Sigmoid(D)
}
)ONNX");
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  Model model = std::move(m).value();
  const char* names[] = {"a", "b", "c", "d", "e"};
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) model.graph.nodes[i].name = names[i];
  return model;
}

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  return names;
}

TEST(Subgraph, ExtractsTheDiamondBetweenTwoTensors) {
  const Model m = diamond_model();
  Result<Graph> sub = extract_subgraph(m.graph, {"A"}, {"D"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(node_names(*sub), (std::vector<std::string>{"b", "c", "d"}));
  ASSERT_EQ(sub->inputs.size(), 1u);
  EXPECT_EQ(sub->inputs[0].name, "A");
  EXPECT_EQ(sub->inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(sub->inputs[0].type_string(), "float32 (2, 3)");
  ASSERT_EQ(sub->outputs.size(), 1u);
  EXPECT_EQ(sub->outputs[0].type_string(), "float32 (2, 3)");
  ASSERT_EQ(sub->initializers.size(), 2u);
  EXPECT_EQ(sub->initializers[0].name, "Wb");
  EXPECT_EQ(sub->initializers[1].name, "Wc");
  for (const ValueInfo& v : sub->value_info) {
    EXPECT_TRUE(v.name == "B" || v.name == "C") << v.name;
  }
  EXPECT_EQ(sub->value_info.size(), 2u);
  EXPECT_TRUE(validate_graph(*sub, 13).ok()) << validate_graph(*sub, 13).to_string();
}

TEST(Subgraph, OneBranchKeepsOnlyItsInitializer) {
  const Model m = diamond_model();
  Result<Graph> sub = extract_subgraph(m.graph, {"A"}, {"C"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(node_names(*sub), std::vector<std::string>{"c"});
  ASSERT_EQ(sub->initializers.size(), 1u);
  EXPECT_EQ(sub->initializers[0].name, "Wc");
  EXPECT_TRUE(sub->value_info.empty());
}

TEST(Subgraph, SeveralInputsAndOutputsKeepTheirOrder) {
  const Model m = diamond_model();
  Result<Graph> sub = extract_subgraph(m.graph, {"C", "B"}, {"E", "D"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(node_names(*sub), (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(sub->inputs[0].name, "C");
  EXPECT_EQ(sub->inputs[1].name, "B");
  EXPECT_EQ(sub->outputs[0].name, "E");
  EXPECT_EQ(sub->outputs[1].name, "D");
  EXPECT_TRUE(sub->initializers.empty());
}

TEST(Subgraph, WholeGraphFromItsInputs) {
  const Model m = diamond_model();
  Result<Graph> sub = extract_subgraph(m.graph, {"X"}, {"E"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(node_names(*sub), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(sub->initializers.size(), 2u);  // "unused" is dropped
}

TEST(Subgraph, InputWithoutKnownTypeStaysUntyped) {
  Model m = diamond_model();
  m.graph.value_info.clear();
  Result<Graph> sub = extract_subgraph(m.graph, {"A"}, {"B"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(sub->inputs[0].name, "A");
  EXPECT_FALSE(sub->inputs[0].dtype.has_value());
  EXPECT_FALSE(sub->inputs[0].shape.has_value());
}

TEST(Subgraph, UnknownNamesAreNotFound) {
  const Model m = diamond_model();
  Result<Graph> bad_in = extract_subgraph(m.graph, {"nope"}, {"D"});
  ASSERT_FALSE(bad_in.ok());
  EXPECT_EQ(bad_in.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(bad_in.status().message(), HasSubstr("unknown tensor 'nope'"));
  Result<Graph> bad_out = extract_subgraph(m.graph, {"A"}, {"nada"});
  ASSERT_FALSE(bad_out.ok());
  EXPECT_EQ(bad_out.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(bad_out.status().message(), HasSubstr("'nada'"));
}

TEST(Subgraph, UnreachableOutputNamesWhatItNeeds) {
  const Model m = diamond_model();
  Result<Graph> sub = extract_subgraph(m.graph, {"B"}, {"D"});
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sub.status().message(), "output 'D' cannot be computed from the given inputs: it needs graph input 'X'");
}

TEST(Subgraph, BadArgumentsAreRefused) {
  const Model m = diamond_model();
  EXPECT_EQ(extract_subgraph(m.graph, {"A"}, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(extract_subgraph(m.graph, {"A", "A"}, {"D"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(extract_subgraph(m.graph, {"A"}, {""}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Subgraph, ConstantOnlyOutputNeedsNoInputs) {
  const Model m = diamond_model();
  Graph g = m.graph;
  Node k;
  k.name = "k";
  k.op_type = "Identity";
  k.inputs = {"Wb"};
  k.outputs = {"K"};
  g.nodes.push_back(k);
  Result<Graph> sub = extract_subgraph(g, {}, {"K"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(node_names(*sub), std::vector<std::string>{"k"});
  EXPECT_TRUE(sub->inputs.empty());
  ASSERT_EQ(sub->initializers.size(), 1u);
  EXPECT_EQ(sub->initializers[0].name, "Wb");
}

TEST(Subgraph, DependenciesThroughSubgraphsAreFollowed) {
  Result<Model> m = parse_model_text(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, bool cond) => (float[2] Z)
{
  A = Relu(X)
  B = Neg(X)
  Z = If (cond) <then_branch = t () => (float[2] z1) { z1 = Identity(A) },
                 else_branch = e () => (float[2] z2) { z2 = Identity(B) }>
}
)ONNX");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  Result<Graph> sub = extract_subgraph(m->graph, {"X", "cond"}, {"Z"});
  ASSERT_TRUE(sub.ok()) << sub.status().to_string();
  EXPECT_EQ(sub->nodes.size(), 3u);
  Result<Graph> without_b = extract_subgraph(m->graph, {"A", "cond"}, {"Z"});
  ASSERT_FALSE(without_b.ok());
  EXPECT_THAT(without_b.status().message(), HasSubstr("needs graph input 'X'"));
}

}  // namespace
}  // namespace vn
