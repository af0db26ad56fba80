// SPDX-License-Identifier: Apache-2.0
// If, Loop and Scan run whole subgraphs, so they are tested as models (ONNX text syntax) on the
// reference backend rather than through OpTester's lone KernelContext.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/ir/onnx_import.h"
#include "core/ref/reference_backend.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

/// Parses `text`, applies `edit` (for what the text syntax cannot say, such as an omitted first
/// input), prepares the model on the reference backend and runs it.
Result<TensorMap> run_model(std::string_view text, const TensorMap& feeds, const RunOptions& options = {},
                            const std::function<void(Model&)>& edit = {}) {
  VN_ASSIGN_OR_RETURN(Model model, parse_model_text(text));
  if (edit) edit(model);
  ref::ReferenceBackend backend;
  PrepareOptions prep;
  prep.num_threads = 1;
  VN_RETURN_IF_ERROR(backend.prepare(model, prep));
  return backend.run(feeds, options);
}

/// An edit that omits input `input` of node `node` and drops the graph input that fed it.
std::function<void(Model&)> omit_input(size_t node, size_t input) {
  return [=](Model& m) {
    const std::string name = m.graph.nodes[node].inputs[input];
    m.graph.nodes[node].inputs[input].clear();
    std::erase_if(m.graph.inputs, [&](const ValueInfo& v) { return v.name == name; });
  };
}

/// Runs and expects success; returns the outputs (empty on failure, with a test failure added).
TensorMap expect_run(std::string_view text, const TensorMap& feeds, const std::function<void(Model&)>& edit = {}) {
  Result<TensorMap> out = run_model(text, feeds, {}, edit);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : TensorMap();
}

void expect_tensor(const TensorMap& out, std::string_view name, const Tensor& expected) {
  const Tensor* t = out.find(name);
  ASSERT_NE(t, nullptr) << "no output " << name;
  const std::string diff = compare_tensors(expected, *t, 1e-6, 1e-5);
  EXPECT_TRUE(diff.empty()) << name << ": " << diff;
}

void expect_error(std::string_view text, const TensorMap& feeds, StatusCode code, std::string_view substring,
                  int64_t node_index) {
  Result<TensorMap> out = run_model(text, feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), code) << out.status().to_string();
  EXPECT_NE(out.status().message().find(substring), std::string::npos) << out.status().to_string();
  ASSERT_NE(out.status().node(), nullptr) << out.status().to_string();
  EXPECT_EQ(out.status().node()->index, node_index);
}

Tensor scalar_bool(bool v) { return Tensor::scalar<bool>(v); }

// ***** If *****

std::string if_model(int opset) {
  return fmt::format(R"ONNX(
<ir_version: 8, opset_import: ["" : {}]>
g (bool c, float[2] X) => (float[2] Y) {{
  K = Identity(X)
  Y = If (c) <then_branch = then_g () => (float[2] t) {{ t = Add(K, X) }},
              else_branch = else_g () => (float[2] e) {{ e = Mul(K, X) }}>
}}
)ONNX",
                     opset);
}

TEST(If, EveryVersionRunsTheChosenBranchOverOuterScope) {
  const Tensor x = Tensor::from_vector<float>({2}, {3, -2});
  for (const int opset : {1, 11, 13, 16}) {
    SCOPED_TRACE(opset);
    TensorMap then_out = expect_run(if_model(opset), {{"c", scalar_bool(true)}, {"X", x}});
    expect_tensor(then_out, "Y", Tensor::from_vector<float>({2}, {6, -4}));
    TensorMap else_out = expect_run(if_model(opset), {{"c", scalar_bool(false)}, {"X", x}});
    expect_tensor(else_out, "Y", Tensor::from_vector<float>({2}, {9, 4}));
  }
}

TEST(If, BranchesMayProduceDifferentShapesAndSeveralOutputs) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c) => (float[N] Y, int64 Z) {
  Y, Z = If (c) <then_branch = t () => (float[2] a, int64 b) {
                   a = Constant <value = float[2] {1, 2}> ()
                   b = Constant <value = int64 {7}> () },
                 else_branch = e () => (float[3] p, int64 q) {
                   p = Constant <value = float[3] {4, 5, 6}> ()
                   q = Constant <value = int64 {8}> () }>
}
)ONNX";
  TensorMap t = expect_run(kModel, {{"c", scalar_bool(true)}});
  expect_tensor(t, "Y", Tensor::from_vector<float>({2}, {1, 2}));
  expect_tensor(t, "Z", Tensor::scalar<int64_t>(7));
  TensorMap e = expect_run(kModel, {{"c", scalar_bool(false)}});
  expect_tensor(e, "Y", Tensor::from_vector<float>({3}, {4, 5, 6}));
  expect_tensor(e, "Z", Tensor::scalar<int64_t>(8));
}

