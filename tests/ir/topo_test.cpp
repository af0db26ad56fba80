// SPDX-License-Identifier: Apache-2.0
#include "core/ir/topo.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vn {
namespace {

using ::testing::HasSubstr;

Node make_node(std::string name, std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

ValueInfo float_info(std::string name, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::kFloat32;
  std::vector<Dim> shape;
  for (int64_t d : dims) shape.push_back(Dim::of(d));
  v.shape = std::move(shape);
  return v;
}

// X -> a -> A -> b -> B ----> d -> D -> e -> E
//            \-> c -> C --/
Graph diamond() {
  Graph g;
  g.name = "diamond";
  g.inputs = {float_info("X", {2, 3})};
  g.outputs = {float_info("E", {2, 3})};
  g.nodes = {make_node("a", "Relu", {"X"}, {"A"}), make_node("b", "Neg", {"A"}, {"B"}),
             make_node("c", "Exp", {"A"}, {"C"}), make_node("d", "Add", {"B", "C"}, {"D"}),
             make_node("e", "Sigmoid", {"D"}, {"E"})};
  return g;
}

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  return names;
}

std::shared_ptr<const Graph> body_reading(const std::string& outer_name, const std::string& out) {
  auto body = std::make_shared<Graph>();
  body->name = "body";
  body->nodes = {make_node("inner", "Identity", {outer_name}, {out})};
  body->outputs = {float_info(out, {2, 3})};
  return body;
}

Attribute graph_attr(std::string name, std::shared_ptr<const Graph> g) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kGraph;
  a.g = std::move(g);
  return a;
}

TEST(Topo, ValidOrderIsKeptExactly) {
  Result<std::vector<int64_t>> order = topological_order(diamond());
  ASSERT_TRUE(order.ok()) << order.status().to_string();
  EXPECT_EQ(*order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(Topo, ShuffledGraphsAreSortedValidly) {
  std::mt19937 rng(7767517);
  for (int trial = 0; trial < 20; ++trial) {
    Graph g = diamond();
    std::shuffle(g.nodes.begin(), g.nodes.end(), rng);
    ASSERT_TRUE(toposort(g).ok());
    EXPECT_TRUE(validate_graph(g, 13).ok()) << "order: " << ::testing::PrintToString(node_names(g));
    EXPECT_EQ(g.nodes.front().name, "a");
    EXPECT_EQ(g.nodes.back().name, "e");
  }
  // Among ready nodes the lowest index goes first: c before b when c comes first in the input.
  Graph g = diamond();
  std::reverse(g.nodes.begin(), g.nodes.end());
  ASSERT_TRUE(toposort(g).ok());
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "c", "b", "d", "e"}));
}

TEST(Topo, CycleIsReportedWithANodeOnIt) {
  Graph g = diamond();
  // a now reads D: a -> b -> d -> a (and a -> c -> d -> a). e is downstream of the cycle, not on it.
  g.nodes[0].inputs = {"D"};
  Result<std::vector<int64_t>> order = topological_order(g);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), StatusCode::kInvalidModel);
  ASSERT_NE(order.status().node(), nullptr);
  const std::string on_cycle = order.status().node()->name;
  EXPECT_TRUE(on_cycle == "a" || on_cycle == "b" || on_cycle == "c" || on_cycle == "d") << on_cycle;
  EXPECT_THAT(order.status().message(), HasSubstr("graph has a cycle: 'a' (Relu) -> "));
  EXPECT_THAT(order.status().message(), HasSubstr("'d' (Add) -> 'a' (Relu)"));
  EXPECT_THAT(order.status().message(), ::testing::Not(HasSubstr("'e'")));

  Graph before = g;
  EXPECT_FALSE(toposort(g).ok());
  EXPECT_EQ(node_names(g), node_names(before));
}

TEST(Topo, SelfLoopIsACycle) {
  Graph g = diamond();
  g.nodes[4].inputs = {"E"};
  Result<std::vector<int64_t>> order = topological_order(g);
  ASSERT_FALSE(order.ok());
  ASSERT_NE(order.status().node(), nullptr);
  EXPECT_EQ(order.status().node()->name, "e");
  EXPECT_EQ(order.status().node()->index, 4);
}

