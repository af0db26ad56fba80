// SPDX-License-Identifier: Apache-2.0
// The reference interpreter itself: execution order and the observer, cancellation, tensor
// lifetimes (observed through the owners of view tensors), marked outputs, feed validation and
// how unsupported or malformed nodes are reported.
#include "core/ref/reference_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
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

namespace vn::ref {
namespace {

constexpr LoadOptions kRawLoad{false, false};  // keep models the checker would refuse

Model parse(std::string_view text, const LoadOptions& options = {}) {
  Result<Model> m = parse_model_text(text, options);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : Model();
}

Node make_node(std::string name, std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

ValueInfo float_info(std::string name, Shape shape) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::kFloat32;
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::of(d));
  v.shape = dims;
  return v;
}

Model opset13_model() {
  Model m;
  m.opset_imports = {{"", 13}};
  return m;
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

// ***** Elementwise chains *****

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

Tensor ramp(Shape shape, float scale);

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
                   make_node("pointwise", "Conv", {"X", "V"}, {"P"}), make_node("relu2", "Relu", {"P"}, {"Z"})};
  const Shape out{1, 16, side, side};
  m.graph.initializers = {{"W", ramp({16, 8 / group, 3, 3}, 0.13f)}, {"B", ramp({16}, 0.7f)},
                          {"V", ramp({16, 8, 1, 1}, 0.31f)}};
  m.graph.inputs = {float_info("X", {1, 8, side, side}), float_info("R", out)};
  m.graph.outputs = {float_info("Y", out), float_info("Z", out)};
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
      std::vector<std::string> names{"Y", "Z"};
      if (c_out) names.push_back("C");
      std::vector<std::string> ops =
          ops_run_unobserved_matching_observed(conv_chain_model(side, group, c_out), {{"X", x}, {"R", r}}, names);
      std::sort(ops.begin(), ops.end());
      // Unobserved, each Conv runs its chain (its time includes the chain's); a Conv whose output
      // is kept leaves its chain to run as one pass after it.
      EXPECT_EQ(ops, c_out ? (std::vector<std::string>{"Conv", "Conv", "Relu"})
                           : (std::vector<std::string>{"Conv", "Conv"}));
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

Tensor ramp(Shape shape, float scale) {
  Tensor t(DType::kFloat32, shape);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::sin(static_cast<float>(i) * scale);
  return t;
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
