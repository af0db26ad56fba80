// SPDX-License-Identifier: Apache-2.0
// The reference backend's fp64 mode: the rewrite it runs (dtypes of initializers, Constants,
// Casts, inputs and subgraphs), agreement with float32 runs on a CNN-like model, accuracy on a
// computation built to lose precision in float32 (checked against a long double oracle), and the
// operands the ONNX spec pins to float32.
#include "core/ref/fp64.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/onnx_import.h"
#include "core/ops/families.h"
#include "core/ops/kernel_util.h"
#include "core/ref/reference_backend.h"

namespace vn::ref {
namespace {

Model parse(std::string_view text) {
  Result<Model> m = parse_model_text(text);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : Model();
}

/// Runs `model` on a reference backend with `options`, recording each node output's dtype.
TensorMap run(const Model& model, const TensorMap& feeds, ReferenceOptions options,
              std::map<std::string, DType>* seen = nullptr,
              const ops::OpRegistry& registry = ops::reference_registry()) {
  ReferenceBackend backend(options, registry);
  PrepareOptions prep;
  prep.num_threads = 1;
  const Status st = backend.prepare(model, prep);
  EXPECT_TRUE(st.ok()) << st.to_string();
  RunOptions run_options;
  run_options.observer = [&](int64_t, const Node&, const TensorMap& outputs) {
    if (seen) {
      for (const NamedTensor& t : outputs) (*seen)[t.name] = t.tensor.dtype();
    }
    return true;
  };
  Result<TensorMap> out = backend.run(feeds, run_options);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : TensorMap();
}

std::string floats(const std::vector<float>& v) {
  std::string s;
  for (float x : v) s += fmt::format("{}{}", s.empty() ? "" : ", ", x);
  return s;
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Fp64, RewriteWidensInitializersConstantsCastsInputsAndSubgraphs) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float16[2] H, int32[2] I, bool c) => (float[2] Y, float16[2] Z) <float[2] W = {0.5, 0.25}> {
  k = Constant <value_float = 1.5> ()
  ks = Constant <value_floats = [1.0, 2.0]> ()
  f = Cast <to = 1> (I)
  a = Add(f, W)
  Y = If (c) <then_branch = t () => (float[2] y1) { y1 = Mul(a, k) },
              else_branch = e () => (float[2] y2) { y2 = Add(a, ks) }>
  Z = Identity(H)
}
)ONNX";
  const Model m = parse(kModel);
  Result<Model> wide = widen_model_to_fp64(m);
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  const Graph& g = wide->graph;
  EXPECT_EQ(g.initializers[0].tensor.dtype(), DType::kFloat64);
  EXPECT_EQ(g.inputs[0].dtype, DType::kFloat64);
  EXPECT_EQ(g.inputs[1].dtype, DType::kInt32);
  EXPECT_EQ(g.outputs[0].dtype, DType::kFloat64);
  ASSERT_NE(g.nodes[0].attr("value"), nullptr);
  EXPECT_EQ(g.nodes[0].attr("value")->t.dtype(), DType::kFloat64);
  EXPECT_EQ(g.nodes[0].attr("value")->t.shape(), Shape{});
  EXPECT_EQ(g.nodes[1].attr("value")->t.shape(), Shape{2});
  EXPECT_EQ(g.nodes[2].attr("to")->i, 11);
  const Graph& then_branch = *g.nodes[4].attr("then_branch")->g;
  EXPECT_EQ(then_branch.outputs[0].dtype, DType::kFloat64);
  // The original model is untouched, subgraphs included.
  EXPECT_EQ(m.graph.initializers[0].tensor.dtype(), DType::kFloat32);
  EXPECT_EQ(m.graph.nodes[4].attr("then_branch")->g->outputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(m.graph.nodes[2].attr("to")->i, 1);

  // Running it: intermediates are float64, outputs come back in their declared dtypes.
  const TensorMap feeds = {{"H", Tensor::from_vector<Eigen::half>({2}, {Eigen::half(1.5f), Eigen::half(-2.0f)})},
                           {"I", Tensor::from_vector<int32_t>({2}, {1, 2})},
                           {"c", Tensor::scalar<bool>(true)}};
  std::map<std::string, DType> seen;
  const TensorMap out = run(m, feeds, ReferenceOptions{true}, &seen);
  EXPECT_EQ(seen["k"], DType::kFloat64);
  EXPECT_EQ(seen["f"], DType::kFloat64);
  EXPECT_EQ(seen["a"], DType::kFloat64);
  EXPECT_EQ(seen["Z"], DType::kFloat64);
  ASSERT_NE(out.find("Y"), nullptr);
  EXPECT_TRUE(out.find("Y")->same_as(Tensor::from_vector<float>({2}, {2.25f, 3.375f})));
  EXPECT_TRUE(out.find("Z")->same_as(feeds.find("H")->clone()));
  const TensorMap narrow = run(m, feeds, ReferenceOptions{false}, &seen);
  EXPECT_EQ(seen["a"], DType::kFloat32);
  EXPECT_TRUE(narrow.find("Y")->same_as(*out.find("Y")));
}

