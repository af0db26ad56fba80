// SPDX-License-Identifier: Apache-2.0
// The reference interpreter itself: execution order and the observer, cancellation, tensor
// lifetimes (observed through the owners of view tensors), marked outputs, feed validation and
// how unsupported or malformed nodes are reported.
#include "core/ref/reference_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/onnx_import.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ops/sgemm.h"
#include "core/ops/sgemm_driver.h"
#include "tests/ref/ref_test_models.h"

namespace vn::ref {
namespace {

using test::float_info;
using test::make_node;
using test::opset13_model;
using test::ramp;

constexpr LoadOptions kRawLoad{false, false};  // keep models the checker would refuse

Model parse(std::string_view text, const LoadOptions& options = {}) {
  Result<Model> m = parse_model_text(text, options);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : Model();
}

// ***** Observer and cancellation *****

/// Y = Neg(Relu(X)), stored with the nodes out of order: index 0 reads what index 1 produces.
Model out_of_order_model() {
  Model m = opset13_model();
  m.graph.nodes = {make_node("neg", "Neg", {"R"}, {"Y"}), make_node("relu", "Relu", {"X"}, {"R"})};
  m.graph.inputs = {float_info("X", {3})};
  m.graph.outputs = {float_info("Y", {3})};
  return m;
}

TEST(ReferenceBackend, ObserverSeesEveryNodeOnceInExecutionOrderWithItsOutputs) {
  Model m = out_of_order_model();
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  std::vector<int64_t> order;
  std::vector<std::vector<float>> seen;
  RunOptions options;
  options.observer = [&](int64_t index, const Node& node, const TensorMap& outputs) {
    order.push_back(index);
    EXPECT_EQ(&node, &m.graph.nodes[static_cast<size_t>(index)]);
    EXPECT_EQ(outputs.size(), 1u);
    const Tensor* t = outputs.find(node.outputs[0]);
    EXPECT_NE(t, nullptr);
    if (t) seen.emplace_back(t->values<float>().begin(), t->values<float>().end());
    return true;
  };
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({3}, {-1, 2, -3})}}, options);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(order, (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<float>{0, 2, 0}));
  EXPECT_EQ(seen[1], (std::vector<float>{-0.0f, -2, -0.0f}));
}

// An elementwise node writes into an input that dies at it, unless something else still holds
// that input: the caller's feed, or an observer that kept a node's output.
TEST(ReferenceBackend, ElementwiseOpsReuseADyingInputOnlyWhenNothingElseHoldsIt) {
  Model m = out_of_order_model();  // R = Relu(X), Y = Neg(R)
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  const Tensor x = Tensor::from_vector<float>({3}, {-1, 2, -3});
  for (bool hold : {false, true}) {
    SCOPED_TRACE(hold ? "observer holds R" : "nothing holds R");
    std::map<std::string, const float*> buffers;
    Tensor kept_r;
    RunOptions options;
    options.observer = [&](int64_t, const Node& node, const TensorMap& outputs) {
      const Tensor* t = outputs.find(node.outputs[0]);
      buffers[node.outputs[0]] = t->data<float>();
      if (hold && node.outputs[0] == "R") kept_r = *t;
      return true;
    };
    Result<TensorMap> out = backend.run({{"X", x}}, options);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(out->find("Y")->values<float>()[1], -2.0f);
    EXPECT_EQ(x.values<float>()[0], -1.0f);  // the feed was not written over by Relu
    EXPECT_NE(buffers["R"], x.data<float>());
    if (hold) {
      EXPECT_NE(buffers["Y"], buffers["R"]);
      EXPECT_EQ(std::vector<float>(kept_r.values<float>().begin(), kept_r.values<float>().end()),
                (std::vector<float>{0, 2, 0}));
    } else {
      EXPECT_EQ(buffers["Y"], buffers["R"]);
    }
  }
}

TEST(ReferenceBackend, ObserverReturningFalseStopsTheRun) {
  Model m = out_of_order_model();
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  int calls = 0;
  RunOptions options;
  options.observer = [&](int64_t, const Node&, const TensorMap&) {
    ++calls;
    return false;
  };
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_NE(out.status().message().find("stopped by the observer after node 'relu'"), std::string::npos)
      << out.status().to_string();
  EXPECT_EQ(calls, 1);
}