TEST(Topo, SubgraphReadsAreDependencies) {
  Graph g;
  g.inputs = {float_info("X", {2, 3})};
  g.outputs = {float_info("Y", {2, 3})};
  Node branch = make_node("if", "If", {"cond"}, {"Y"});
  branch.attributes = {graph_attr("then_branch", body_reading("A", "t")),
                       graph_attr("else_branch", body_reading("X", "e"))};
  g.inputs.push_back(ValueInfo{"cond", DType::kBool, std::vector<Dim>{}, ""});
  g.nodes = {branch, make_node("a", "Relu", {"X"}, {"A"})};
  EXPECT_EQ(node_implicit_inputs(g.nodes[0]), (std::vector<std::string>{"A", "X"}));
  EXPECT_FALSE(validate_graph(g, 13).ok());
  ASSERT_TRUE(toposort(g).ok());
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "if"}));
  EXPECT_TRUE(validate_graph(g, 13).ok()) << validate_graph(g, 13).to_string();
}

TEST(Topo, DanglingInputIsReportedOnTheNode) {
  Graph g = diamond();
  g.nodes[3].inputs = {"B", "nowhere"};
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  ASSERT_NE(st.node(), nullptr);
  EXPECT_EQ(st.node()->name, "d");
  EXPECT_EQ(st.node()->index, 3);
  EXPECT_EQ(st.to_string(),
            "node 3 'd' (Add): input 'nowhere' is not produced by any node, graph input or initializer");
}

TEST(Topo, DanglingInputInsideASubgraphNamesTheEnclosingNode) {
  Graph g = diamond();
  Node branch = make_node("if", "If", {"X"}, {"Z"});
  branch.attributes = {graph_attr("then_branch", body_reading("ghost", "t")),
                       graph_attr("else_branch", body_reading("A", "e"))};
  g.nodes.push_back(branch);
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  ASSERT_NE(st.node(), nullptr);
  EXPECT_EQ(st.node()->name, "if");
  EXPECT_THAT(st.message(), HasSubstr("'ghost'"));
}

TEST(Topo, DuplicateProducerIsReportedOnTheSecondNode) {
  Graph g = diamond();
  g.nodes[2].outputs = {"B"};
  g.nodes[3].inputs = {"B", "B"};
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  ASSERT_NE(st.node(), nullptr);
  EXPECT_EQ(st.node()->name, "c");
  EXPECT_THAT(st.message(), HasSubstr("output 'B' is already produced by node 1 'b' (Neg)"));

  Graph h = diamond();
  h.initializers.push_back(Initializer{"C", Tensor::scalar<float>(1)});
  Status init = validate_graph(h, 13);
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.node()->name, "c");
  EXPECT_THAT(init.message(), HasSubstr("output 'C' is also a graph initializer"));
}

TEST(Topo, OutOfOrderReadIsReported) {
  Graph g = diamond();
  std::swap(g.nodes[0], g.nodes[1]);
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.node()->name, "b");
  EXPECT_THAT(st.message(), HasSubstr("run toposort"));
}

TEST(Topo, ArityIsCheckedAgainstTheSchema) {
  Graph g = diamond();
  g.nodes[0].inputs = {"X", "X"};
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.node()->name, "a");
  EXPECT_THAT(st.message(), HasSubstr("has 2 inputs; Relu-13 (opset 13) takes 1 to 1"));

  // Unknown ops, custom domains and opsets beyond libonnx's are left to the backends.
  Graph unknown = diamond();
  unknown.nodes[1].op_type = "FancyOp";
  unknown.nodes[2].domain = "com.vernier";
  unknown.nodes[2].inputs = {"A", "A", "A"};
  EXPECT_TRUE(validate_graph(unknown, 13).ok());
  Graph future = diamond();
  future.nodes[0].inputs = {"X", "X"};
  EXPECT_TRUE(validate_graph(future, 99).ok());

  EXPECT_EQ(validate_graph(diamond(), 0).code(), StatusCode::kInvalidArgument);
}

TEST(Topo, EmptyOptionalNamesAreFine) {
  Graph g = diamond();
  g.nodes[4] = make_node("e", "Dropout", {"D", "", ""}, {"E", ""});
  EXPECT_TRUE(validate_graph(g, 13).ok()) << validate_graph(g, 13).to_string();
}

TEST(Topo, GraphOutputMustBeDefined) {
  Graph g = diamond();
  g.outputs.push_back(float_info("missing", {1}));
  Status st = validate_graph(g, 13);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.node(), nullptr);
  EXPECT_THAT(st.message(), HasSubstr("graph output 'missing'"));
}

TEST(Topo, AllTensorNamesSkipsConstantsAndEmptyNames) {
  Graph g = diamond();
  Node k = make_node("k", "Constant", {}, {"K"});
  g.nodes.insert(g.nodes.begin() + 2, k);
  g.nodes[0].outputs.push_back("");
  EXPECT_EQ(all_tensor_names(g), (std::vector<std::string>{"A", "B", "C", "D", "E"}));
}

}  // namespace
}  // namespace vn