TEST(If, NestedBranchesSeeEveryEnclosingScope) {
  // The inner branch reads X (main graph) and S (outer branch) by name.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (bool a, bool b, float[2] X) => (float[2] Y) {
  Y = If (a) <then_branch = outer_t () => (float[2] o1) {
                S = Add(X, X)
                o1 = If (b) <then_branch = inner_t () => (float[2] i1) { i1 = Mul(S, X) },
                             else_branch = inner_e () => (float[2] i2) { i2 = Sub(S, X) }> },
              else_branch = outer_e () => (float[2] o2) { o2 = Identity(X) }>
}
)ONNX";
  const Tensor x = Tensor::from_vector<float>({2}, {1, 3});
  expect_tensor(expect_run(kModel, {{"a", scalar_bool(true)}, {"b", scalar_bool(true)}, {"X", x}}), "Y",
                Tensor::from_vector<float>({2}, {2, 18}));
  expect_tensor(expect_run(kModel, {{"a", scalar_bool(true)}, {"b", scalar_bool(false)}, {"X", x}}), "Y",
                Tensor::from_vector<float>({2}, {1, 3}));
  expect_tensor(expect_run(kModel, {{"a", scalar_bool(false)}, {"b", scalar_bool(true)}, {"X", x}}), "Y", x);
}

TEST(If, ConditionMustBeOneBool) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (bool[2] c) => (float[1] Y) {
  Y = If (c) <then_branch = t () => (float[1] a) { a = Constant <value = float[1] {1}> () },
              else_branch = e () => (float[1] b) { b = Constant <value = float[1] {2}> () }>
}
)ONNX";
  expect_error(kModel, {{"c", Tensor::from_vector<bool>({2}, {true, false})}}, StatusCode::kInvalidModel,
               "cond must be a bool tensor of one element", 0);
}

TEST(If, ErrorInsideABranchIsReportedOnTheIfNode) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] X) => (float[2] Y) {
  Z = Identity(X)
  Y = If (c) <then_branch = t () => (float[2] a) {
                s = Constant <value = int64[1] {3}> ()
                a = Reshape(X, s) },
              else_branch = e () => (float[2] b) { b = Identity(X) }>
}
)ONNX";
  Result<TensorMap> out = run_model(kModel, {{"c", scalar_bool(true)}, {"X", Tensor::from_vector<float>({2}, {1, 2})}});
  ASSERT_FALSE(out.ok());
  ASSERT_NE(out.status().node(), nullptr);
  EXPECT_EQ(out.status().node()->index, 1);
  EXPECT_EQ(out.status().node()->op_type, "If");
  EXPECT_NE(out.status().message().find("in subgraph 't'"), std::string::npos) << out.status().to_string();
  EXPECT_NE(out.status().message().find("(Reshape)"), std::string::npos) << out.status().to_string();
}

TEST(If, LoneKernelWithoutSubgraphRunnerFails) {
  OpTester t("If", 13);
  Attribute branch;
  branch.name = "then_branch";
  branch.type = AttrType::kGraph;
  auto g = std::make_shared<Graph>();
  g->outputs.push_back(ValueInfo{"x", DType::kFloat32, std::nullopt, ""});
  branch.g = g;
  t.attr(branch);
  t.input(scalar_bool(true));
  t.expect_failure(StatusCode::kUnsupportedOp, "needs an executor that runs subgraphs");
}

// ***** Loop *****

// A for loop over M accumulating k * X for k = 0, 1, ... (k is a second loop-carried value, so the
// body needs no Cast and parses at opset 1), with a scan output of the running sums; the body reads
// the outer tensor X.
constexpr std::string_view kSumLoop = R"ONNX(
<ir_version: 8, opset_import: ["" : {}]>
g (int64 M, float[1] X) => (float[1] S, float[1] K, float[N, 1] Partial) {{
  zero = Constant <value = float[1] {{0}}> ()
  S, K, Partial = Loop (M, , zero, zero) <body = body (int64 i, bool c, float[1] acc, float[1] k)
                                                   => (bool c_out, float[1] acc_out, float[1] k_out, float[1] scan) {{
    c_out = Identity(c)
    one = Constant <value = float[1] {{1}}> ()
    k_out = Add(k, one)
    term = Mul(k, X)
    acc_out = Add(acc, term)
    scan = Identity(acc_out)
  }}>
}}
)ONNX";