TEST(ReferenceBackend, CancelFlagStopsBeforeTheNextNode) {
  Model m = out_of_order_model();
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  std::atomic<bool> cancel{false};
  int calls = 0;
  RunOptions options;
  options.cancel = &cancel;
  options.observer = [&](int64_t, const Node&, const TensorMap&) {
    ++calls;
    cancel = true;
    return true;
  };
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);

  // Set before the run: no node runs.
  calls = 0;
  out = backend.run({{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}}, options);
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(calls, 0);
}

// ***** Lifetimes *****

// test.Make <id> () produces a view whose owner the test tracks; test.Copy (x) clones its input.
std::map<int64_t, std::weak_ptr<const void>>& tracked() {
  static std::map<int64_t, std::weak_ptr<const void>> owners;
  return owners;
}

Status make_kernel(ops::KernelContext& ctx) {
  auto owner = std::make_shared<std::vector<float>>(4, 1.0f);
  tracked()[ctx.attr_int("id", 0)] = owner;
  ctx.set_output(0, Tensor::view(DType::kFloat32, {4}, owner, owner->data()));
  return Status::OK();
}

Status copy_kernel(ops::KernelContext& ctx) {
  VN_RETURN_IF_ERROR(ops::check_arity(ctx, 1));
  ctx.set_output(0, ctx.input(0).clone());
  return Status::OK();
}

const ops::OpRegistry& lifetime_registry() {
  static const ops::OpRegistry registry = [] {
    ops::OpRegistry r;
    r.add("Make", 1, make_kernel, "test");
    r.add("Copy", 1, copy_kernel, "test");
    ops::register_if_ops(r);
    return r;
  }();
  return registry;
}

bool alive(int64_t id) { return !tracked()[id].expired(); }

TEST(ReferenceBackend, TensorsAreFreedAfterTheirLastReaderIncludingReadersInsideSubgraphs) {
  // A (id 1) is read explicitly by node 1 and inside the If's then-branch (node 4);
  // T (id 2) only by node 2; Dead (id 3) by nobody; Out (id 4) is a graph output.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13, "test" : 1]>
g (bool c) => (float[4] Y, float[4] Out) {
  A = test.Make <id = 1> ()
  B = test.Copy(A)
  T = test.Make <id = 2> ()
  C = test.Copy(T)
  D = If (c) <then_branch = t () => (float[4] d1) { d1 = test.Copy(A) },
              else_branch = e () => (float[4] d2) { d2 = test.Copy(C) }>
  Dead = test.Make <id = 3> ()
  Y = test.Copy(D)
  Out = test.Make <id = 4> ()
}
)ONNX";
  Model m = parse(kModel, kRawLoad);
  ReferenceBackend backend(lifetime_registry());
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  std::vector<std::string> log;
  RunOptions options;
  options.observer = [&](int64_t index, const Node&, const TensorMap&) {
    log.push_back(fmt::format("{}:{}{}{}", index, alive(1) ? "A" : "-", alive(2) ? "T" : "-", alive(3) ? "D" : "-"));
    return true;
  };
  Result<TensorMap> out = backend.run({{"c", Tensor::scalar<bool>(true)}}, options);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // The observer runs before the step's releases: A survives node 1 (its last explicit reader)
  // until the If (node 4) has run; T goes after node 3; Dead right after it is produced.
  EXPECT_EQ(log, (std::vector<std::string>{"0:A--", "1:A--", "2:AT-", "3:AT-", "4:A--", "5:--D", "6:---", "7:---"}));
  EXPECT_TRUE(alive(4));  // held by the results
  out = Result<TensorMap>(Status(StatusCode::kCancelled, "drop"));
  EXPECT_FALSE(alive(4));
}

TEST(ReferenceBackend, MarkedOutputsAreGraphOutputsThenNodeOutputsWithoutConstants) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  k = Constant <value = float[2] {1, 1}> ()
  a = Relu(X)
  b = Add(a, k)
  Y = Neg(b)
}
)ONNX";
  Model m = parse(kModel);
  ReferenceBackend backend;
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(backend.prepare(m, prep).ok());
  EXPECT_EQ(backend.output_names(), (std::vector<std::string>{"Y", "a", "b"}));
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({2}, {-1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].name, "Y");
  EXPECT_EQ((*out)[1].name, "a");
  EXPECT_EQ((*out)[2].name, "b");
  EXPECT_TRUE((*out)[1].tensor.same_as(Tensor::from_vector<float>({2}, {0, 2})));
  EXPECT_TRUE((*out)[2].tensor.same_as(Tensor::from_vector<float>({2}, {1, 3})));
  EXPECT_TRUE((*out)[0].tensor.same_as(Tensor::from_vector<float>({2}, {-1, -3})));
}