TEST(Fp64, MarkedIntermediatesComeBackInTheirDeclaredDtype) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] X) => (float[2] Y) {
  a = Relu(X)
  Y = Neg(a)
}
)ONNX";
  const Model m = parse(kModel);  // shape inference declares a as float32
  ReferenceBackend backend(ReferenceOptions{true});
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(backend.prepare(m, prep).ok());
  Result<TensorMap> out = backend.run({{"X", Tensor::from_vector<float>({2}, {-1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->find("a")->dtype(), DType::kFloat32);
  EXPECT_EQ(out->find("Y")->dtype(), DType::kFloat32);
}

TEST(Fp64, AgreesWithFloat32OnAConvGemmSoftmaxModel) {
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 3, 8, 8] X, float[4, 3, 3, 3] W, float[4] B, float[64, 10] G, float[10] C) => (float[2, 10] P) {
  conv = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (X, W, B)
  act = Relu(conv)
  flat = Flatten <axis = 1> (act)
  logits = Gemm(flat, G, C)
  P = Softmax <axis = 1> (logits)
}
)ONNX";
  const Model m = parse(kModel);
  const TensorMap feeds = {
      {"X", Tensor::from_vector<float>({2, 3, 8, 8}, random_values(2 * 3 * 8 * 8, 1))},
      {"W", Tensor::from_vector<float>({4, 3, 3, 3}, random_values(4 * 27, 2))},
      {"B", Tensor::from_vector<float>({4}, random_values(4, 3))},
      {"G", Tensor::from_vector<float>({64, 10}, random_values(640, 4))},
      {"C", Tensor::from_vector<float>({10}, random_values(10, 5))},
  };
  std::map<std::string, DType> seen;
  const TensorMap f32 = run(m, feeds, ReferenceOptions{false});
  const TensorMap f64 = run(m, feeds, ReferenceOptions{true}, &seen);
  EXPECT_EQ(seen["logits"], DType::kFloat64);
  const Tensor* a = f32.find("P");
  const Tensor* b = f64.find("P");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->dtype(), DType::kFloat32);
  ASSERT_EQ(a->shape(), b->shape());
  double worst = 0;
  for (int64_t i = 0; i < a->numel(); ++i) {
    const double x = a->data<float>()[i], y = b->data<float>()[i];
    worst = std::max(worst, std::abs(x - y) / std::max(std::abs(y), 1e-30));
  }
  EXPECT_LT(worst, 5e-6) << "float32 and float64 runs differ by more than float32 rounding";
}