TEST(Loop, EveryVersionRunsAForLoopWithScanOutputs) {
  for (const int opset : {1, 11, 13, 16}) {
    SCOPED_TRACE(opset);
    TensorMap out = expect_run(fmt::format(kSumLoop, opset),
                               {{"M", Tensor::scalar<int64_t>(4)}, {"X", Tensor::from_vector<float>({1}, {2})}});
    expect_tensor(out, "S", Tensor::from_vector<float>({1}, {12}));
    expect_tensor(out, "K", Tensor::from_vector<float>({1}, {4}));
    expect_tensor(out, "Partial", Tensor::from_vector<float>({4, 1}, {0, 2, 6, 12}));
  }
}

TEST(Loop, ZeroTripCountReturnsInitialValuesAndEmptyScans) {
  for (const int64_t m : {int64_t{0}, int64_t{-3}}) {
    TensorMap out = expect_run(fmt::format(kSumLoop, 13),
                               {{"M", Tensor::scalar<int64_t>(m)}, {"X", Tensor::from_vector<float>({1}, {2})}});
    expect_tensor(out, "S", Tensor::from_vector<float>({1}, {0}));
    expect_tensor(out, "Partial", Tensor::from_vector<float>({0, 1}, {}));
  }
}

// A while loop: no trip count, runs while i < limit (the body's condition output decides).
constexpr std::string_view kWhileLoop = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M, bool start, int64 limit) => (int64 Count, int64[N] Seen) {
  init = Constant <value = int64 {0}> ()
  Count, Seen = Loop (M, start, init) <body = body (int64 i, bool c, int64 n) => (bool go, int64 n_out, int64 seen) {
    one = Constant <value = int64 {1}> ()
    n_out = Add(n, one)
    go = Less(n_out, limit)
    seen = Identity(i)
  }>
}
)ONNX";

TEST(Loop, WhileLoopStopsWhenTheBodySaysSo) {
  TensorMap out =
      expect_run(kWhileLoop, {{"start", scalar_bool(true)}, {"limit", Tensor::scalar<int64_t>(3)}}, omit_input(1, 0));
  expect_tensor(out, "Count", Tensor::scalar<int64_t>(3));
  expect_tensor(out, "Seen", Tensor::from_vector<int64_t>({3}, {0, 1, 2}));
  // A false initial condition runs no iteration.
  TensorMap none =
      expect_run(kWhileLoop, {{"start", scalar_bool(false)}, {"limit", Tensor::scalar<int64_t>(3)}}, omit_input(1, 0));
  expect_tensor(none, "Count", Tensor::scalar<int64_t>(0));
  EXPECT_EQ(none.find("Seen")->shape(), Shape{0});
}

TEST(Loop, TripCountAndConditionTogetherStopAtTheFirst) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M, int64 limit) => (int64 Count) {
  init = Constant <value = int64 {0}> ()
  t = Constant <value = bool {1}> ()
  Count = Loop (M, t, init) <body = body (int64 i, bool c, int64 n) => (bool go, int64 n_out) {
    one = Constant <value = int64 {1}> ()
    n_out = Add(n, one)
    go = Less(n_out, limit)
  }>
}
)ONNX";
  expect_tensor(expect_run(kModel, {{"M", Tensor::scalar<int64_t>(2)}, {"limit", Tensor::scalar<int64_t>(5)}}), "Count",
                Tensor::scalar<int64_t>(2));
  expect_tensor(expect_run(kModel, {{"M", Tensor::scalar<int64_t>(9)}, {"limit", Tensor::scalar<int64_t>(5)}}), "Count",
                Tensor::scalar<int64_t>(5));
}