// ***** Feeds *****

constexpr std::string_view kRelu = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) { Y = Relu(X) }
)ONNX";

TEST(ReferenceBackend, MissingFeedIsNamedAndExtraFeedsAreIgnored) {
  Model m = parse(kRelu);
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  Result<TensorMap> missing = backend.run({{"Z", Tensor::from_vector<float>({2}, {1, 2})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing input 'X'"), std::string::npos) << missing.status().to_string();

  Result<TensorMap> extra =
      backend.run({{"X", Tensor::from_vector<float>({2}, {-1, 2})}, {"unused", Tensor::from_vector<float>({1}, {7})}});
  ASSERT_TRUE(extra.ok()) << extra.status().to_string();
  EXPECT_EQ(extra->size(), 1u);
  EXPECT_TRUE(extra->find("Y")->same_as(Tensor::from_vector<float>({2}, {0, 2})));
}

TEST(ReferenceBackend, WrongDtypeOrShapeNamesTheInput) {
  Model m = parse(kRelu);
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  Result<TensorMap> dtype = backend.run({{"X", Tensor::from_vector<double>({2}, {1, 2})}});
  EXPECT_EQ(dtype.status().code(), StatusCode::kUnsupportedDType);
  EXPECT_NE(dtype.status().message().find("input 'X' is float64 but the model declares float32"), std::string::npos)
      << dtype.status().to_string();
  Result<TensorMap> shape = backend.run({{"X", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  EXPECT_EQ(shape.status().code(), StatusCode::kShapeMismatch);
  EXPECT_NE(shape.status().message().find("input 'X' has shape (3,)"), std::string::npos) << shape.status().to_string();
}

// ***** Constant weights *****

/// Y = MatMul(X, W) with X 30 x 40 and W 40 x 50: W an initializer, or a graph input.
Model matmul_model(const Tensor& w, bool w_initializer) {
  Model m = opset13_model();
  m.graph.nodes = {make_node("mm", "MatMul", {"X", "W"}, {"Y"})};
  m.graph.inputs = {float_info("X", {30, 40})};
  if (w_initializer) {
    m.graph.initializers.push_back({"W", w});
  } else {
    m.graph.inputs.push_back(float_info("W", {40, 50}));
  }
  m.graph.outputs = {float_info("Y", {30, 50})};
  return m;
}


// An initializer B is packed once and kept (ops::packed_weights): runs give the bits of the same
// product with B fed, and another model's initializer is its own.
TEST(ReferenceBackend, ConstantWeightsKeptPackedGiveTheBitsOfFedOnes) {
  const Tensor x = ramp({30, 40}, 0.37f), w = ramp({40, 50}, 0.11f), other = ramp({40, 50}, 0.53f);
  const auto run = [&](const Model& m, TensorMap feeds) {
    ReferenceBackend backend;
    EXPECT_TRUE(backend.prepare(m, {}).ok());
    Result<TensorMap> out = backend.run(feeds);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    return out.ok() ? *out->find("Y") : Tensor();
  };
  const Model constant = matmul_model(w, true);
  const Model fed = matmul_model(w, false);
  const Tensor want = run(fed, {{"X", x}, {"W", w}});
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(constant, {}).ok());
  for (int pass = 0; pass < 2; ++pass) {
    Result<TensorMap> out = backend.run({{"X", x}});
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(out->find("Y")->same_as(want)) << "pass " << pass;
  }
  EXPECT_TRUE(run(matmul_model(other, true), {{"X", x}}).same_as(run(fed, {{"X", x}, {"W", other}})));
}

// PyTorch shares a parameter among layers through Identity nodes (BERT-like encoders): a product
// whose B is an Identity of an initializer reads its kept panels too (the bits of a fed B).
TEST(ReferenceBackend, WeightsThroughIdentityNodesAreKeptPackedAsTheInitializer) {
  const Tensor x = ramp({30, 40}, 0.41f), w = ramp({40, 50}, 0.23f), fed_w = ramp({40, 50}, 0.61f);
  Model m = opset13_model();
  m.graph.nodes = {make_node("share", "Identity", {"W"}, {"W_shared"}), make_node("again", "Identity", {"W_shared"}, {"W2"}),
                   make_node("mm", "MatMul", {"X", "W2"}, {"Y"})};
  m.graph.inputs = {float_info("X", {30, 40})};
  m.graph.initializers.push_back({"W", w});
  m.graph.outputs = {float_info("Y", {30, 50})};
  ReferenceBackend backend, fed;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  const Model fed_model = matmul_model(w, false);
  ASSERT_TRUE(fed.prepare(fed_model, {}).ok());
  Result<TensorMap> out = backend.run({{"X", x}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // The run kept W's panels: asking for them again finds them and adds nothing.
  const size_t after_run = ops::packed_weights().bytes();
  EXPECT_NE(ops::packed_weights().panels(w, ops::GemmShape{false, false, 30, 50, 40, 40, 50, 50}, w.data<float>(), 1),
            nullptr);
  EXPECT_EQ(ops::packed_weights().bytes(), after_run);
  Result<TensorMap> want = fed.run({{"X", x}, {"W", w}});
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(out->find("Y")->same_as(*want->find("Y")));
  // Identities of a graph input are no constants: each run reads the values fed.
  Model fed_through = m;
  fed_through.graph.initializers.clear();
  fed_through.graph.inputs.push_back(float_info("W", {40, 50}));
  ReferenceBackend through;
  ASSERT_TRUE(through.prepare(fed_through, {}).ok());
  for (const Tensor& b : {w, fed_w}) {
    Result<TensorMap> got = through.run({{"X", x}, {"W", b}});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    Result<TensorMap> expected = fed.run({{"X", x}, {"W", b}});
    ASSERT_TRUE(expected.ok());
    EXPECT_TRUE(got->find("Y")->same_as(*expected->find("Y")));
  }
}

// The same for a convolution's weights, on the path of one tile of positions (weights read where
// they lie when not kept) and on the path of several (packed at each call when not kept).
TEST(ReferenceBackend, ConstantConvWeightsKeptPackedGiveTheBitsOfFedOnes) {
  for (const int64_t side : {9, 40}) {
    SCOPED_TRACE(side);
    const Tensor x = ramp({1, 16, side, side}, 0.29f), w = ramp({24, 16, 3, 3}, 0.07f);
    const auto model = [&](bool w_initializer) {
      Model m = opset13_model();
      Node conv = make_node("conv", "Conv", {"X", "W"}, {"Y"});
      Attribute pads;
      pads.name = "pads";
      pads.type = AttrType::kInts;
      pads.ints = {1, 1, 1, 1};
      conv.attributes.push_back(pads);
      m.graph.nodes = {conv};
      m.graph.inputs = {float_info("X", {1, 16, side, side})};
      if (w_initializer) {
        m.graph.initializers.push_back({"W", w});
      } else {
        m.graph.inputs.push_back(float_info("W", {24, 16, 3, 3}));
      }
      m.graph.outputs = {float_info("Y", {1, 24, side, side})};
      return m;
    };
    const Model fed_model = model(false), constant_model = model(true);  // backends keep them
    ReferenceBackend fed, constant;
    ASSERT_TRUE(fed.prepare(fed_model, {}).ok());
    ASSERT_TRUE(constant.prepare(constant_model, {}).ok());
    Result<TensorMap> want = fed.run({{"X", x}, {"W", w}});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (int pass = 0; pass < 2; ++pass) {
      Result<TensorMap> out = constant.run({{"X", x}});
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      EXPECT_TRUE(out->find("Y")->same_as(*want->find("Y"))) << "pass " << pass;
    }
  }
}

// ***** Unsupported and malformed nodes *****

TEST(ReferenceBackend, UnsupportedOpIsListedWithItsNode) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  a = Relu(X)
  Y = Frobnicate(a)
}
)ONNX";
  Model m = parse(kModel, kRawLoad);
  m.graph.nodes[1].name = "frob";
  ReferenceBackend backend;
  const Status st = backend.prepare(m, {});
  EXPECT_EQ(st.code(), StatusCode::kUnsupportedOp);
  EXPECT_NE(st.message().find("node 1 'frob' (Frobnicate): unknown op Frobnicate in domain ai.onnx"), std::string::npos)
      << st.to_string();
}

TEST(ReferenceBackend, SeveralUnsupportedNodesAreCounted) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, bool c) => (float[2] Y) {
  a = Frobnicate(X)
  b = Twiddle(a)
  Y = If (c) <then_branch = t () => (float[2] y1) { y1 = Frobnicate(b) },
              else_branch = e () => (float[2] y2) { y2 = Identity(b) }>
}
)ONNX";
  Model m = parse(kModel, kRawLoad);
  ReferenceBackend backend;
  const Status st = backend.prepare(m, {});
  EXPECT_EQ(st.code(), StatusCode::kUnsupportedOp);
  EXPECT_NE(st.message().find("3 nodes cannot run on the reference backend; first: node 0"), std::string::npos)
      << st.to_string();
}

TEST(ReferenceBackend, UnsupportedNodeInsideASubgraphIsReportedOnTheEnclosingNode) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X, bool c) => (float[2] Y) {
  a = Relu(X)
  Y = If (c) <then_branch = t () => (float[2] y1) { y1 = Frobnicate(a) },
              else_branch = e () => (float[2] y2) { y2 = Identity(a) }>
}
)ONNX";
  Model m = parse(kModel, kRawLoad);
  ReferenceBackend backend;
  const Status st = backend.prepare(m, {});
  EXPECT_EQ(st.code(), StatusCode::kUnsupportedOp);
  EXPECT_NE(st.message().find("node 1 '' (If): in subgraph 't' of attribute 'then_branch': node 0 '' (Frobnicate)"),
            std::string::npos)
      << st.to_string();
}