TEST(Fp64, IsAccurateWhereFloat32LosesEverything) {
  // Y = (sum of 1e8 and 4096 copies of 0.3) - 1e8: float32 cannot hold 1e8 + 1228.8 closer than
  // its spacing of 8, so the difference comes out a multiple of 8; float64 keeps ~1e-8 relative.
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4097] X) => (float Y) <float big = {100000000.0}> {
  s = ReduceSum <keepdims = 0> (X)
  Y = Sub(s, big)
}
)ONNX";
  const Model m = parse(kModel);
  std::vector<float> x(4097, 0.3f);
  x[0] = 1e8f;
  const TensorMap feeds = {{"X", Tensor::from_vector<float>({4097}, x)}};
  long double exact = 0;
  for (float v : x) exact += static_cast<long double>(v);
  exact -= 1e8L;
  const float oracle = static_cast<float>(exact);

  const TensorMap f64 = run(m, feeds, ReferenceOptions{true});
  const TensorMap f32 = run(m, feeds, ReferenceOptions{false});
  ASSERT_NE(f64.find("Y"), nullptr);
  ASSERT_NE(f32.find("Y"), nullptr);
  const float wide = f64.find("Y")->data<float>()[0];
  const float narrow = f32.find("Y")->data<float>()[0];
  EXPECT_EQ(wide, oracle) << "oracle " << static_cast<double>(exact);
  EXPECT_EQ(std::fmod(narrow, 8.0f), 0.0f) << narrow;
  EXPECT_GT(std::abs(narrow - oracle), 1.0f) << floats({narrow, wide, oracle});
}

// A Resize and a DequantizeLinear that insist on the spec's float32 operands, to check that fp64
// mode narrows Resize's scales and widens DequantizeLinear's result.
Status strict_resize(ops::KernelContext& ctx) {
  if (ctx.input(0).dtype() != DType::kFloat64 || ctx.input(2).dtype() != DType::kFloat32) {
    return ctx.fail(StatusCode::kUnsupportedDType, "X {} scales {}", dtype_name(ctx.input(0).dtype()),
                    dtype_name(ctx.input(2).dtype()));
  }
  ctx.set_output(0, ctx.input(0));
  return Status::OK();
}

Status strict_dequantize(ops::KernelContext& ctx) {
  if (ctx.input(1).dtype() != DType::kFloat32) {
    return ctx.fail(StatusCode::kUnsupportedDType, "scale {}", dtype_name(ctx.input(1).dtype()));
  }
  VN_ASSIGN_OR_RETURN(Tensor y, tensor_cast(ctx.input(0), DType::kFloat32));
  ctx.set_output(0, std::move(y));
  return Status::OK();
}

TEST(Fp64, OperandsPinnedToFloat32AreNarrowedAndTheirResultsWidened) {
  static const ops::OpRegistry registry = [] {
    ops::OpRegistry r;
    r.add("Resize", 13, strict_resize);
    r.add("DequantizeLinear", 13, strict_dequantize);
    ops::register_elementwise_binary_ops(r);
    return r;
  }();
  constexpr std::string_view kModel = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 1, 2, 2] X, uint8[2] Q) => (float[1, 1, 2, 2] Y, float[2] D) <float[4] scales = {1, 1, 1, 1}, float s = {0.5}, float[2] bias = {0.25, 0.25}> {
  Y = Resize(X, , scales)
  q = DequantizeLinear(Q, s)
  D = Add(q, bias)
}
)ONNX";
  const Model m = parse(kModel);
  std::map<std::string, DType> seen;
  const TensorMap out = run(
      m,
      {{"X", Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4})}, {"Q", Tensor::from_vector<uint8_t>({2}, {2, 4})}},
      ReferenceOptions{true}, &seen, registry);
  EXPECT_EQ(seen["q"], DType::kFloat64);
  ASSERT_NE(out.find("D"), nullptr);
  EXPECT_TRUE(out.find("D")->same_as(Tensor::from_vector<float>({2}, {2.25f, 4.25f})));
  EXPECT_TRUE(out.find("Y")->same_as(Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4})));
}

}  // namespace
}  // namespace vn::ref