TEST(Loop, BodyWithANestedIfReadsTheMainGraph) {
  // Even iterations add X, odd ones subtract it.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M, float[2] X) => (float[2] Y) {
  zero = Constant <value = float[2] {0, 0}> ()
  Y = Loop (M, , zero) <body = body (int64 i, bool c, float[2] acc) => (bool c_out, float[2] acc_out) {
    c_out = Identity(c)
    two = Constant <value = int64 {2}> ()
    half = Div(i, two)
    back = Mul(half, two)
    even = Equal(back, i)
    acc_out = If (even) <then_branch = t () => (float[2] a) { a = Add(acc, X) },
                         else_branch = e () => (float[2] b) { b = Sub(acc, X) }>
  }>
}
)ONNX";
  TensorMap out =
      expect_run(kModel, {{"M", Tensor::scalar<int64_t>(5)}, {"X", Tensor::from_vector<float>({2}, {1, 10})}});
  expect_tensor(out, "Y", Tensor::from_vector<float>({2}, {1, 10}));
}

TEST(Loop, ScanOutputsMustKeepTheirShape) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M) => (int64[N, M] Out) {
  Out = Loop (M, ) <body = body (int64 i, bool c) => (bool c_out, int64[K] r) {
    c_out = Identity(c)
    zero = Constant <value = int64 {0}> ()
    one = Constant <value = int64 {1}> ()
    r = Range(zero, i, one)
  }>
}
)ONNX";
  expect_error(kModel, {{"M", Tensor::scalar<int64_t>(3)}}, StatusCode::kShapeMismatch,
               "scan output 'r' is int64 (1,) in iteration 1 but was int64 (0,) before", 0);
}

TEST(Loop, RefusesAScanOutputOverTheTensorLimit) {
  // Each iteration stacks the same 1 GiB tensor (never touched, so it costs no memory); the 65th
  // would take the stacked output past the 64 GiB limit.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M, float[268435456] Big) => (float[N, 268435456] Out) {
  Out = Loop (M, ) <body = body (int64 i, bool c) => (bool c_out, float[268435456] r) {
    c_out = Identity(c)
    r = Identity(Big)
  }>
}
)ONNX";
  expect_error(kModel, {{"M", Tensor::scalar<int64_t>(1000)}, {"Big", Tensor(DType::kFloat32, {int64_t{1} << 28})}},
               StatusCode::kShapeMismatch, "larger than the 64 GiB limit", 0);
}

TEST(Loop, CancellationStopsAHostileTripCount) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M) => (int64 Count) {
  init = Constant <value = int64 {0}> ()
  Count = Loop (M, , init) <body = body (int64 i, bool c, int64 n) => (bool c_out, int64 n_out) {
    c_out = Identity(c)
    n_out = Identity(i)
  }>
}
)ONNX";
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  Result<TensorMap> out = run_model(kModel, {{"M", Tensor::scalar<int64_t>(1000000000000000000)}}, options);
  stopper.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled) << out.status().to_string();
}

TEST(Loop, MustBeInt64AndBodySignatureMustMatch) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (int64 M) => (int64 Count) {
  init = Constant <value = int64 {0}> ()
  Count = Loop (M, , init) <body = body (int64 i, bool c) => (bool c_out, int64 n_out) {
    c_out = Identity(c)
    n_out = Identity(i)
  }>
}
)ONNX";
  Result<Model> model = parse_model_text(kModel, LoadOptions{false, false});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ref::ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(*model, {}).ok());
  Result<TensorMap> out = backend.run({{"M", Tensor::scalar<int64_t>(2)}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("body 'body' has 2 inputs and 2 outputs, but 3 and 2 are needed"),
            std::string::npos)
      << out.status().to_string();
}

// ***** Scan *****

TEST(Scan, Scan9SumsRowsForwardAndBackward) {
  // State: running sum of rows; scan outputs: the running sums, appended (axis 0) and prepended
  // along axis 1.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : {}]>
g (float[2] init, float[3, 2] X) => (float[2] S, float[3, 2] Fwd, float[2, 3] Rev) {{
  S, Fwd, Rev = Scan (init, X) <num_scan_inputs = 1, scan_output_axes = [0, -1], scan_output_directions = [0, 1],
                                body = body (float[2] s, float[2] x) => (float[2] s_out, float[2] a, float[2] b) {{
    s_out = Add(s, x)
    a = Identity(s_out)
    b = Identity(s_out)
  }}>
}}
)ONNX";
  const TensorMap feeds = {{"init", Tensor::from_vector<float>({2}, {0, 0})},
                           {"X", Tensor::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6})}};
  for (const int opset : {9, 11, 16}) {
    SCOPED_TRACE(opset);
    TensorMap out = expect_run(fmt::format(kModel, opset), feeds);
    expect_tensor(out, "S", Tensor::from_vector<float>({2}, {9, 12}));
    expect_tensor(out, "Fwd", Tensor::from_vector<float>({3, 2}, {1, 2, 4, 6, 9, 12}));
    // Prepended along axis 1: column k holds iteration 2-k.
    expect_tensor(out, "Rev", Tensor::from_vector<float>({2, 3}, {9, 4, 1, 12, 6, 2}));
  }
}