TEST(ReferenceBackend, AttributeOfTheWrongTypeIsReportedWithTheNode) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  a = Relu(X)
  Y = LeakyRelu <alpha = 2> (a)
}
)ONNX";
  Model m = parse(kModel, kRawLoad);
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(m, {}).ok());
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({2}, {1, 2})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(out.status().message().find("attribute 'alpha' is of type int, expected float"), std::string::npos)
      << out.status().to_string();
  ASSERT_NE(out.status().node(), nullptr);
  EXPECT_EQ(out.status().node()->index, 1);
  EXPECT_EQ(out.status().node()->op_type, "LeakyRelu");
}

// ***** Subgraph nesting *****

/// A branch graph returning X (from the main graph) as `output`.
std::shared_ptr<const Graph> identity_branch(const std::string& output) {
  auto g = std::make_shared<Graph>();
  g->name = "leaf_" + output;
  g->nodes = {make_node("id_" + output, "Identity", {"X"}, {output})};
  g->outputs = {float_info(output, {1})};
  return g;
}

/// An If node on `c` with the given then-branch; its else-branch returns X.
Node if_node(std::string name, std::string output, std::shared_ptr<const Graph> then_graph) {
  Node n = make_node(std::move(name), "If", {"c"}, {output});
  Attribute then_branch;
  then_branch.name = "then_branch";
  then_branch.type = AttrType::kGraph;
  then_branch.g = std::move(then_graph);
  Attribute else_branch;
  else_branch.name = "else_branch";
  else_branch.type = AttrType::kGraph;
  else_branch.g = identity_branch("else_" + output);
  n.attributes = {then_branch, else_branch};
  return n;
}

