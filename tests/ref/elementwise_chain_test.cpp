// SPDX-License-Identifier: Apache-2.0
// The reference's elementwise chains: run as one pass (or by a Conv on its output) when nothing
// observes the run, with the bits of their nodes run one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/ref/reference_backend.h"
#include "tests/ref/ref_test_models.h"

namespace vn::ref {
namespace {

using test::float_info;
using test::make_node;
using test::opset13_model;
using test::ramp;

/// Runs `m` on `feeds` observed (an observer sees every node's output, so nothing fuses: the
/// values to match) and unobserved under a profile; expects each of `names` from both, the same
/// bit for bit (a NaN for a NaN), and nothing else. Returns the ops the profile lists.
std::vector<std::string> ops_run_unobserved_matching_observed(const Model& m, const TensorMap& feeds,
                                                              const std::vector<std::string>& names) {
  ReferenceBackend backend;
  const Status prepared = backend.prepare(m, {});
  EXPECT_TRUE(prepared.ok()) << prepared.to_string();
  RunOptions observed;
  observed.observer = [](int64_t, const Node&, const TensorMap&) { return true; };
  Result<TensorMap> want = backend.run(feeds, observed);
  std::vector<LayerTime> profile;
  RunOptions timed;
  timed.profile = &profile;
  Result<TensorMap> got = backend.run(feeds, timed);
  EXPECT_TRUE(want.ok() && got.ok()) << want.status().to_string() << got.status().to_string();
  if (!want.ok() || !got.ok()) return {};
  EXPECT_EQ(got->size(), names.size());
  EXPECT_EQ(want->size(), names.size());
  for (const std::string& name : names) {
    const Tensor* w = want->find(name);
    const Tensor* y = got->find(name);
    EXPECT_TRUE(w && y) << name;
    if (!w || !y) continue;
    EXPECT_EQ(y->shape(), w->shape()) << name;
    if (y->shape() != w->shape()) continue;
    const auto a = y->values<float>(), b = w->values<float>();
    for (size_t i = 0; i < b.size(); ++i) {
      if (std::isnan(b[i])) {
        EXPECT_TRUE(std::isnan(a[i])) << name << " at " << i;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << name << " at " << i;
      }
    }
  }
  std::vector<std::string> ops;
  for (const LayerTime& t : profile) ops.emplace_back(t.op);
  return ops;
}

/// R = Neg(X) (a tensor no caller holds), S = Sigmoid(R), Y = Mul(S, R) or Mul(R, S); with
/// `other`, Y = Mul(S, Z) for a second input Z instead; with `s_out`, S is a graph output too.
Model silu_model(bool s_first, bool other, bool s_out) {
  Model m = opset13_model();
  m.graph.nodes = {
      make_node("neg", "Neg", {"X"}, {"R"}), make_node("sig", "Sigmoid", {"R"}, {"S"}),
      make_node("mul", "Mul", {s_first ? "S" : (other ? "Z" : "R"), s_first ? (other ? "Z" : "R") : "S"}, {"Y"})};
  m.graph.inputs = {float_info("X", {37})};
  if (other) m.graph.inputs.push_back(float_info("Z", {37}));
  m.graph.outputs = {float_info("Y", {37})};
  if (s_out) m.graph.outputs.push_back(float_info("S", {37}));
  return m;
}

TEST(ReferenceBackend, SigmoidTimesItsInputRunsAsOneSiluPassWithTheTwoNodesBits) {
  // 37 values (two vectors of 16 and a tail): large of both signs, zeros, infinities, a NaN.
  std::vector<float> xv;
  for (int i = 0; i < 33; ++i) xv.push_back(0.731f * static_cast<float>(i - 16) * (i % 3 == 0 ? 37.0f : 1.0f));
  xv.insert(xv.end(), {-0.0f, INFINITY, -INFINITY, NAN});
  const Tensor x = Tensor::from_vector<float>({37}, xv),
               z = Tensor::from_vector<float>({37}, std::vector<float>(37, 3.0f));
  for (bool s_first : {true, false}) {
    for (bool other : {false, true}) {
      for (bool s_out : {false, true}) {
        SCOPED_TRACE(testing::Message() << "s_first " << s_first << " other " << other << " s_out " << s_out);
        TensorMap feeds{{"X", x}};
        if (other) feeds.set("Z", z);
        const std::vector<std::string> ops = ops_run_unobserved_matching_observed(
            silu_model(s_first, other, s_out), feeds,
            s_out ? std::vector<std::string>{"Y", "S"} : std::vector<std::string>{"Y"});
        // Fused where the Sigmoid's output goes nowhere else: the Mul reads the Sigmoid's input,
        // or another tensor of its shape made before the chain.
        const bool fused = !s_out;
        EXPECT_EQ(ops, fused ? (std::vector<std::string>{"Neg", "Mul"})
                             : (std::vector<std::string>{"Neg", "Sigmoid", "Mul"}));
      }
    }
  }
}

// A chain reads its source at its end: a step between its links that reads the source (here its
// last reader, which releases it) keeps the chain from forming.
TEST(ReferenceBackend, NoChainFormsAroundAStepThatReadsItsSource) {
  Model m = opset13_model();
  m.graph.nodes = {make_node("neg", "Neg", {"X"}, {"R"}), make_node("sig", "Sigmoid", {"R"}, {"S"}),
                   make_node("abs", "Abs", {"R"}, {"N"}), make_node("mul", "Mul", {"S", "Z"}, {"Y"})};
  m.graph.inputs = {float_info("X", {37}), float_info("Z", {37})};
  m.graph.outputs = {float_info("Y", {37}), float_info("N", {37})};
  std::vector<float> xv, zv;
  for (int i = 0; i < 37; ++i) {
    xv.push_back(0.37f * static_cast<float>(i - 18));
    zv.push_back(1.0f + 0.01f * static_cast<float>(i));
  }
  const std::vector<std::string> ops = ops_run_unobserved_matching_observed(
      m, {{"X", Tensor::from_vector<float>({37}, xv)}, {"Z", Tensor::from_vector<float>({37}, zv)}}, {"Y", "N"});
  EXPECT_EQ(ops, (std::vector<std::string>{"Neg", "Sigmoid", "Abs", "Mul"}));
}

/// PyTorch's exported GELU of R = Neg(X): Div(R, 1.4142135 from a Constant node), Erf, Add(·, 1
/// from an initializer of shape `one_shape`), Mul(R, ·), Mul(·, 0.5 from a value_float Constant);
/// with `erf_out`, Erf's output is a graph output too.
Model gelu_model(Shape one_shape, bool erf_out) {
  Model m = opset13_model();
  Node c1 = make_node("c1", "Constant", {}, {"C1"});
  Attribute v;
  v.name = "value";
  v.type = AttrType::kTensor;
  v.t = Tensor::from_vector<float>({}, {1.4142135f});
  c1.attributes.push_back(v);
  Node c3 = make_node("c3", "Constant", {}, {"C3"});
  Attribute f;
  f.name = "value_float";
  f.type = AttrType::kFloat;
  f.f = 0.5f;
  c3.attributes.push_back(f);
  m.graph.nodes = {make_node("neg", "Neg", {"X"}, {"R"}),
                   c1,
                   c3,
                   make_node("div", "Div", {"R", "C1"}, {"D"}),
                   make_node("erf", "Erf", {"D"}, {"E"}),
                   make_node("add", "Add", {"E", "ONE"}, {"A"}),
                   make_node("mul", "Mul", {"R", "A"}, {"M"}),
                   make_node("half", "Mul", {"M", "C3"}, {"Y"})};
  m.graph.initializers.push_back({"ONE", Tensor::from_vector<float>(one_shape, {1.0f})});
  m.graph.inputs = {float_info("X", {37})};
  m.graph.outputs = {float_info("Y", {37})};
  if (erf_out) m.graph.outputs.push_back(float_info("E", {37}));
  return m;
}

TEST(ReferenceBackend, ElementwiseChainsRunAsOnePassWithTheNodesBits) {
  std::vector<float> xv;
  for (int i = 0; i < 33; ++i) xv.push_back(0.613f * static_cast<float>(i - 16) * (i % 3 == 0 ? 9.0f : 1.0f));
  xv.insert(xv.end(), {-0.0f, INFINITY, -INFINITY, NAN});
  const Tensor x = Tensor::from_vector<float>({37}, xv);
  struct Case {
    const char* what;
    Shape one_shape;
    bool erf_out;
    std::vector<std::string> timed;  // the ops the profile lists when nothing observes the run
  };
  const Case cases[] = {
      {"all one chain", {1}, false, {"Constant", "Constant", "Neg", "Mul"}},
      // Erf's output is kept: the chain stops there (Div and Erf run as one), and another starts
      // from E (Add, Mul reading R as another tensor of E's shape, Mul).
      {"stops at an output", {1}, true, {"Constant", "Constant", "Neg", "Erf", "Mul"}},
      // A [1, 1] scalar would make the output [1, 37]: not fused for a source of rank 1.
      {"scalar of higher rank", {1, 1}, false, {"Constant", "Constant", "Neg", "Div", "Erf", "Add", "Mul", "Mul"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::string> ops = ops_run_unobserved_matching_observed(
        gelu_model(c.one_shape, c.erf_out), {{"X", x}},
        c.erf_out ? std::vector<std::string>{"Y", "E"} : std::vector<std::string>{"Y"});
    std::sort(ops.begin(), ops.end());
    std::vector<std::string> expected = c.timed;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(ops, expected);
  }
}

/// PyTorch's GELU after a bias, as a transformer's MLP exports it: A = Add(B, Neg(X)) for a row B
/// of 37 biases, then Div(A, 1.4142135), Erf, Add(·, 1), Mul(A, ·), Mul(·, 0.5). A is read by the
/// Div and the first Mul; with `extra`, by Z = Abs(A) too, after them.
Model gelu_after_bias_model(bool extra) {
  Model m = opset13_model();
  m.graph.nodes = {make_node("neg", "Neg", {"X"}, {"R"}),      make_node("bias", "Add", {"B", "R"}, {"A"}),
                   make_node("div", "Div", {"A", "SQRT2"}, {"D"}), make_node("erf", "Erf", {"D"}, {"E"}),
                   make_node("add", "Add", {"E", "ONE"}, {"P"}),   make_node("mul", "Mul", {"A", "P"}, {"M"}),
                   make_node("half", "Mul", {"M", "HALF"}, {"Y"})};
  if (extra) m.graph.nodes.push_back(make_node("abs", "Abs", {"A"}, {"Z"}));
  m.graph.initializers = {{"B", ramp({37}, 0.3f)},
                          {"SQRT2", Tensor::from_vector<float>({}, {1.4142135f})},
                          {"ONE", Tensor::from_vector<float>({}, {1.0f})},
                          {"HALF", Tensor::from_vector<float>({}, {0.5f})}};
  m.graph.inputs = {float_info("X", {3, 37})};
  m.graph.outputs = {float_info("Y", {3, 37})};
  if (extra) m.graph.outputs.push_back(float_info("Z", {3, 37}));
  return m;
}

TEST(ReferenceBackend, ALinksOutputReadAgainByALaterLinkIsSavedInTheChain) {
  const Tensor x = ramp({3, 37}, 0.71f);
  // The bias Add heads the chain, its output saved for the Mul.
  EXPECT_EQ(ops_run_unobserved_matching_observed(gelu_after_bias_model(false), {{"X", x}}, {"Y"}),
            (std::vector<std::string>{"Neg", "Mul"}));
  // Abs reads A as well: A is made (by the Add alone), and the GELU's chain starts from it.
  EXPECT_EQ(ops_run_unobserved_matching_observed(gelu_after_bias_model(true), {{"X", x}}, {"Y", "Z"}),
            (std::vector<std::string>{"Neg", "Add", "Mul", "Abs"}));
}

/// Y (of `y_shape`) = Mul(Relu(Add(Neg(X), B)), G): B a row of 37 biases, G 37 scales of shape
/// `g_shape`.
Model row_model(Shape x_shape, Shape g_shape, Shape y_shape) {
  Model m = opset13_model();
  m.graph.nodes = {make_node("neg", "Neg", {"X"}, {"R"}), make_node("bias", "Add", {"R", "B"}, {"A"}),
                   make_node("relu", "Relu", {"A"}, {"P"}), make_node("scale", "Mul", {"P", "G"}, {"Y"})};
  m.graph.initializers = {{"B", ramp({37}, 0.3f)}, {"G", ramp(std::move(g_shape), 0.9f)}};
  m.graph.inputs = {float_info("X", std::move(x_shape))};
  m.graph.outputs = {float_info("Y", std::move(y_shape))};
  return m;
}

TEST(ReferenceBackend, ChainsReadConstantRowsAlongTheSourcesLastDim) {
  struct Case {
    const char* what;
    Shape x, g, y;
    std::vector<std::string> timed;
  };
  const Case cases[] = {
      // 5180 values: two blocks, the second starting inside a row.
      {"rows of the last dim", {2, 70, 37}, {1, 1, 37}, {2, 70, 37}, {"Neg", "Mul"}},
      // G's rank 4 would make Y 4-D: not fused for a source of rank 3.
      {"row of higher rank", {2, 70, 37}, {1, 1, 1, 37}, {1, 2, 70, 37}, {"Neg", "Add", "Relu", "Mul"}},
      // The rows would broadcast a last dim of 1 to 37: not fused.
      {"source to broadcast", {2, 70, 1}, {37}, {2, 70, 37}, {"Neg", "Add", "Relu", "Mul"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Tensor x = ramp(c.x, 0.17f);
    std::vector<std::string> ops = ops_run_unobserved_matching_observed(row_model(c.x, c.g, c.y), {{"X", x}}, {"Y"});
    EXPECT_EQ(ops, c.timed);
  }
}

/// Y = Relu(Add(Conv(X, W, B), R)) and Z = Relu(Conv(X, V)), over `side` x `side` planes of 8
/// channels: W 3x3 with pads (`group` groups), V 1x1. With `c_out`, the first Conv's output is a
/// graph output too.
Model conv_chain_model(int64_t side, int64_t group, bool c_out) {
  Model m = opset13_model();
  Node conv = make_node("conv", "Conv", {"X", "W", "B"}, {"C"});
  Attribute pads;
  pads.name = "pads";
  pads.type = AttrType::kInts;
  pads.ints = {1, 1, 1, 1};
  Attribute groups;
  groups.name = "group";
  groups.type = AttrType::kInt;
  groups.i = group;
  conv.attributes = {pads, groups};
  m.graph.nodes = {conv, make_node("add", "Add", {"C", "R"}, {"A"}), make_node("relu", "Relu", {"A"}, {"Y"}),
                   make_node("pointwise", "Conv", {"X", "V"}, {"P"}), make_node("relu2", "Relu", {"P"}, {"Z"}),
                   // SiLU reads the Conv's output twice, each time in a link of its chain.
                   make_node("silu_conv", "Conv", {"X", "V"}, {"Q"}), make_node("sigmoid", "Sigmoid", {"Q"}, {"S"}),
                   make_node("silu", "Mul", {"S", "Q"}, {"U"})};
  const Shape out{1, 16, side, side};
  m.graph.initializers = {{"W", ramp({16, 8 / group, 3, 3}, 0.13f)}, {"B", ramp({16}, 0.7f)},
                          {"V", ramp({16, 8, 1, 1}, 0.31f)}};
  m.graph.inputs = {float_info("X", {1, 8, side, side}), float_info("R", out)};
  m.graph.outputs = {float_info("Y", out), float_info("Z", out), float_info("U", out)};
  if (c_out) m.graph.outputs.push_back(float_info("C", out));
  return m;
}

TEST(ReferenceBackend, AConvRunsTheChainOnItsOutputAsItsEpilogueWithTheNodesBits) {
  // Sides and groups for the Conv's paths: one tile of positions, several tiles, a single
  // position, and a grouped (direct) sum.
  for (const auto& [side, group] : {std::pair<int64_t, int64_t>{5, 1}, {40, 1}, {1, 1}, {9, 8}}) {
    for (bool c_out : {false, true}) {
      SCOPED_TRACE(testing::Message() << "side " << side << " group " << group << " c_out " << c_out);
      const Tensor x = ramp({1, 8, side, side}, 0.37f), r = ramp({1, 16, side, side}, 0.11f);
      std::vector<std::string> names{"Y", "Z", "U"};
      if (c_out) names.push_back("C");
      std::vector<std::string> ops =
          ops_run_unobserved_matching_observed(conv_chain_model(side, group, c_out), {{"X", x}, {"R", r}}, names);
      std::sort(ops.begin(), ops.end());
      // Unobserved, each Conv runs its chain (its time includes the chain's); a Conv whose output
      // is kept leaves its chain to run as one pass after it.
      EXPECT_EQ(ops, c_out ? (std::vector<std::string>{"Conv", "Conv", "Conv", "Relu"})
                           : (std::vector<std::string>{"Conv", "Conv", "Conv"}));
    }
  }
}

/// Y = Relu(Add(Add(MatMul(X, W), B), R)), a linear layer with its bias row, a residual and a
/// Relu over `rows` rows of X ([2, rows, 37], its batch folded into one product); Z = SiLU of
/// MatMul(X, W); U = Relu(MatMul(X, V)) with V a batch of two matrices (two products). With
/// `m_out`, Y's MatMul output is a graph output too.
Model matmul_chain_model(int64_t rows, bool m_out) {
  Model m = opset13_model();
  m.graph.nodes = {make_node("mm", "MatMul", {"X", "W"}, {"M"}),  make_node("bias", "Add", {"M", "B"}, {"A"}),
                   make_node("res", "Add", {"A", "R"}, {"S"}),    make_node("relu", "Relu", {"S"}, {"Y"}),
                   make_node("mm2", "MatMul", {"X", "W"}, {"Q"}), make_node("sig", "Sigmoid", {"Q"}, {"G"}),
                   make_node("silu", "Mul", {"G", "Q"}, {"Z"}),   make_node("mm3", "MatMul", {"X", "V"}, {"P"}),
                   make_node("relu3", "Relu", {"P"}, {"U"})};
  const Shape out{2, rows, 40};
  m.graph.initializers = {{"W", ramp({37, 40}, 0.013f)}, {"B", ramp({40}, 0.7f)}, {"V", ramp({2, 37, 40}, 0.011f)}};
  m.graph.inputs = {float_info("X", {2, rows, 37}), float_info("R", out)};
  m.graph.outputs = {float_info("Y", out), float_info("Z", out), float_info("U", out)};
  if (m_out) m.graph.outputs.push_back(float_info("M", out));
  return m;
}

TEST(ReferenceBackend, AMatMulRunsTheChainOnItsOutputAsItsEpilogueWithTheNodesBits) {
  // One row (few-row products), a few row blocks, and many (blocks finished by several tasks).
  for (const int64_t rows : {1, 30, 300}) {
    for (bool m_out : {false, true}) {
      SCOPED_TRACE(testing::Message() << rows << " rows, m_out " << m_out);
      const Tensor x = ramp({2, rows, 37}, 0.37f), r = ramp({2, rows, 40}, 0.11f);
      std::vector<std::string> names{"Y", "Z", "U"};
      if (m_out) names.push_back("M");
      std::vector<std::string> ops =
          ops_run_unobserved_matching_observed(matmul_chain_model(rows, m_out), {{"X", x}, {"R", r}}, names);
      std::sort(ops.begin(), ops.end());
      // Unobserved, a single product runs its chain; the batch of two products leaves its Relu to
      // run after it, as does a MatMul whose output is kept.
      EXPECT_EQ(ops, m_out ? (std::vector<std::string>{"MatMul", "MatMul", "MatMul", "Relu", "Relu"})
                           : (std::vector<std::string>{"MatMul", "MatMul", "MatMul", "Relu"}));
    }
  }
}

}  // namespace
}  // namespace vn::ref