TEST(Scan, Scan9ScansAnInnerAxisInReverse) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2, 3] X) => (float[3, 2] Cols) {
  Cols = Scan (X) <num_scan_inputs = 1, scan_input_axes = [-1], scan_input_directions = [1],
                   body = body (float[2] x) => (float[2] y) { y = Identity(x) }>
}
)ONNX";
  TensorMap out = expect_run(kModel, {{"X", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_tensor(out, "Cols", Tensor::from_vector<float>({3, 2}, {3, 6, 2, 5, 1, 4}));
}

TEST(Scan, Scan9InputsMustAgreeOnLength) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 11]>
g (float[2] A, float[3] B) => (float[N] Y) {
  Y = Scan (A, B) <num_scan_inputs = 2, body = body (float a, float b) => (float y) { y = Add(a, b) }>
}
)ONNX";
  Result<Model> model = parse_model_text(kModel, LoadOptions{false, false});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ref::ReferenceBackend backend;
  ASSERT_TRUE(backend.prepare(*model, {}).ok());
  Result<TensorMap> out =
      backend.run({{"A", Tensor::from_vector<float>({2}, {1, 2})}, {"B", Tensor::from_vector<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kShapeMismatch);
  EXPECT_NE(out.status().message().find("scan input 1 has 3 elements along its scan axis"), std::string::npos)
      << out.status().to_string();
}

TEST(Scan, Scan8BatchesWithSequenceLengthsAndReverseInputs) {
  // Batch 0 has length 3, batch 1 length 2; input 1 is scanned in reverse within each length.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 8]>
g (int64[2] lens, float[2, 1] init, float[2, 3, 1] X) => (float[2, 1] S, float[2, 3, 1] Y, float[2, 3, 1] R) {
  S, Y, R = Scan (lens, init, X, X) <num_scan_inputs = 2, directions = [0, 1],
                  body = body (float[1] s, float[1] x, float[1] xr) => (float[1] s_out, float[1] y, float[1] r) {
    s_out = Add(s, x)
    y = Identity(s_out)
    r = Identity(xr)
  }>
}
)ONNX";
  TensorMap out = expect_run(kModel, {{"lens", Tensor::from_vector<int64_t>({2}, {3, 2})},
                                      {"init", Tensor::from_vector<float>({2, 1}, {0, 100})},
                                      {"X", Tensor::from_vector<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6})}});
  expect_tensor(out, "S", Tensor::from_vector<float>({2, 1}, {6, 109}));
  expect_tensor(out, "Y", Tensor::from_vector<float>({2, 3, 1}, {1, 3, 6, 104, 109, 0}));
  expect_tensor(out, "R", Tensor::from_vector<float>({2, 3, 1}, {3, 2, 1, 5, 4, 0}));

  // Without sequence_lens every batch runs the full length.
  constexpr std::string_view kNoLens = R"ONNX(
<ir_version: 8, opset_import: ["" : 8]>
g (int64[2] lens, float[2, 1] init, float[2, 3, 1] X) => (float[2, 1] S) {
  S = Scan (lens, init, X) <num_scan_inputs = 1, body = body (float[1] s, float[1] x) => (float[1] s_out) {
    s_out = Add(s, x)
  }>
}
)ONNX";
  TensorMap full = expect_run(kNoLens,
                              {{"init", Tensor::from_vector<float>({2, 1}, {0, 100})},
                               {"X", Tensor::from_vector<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6})}},
                              omit_input(0, 0));
  expect_tensor(full, "S", Tensor::from_vector<float>({2, 1}, {6, 115}));
}

TEST(Scan, KernelsRejectMissingBodyAndBadAttributes) {
  OpTester t("Scan", 11);
  t.input<float>({2}, {1, 2});
  t.expect_failure(StatusCode::kInvalidModel, "graph attribute 'body' is required");

  OpTester l("Loop", 13);
  l.omitted_input();
  l.omitted_input();
  l.expect_failure(StatusCode::kInvalidModel, "graph attribute 'body' is required");
}

}  // namespace
}  // namespace vn::ops::testing