/// `depth` levels of subgraphs: Ifs nested in then-branches, the innermost returning X from the
/// main graph.
Model nested_ifs(int depth) {
  Model m = opset13_model();
  std::shared_ptr<const Graph> inner = identity_branch("y0");
  for (int level = 1; level < depth; ++level) {
    auto g = std::make_shared<Graph>();
    g->name = fmt::format("level{}", level);
    const std::string out = fmt::format("y{}", level);
    g->nodes = {if_node(fmt::format("if{}", level), out, inner)};
    g->outputs = {float_info(out, {1})};
    inner = g;
  }
  m.graph.nodes = {if_node("top", "Y", inner)};
  m.graph.inputs = {float_info("X", {1}), ValueInfo{"c", DType::kBool, std::vector<Dim>{}, ""}};
  m.graph.outputs = {float_info("Y", {1})};
  return m;
}

TEST(ReferenceBackend, SubgraphNestingIsBounded) {
  Model ok = nested_ifs(kMaxSubgraphDepth);
  ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(ok, {}).ok());
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({1}, {5})}, {"c", Tensor::scalar<bool>(true)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_TRUE(out->find("Y")->same_as(Tensor::from_vector<float>({1}, {5})));

  Model deep = nested_ifs(kMaxSubgraphDepth + 1);
  const Status st = backend.prepare(deep, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidModel);
  EXPECT_NE(st.message().find("subgraphs nest deeper than 64 levels"), std::string::npos) << st.to_string();
  ASSERT_NE(st.node(), nullptr);
  EXPECT_EQ(st.node()->name, "top");
}

}  // namespace
}  // namespace vn::ref
