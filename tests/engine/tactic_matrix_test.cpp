// SPDX-License-Identifier: Apache-2.0
// The engine matrix: every tactic of core/engine/tactics.inc under every precision, on shapes that
// cover tile edges (Winograd's 2x2 tiles, the 32-deep slices of fp16 accumulation, split-K with
// fewer rows than splits, empty batches), against the reference backend with a tolerance derived
// from the precision. Combinations a tactic does not support are skipped with the reason. int8
// layers get min-max scales of their real inputs and reference outputs, as calibration on the
// test's own data would give, and a tolerance of a few steps of the output's scale.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/engine/calibration.h"
#include "core/engine/engine_backend.h"
#include "core/engine/folding.h"
#include "core/engine/fusion.h"
#include "core/engine/layer.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

/// One model that fuses into a single layer of one kind.
struct Case {
  std::string name;
  std::string text;
  std::map<std::string, Shape> weights;  ///< graph inputs turned into random initializers
  float lo = -1.0f, hi = 1.0f;           ///< range of the random feeds
};

const std::string kHeader13 = "<ir_version: 8, opset_import: [\"\" : 13]>\n";
const std::string kHeader17 = "<ir_version: 8, opset_import: [\"\" : 17]>\n";

std::vector<Case> cases_for(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv:
      return {
          {"3x3_pad1_c3_m8_7x7",
           kHeader13 + "g (float[1,3,7,7] X, float[8,3,3,3] W, float[8] B) => (float[1,8,7,7] Y) "
                       "{ Y = Conv<pads=[1,1,1,1]>(X, W, B) }",
           {{"W", {8, 3, 3, 3}}, {"B", {8}}}},
          {"3x3_pad1_c8_m9_4x5_n2",
           kHeader13 + "g (float[2,8,4,5] X, float[9,8,3,3] W) => (float[2,9,4,5] Y) "
                       "{ Y = Conv<pads=[1,1,1,1]>(X, W) }",
           {{"W", {9, 8, 3, 3}}}},
          {"3x3_valid_c5_m4_6x6",
           kHeader13 + "g (float[1,5,6,6] X, float[4,5,3,3] W) => (float[1,4,4,4] Y) { Y = Conv(X, W) }",
           {{"W", {4, 5, 3, 3}}}},
          {"3x3_same_c16_m16_9x9",
           kHeader13 + "g (float[1,16,9,9] X, float[16,16,3,3] W) => (float[1,16,9,9] Y) "
                       "{ Y = Conv<auto_pad=\"SAME_UPPER\">(X, W) }",
           {{"W", {16, 16, 3, 3}}}},
          {"1x1_c16_m8_6x6",
           kHeader13 + "g (float[1,16,6,6] X, float[8,16,1,1] W) => (float[1,8,6,6] Y) { Y = Conv(X, W) }",
           {{"W", {8, 16, 1, 1}}}},
          {"3x3_stride2_c4_m4_9x9",
           kHeader13 + "g (float[1,4,9,9] X, float[4,4,3,3] W) => (float[1,4,5,5] Y) "
                       "{ Y = Conv<pads=[1,1,1,1], strides=[2,2]>(X, W) }",
           {{"W", {4, 4, 3, 3}}}},
          {"3x3_depthwise_g4",
           kHeader13 + "g (float[1,4,8,8] X, float[4,1,3,3] W) => (float[1,4,8,8] Y) "
                       "{ Y = Conv<pads=[1,1,1,1], group=4>(X, W) }",
           {{"W", {4, 1, 3, 3}}}},
          // MobileNetV3's strided 5x5 depthwise layer with its bias and HardSwish fused.
          {"5x5_depthwise_s2_hardswish",
           kHeader17 + "g (float[1,8,11,13] X, float[8,1,5,5] W, float[8] B) => (float[1,8,6,7] Y) "
                       "{ c = Conv<pads=[2,2,2,2], strides=[2,2], group=8>(X, W, B)  Y = HardSwish(c) }",
           {{"W", {8, 1, 5, 5}}, {"B", {8}}}},
          // RegNetY's groups of 8 channels in and out.
          {"3x3_groups_of_8",
           kHeader13 + "g (float[1,16,9,9] X, float[16,8,3,3] W) => (float[1,16,9,9] Y) "
                       "{ Y = Conv<pads=[1,1,1,1], group=2>(X, W) }",
           {{"W", {16, 8, 3, 3}}}},
          {"3x3_dilation2",
           kHeader13 + "g (float[1,2,11,11] X, float[3,2,3,3] W) => (float[1,3,7,7] Y) "
                       "{ Y = Conv<dilations=[2,2]>(X, W) }",
           {{"W", {3, 2, 3, 3}}}},
          {"1d_k3",
           kHeader13 + "g (float[1,3,10] X, float[4,3,3] W) => (float[1,4,10] Y) { Y = Conv<pads=[1,1]>(X, W) }",
           {{"W", {4, 3, 3}}}},
          {"empty_batch",
           kHeader13 + "g (float[0,3,5,5] X, float[4,3,3,3] W) => (float[0,4,5,5] Y) "
                       "{ Y = Conv<pads=[1,1,1,1]>(X, W) }",
           {{"W", {4, 3, 3, 3}}}},
      };
    case LayerKind::kGemm:
      return {
          {"matmul_1x1x1",
           kHeader13 + "g (float[1,1] A, float[1,1] B) => (float[1,1] Y) { Y = MatMul(A, B) }",
           {{"B", {1, 1}}}},
          {"matmul_31x32x33",
           kHeader13 + "g (float[31,32] A, float[32,33] B) => (float[31,33] Y) { Y = MatMul(A, B) }",
           {{"B", {32, 33}}}},
          {"matmul_7x65x9",
           kHeader13 + "g (float[7,65] A, float[65,9] B) => (float[7,9] Y) { Y = MatMul(A, B) }",
           {{"B", {65, 9}}}},
          {"matmul_k3",
           kHeader13 + "g (float[4,3] A, float[3,5] B) => (float[4,5] Y) { Y = MatMul(A, B) }",
           {{"B", {3, 5}}}},
          {"matmul_batched",
           kHeader13 + "g (float[2,3,5,7] A, float[7,4] B) => (float[2,3,5,4] Y) { Y = MatMul(A, B) }",
           {{"B", {7, 4}}}},
          // A linear layer over a sequence laid out (L, batch 1, d), as torch exports attention's
          // projections: A's batch folds into one product's rows.
          {"matmul_sequence",
           kHeader13 + "g (float[6,1,40] A, float[40,9] B) => (float[6,1,9] Y) { Y = MatMul(A, B) }",
           {{"B", {40, 9}}}},
          {"matmul_runtime_operands",
           kHeader13 + "g (float[2,4,6] A, float[2,6,3] B) => (float[2,4,3] Y) { Y = MatMul(A, B) }",
           {}},
          {"matmul_vector",
           kHeader13 + "g (float[6] A, float[6,4] B) => (float[4] Y) { Y = MatMul(A, B) }",
           {{"B", {6, 4}}}},
          {"gemm_transB_bias",
           kHeader13 + "g (float[5,40] A, float[6,40] B, float[6] C) => (float[5,6] Y) "
                       "{ Y = Gemm<transB=1, alpha=0.5, beta=2.0>(A, B, C) }",
           {{"B", {6, 40}}, {"C", {6}}}},
          {"gemm_transB_one_row",
           kHeader13 + "g (float[1,70] A, float[33,70] B) => (float[1,33] Y) { Y = Gemm<transB=1>(A, B) }",
           {{"B", {33, 70}}}},
          {"matmul_empty",
           kHeader13 + "g (float[0,8] A, float[8,3] B) => (float[0,3] Y) { Y = MatMul(A, B) }",
           {{"B", {8, 3}}}},
      };
    case LayerKind::kSoftmax:
      return {
          {"axis_last", kHeader13 + "g (float[2,33] X) => (float[2,33] Y) { Y = Softmax(X) }", {}, -4.0f, 4.0f},
          {"axis_mid",
           kHeader13 + "g (float[3,4,5] X) => (float[3,4,5] Y) { Y = Softmax<axis=1>(X) }",
           {},
           -4.0f,
           4.0f},
          {"legacy_flatten",
           "<ir_version: 7, opset_import: [\"\" : 11]>\ng (float[2,3,4] X) => (float[2,3,4] Y) "
           "{ Y = Softmax<axis=1>(X) }",
           {},
           -4.0f,
           4.0f},
      };
    case LayerKind::kLayerNorm:
      return {
          {"op_last_axis",
           kHeader17 + "g (float[4,31] X, float[31] S, float[31] B) => (float[4,31] Y) "
                       "{ Y = LayerNormalization<axis=-1>(X, S, B) }",
           {{"S", {31}}, {"B", {31}}}},
          {"op_axis1",
           kHeader17 + "g (float[2,3,8] X, float[3,8] S, float[3,8] B) => (float[2,3,8] Y) "
                       "{ Y = LayerNormalization<axis=1>(X, S, B) }",
           {{"S", {3, 8}}, {"B", {3, 8}}}},
          {"decomposed_pattern",
           kHeader13 + "g (float[3,16] X, float[16] G, float[16] Be) => (float[3,16] Y) {\n"
                       "  two = Constant<value = float {2.0}>()\n  eps = Constant<value = float {1e-5}>()\n"
                       "  m = ReduceMean<axes=[-1]>(X)\n  d = Sub(X, m)\n  p = Pow(d, two)\n"
                       "  v = ReduceMean<axes=[-1]>(p)\n  e = Add(v, eps)\n  s = Sqrt(e)\n  n = Div(d, s)\n"
                       "  gn = Mul(n, G)\n  Y = Add(gn, Be)\n}",
           {{"G", {16}}, {"Be", {16}}}},
      };
    case LayerKind::kReduce:
      return {
          {"sum_axis1",
           kHeader13 + "g (float[3,17,4] X) => (float[3,1,4] Y) {\n  ax = Constant<value = int64[1] {1}>()\n"
                       "  Y = ReduceSum(X, ax)\n}",
           {}},
          {"mean_axes02_nokeep",
           kHeader13 + "g (float[4,5,6] X) => (float[5] Y) { Y = ReduceMean<axes=[0,2], keepdims=0>(X) }",
           {}},
          {"sum_all", kHeader13 + "g (float[5,9] X) => (float[1,1] Y) { Y = ReduceSum(X) }", {}},
          {"mean_long_row", kHeader13 + "g (float[2,1000] X) => (float[2,1] Y) { Y = ReduceMean<axes=[-1]>(X) }", {}},
      };
    case LayerKind::kActivation:
      return {
          {"sigmoid", kHeader13 + "g (float[4,257] X) => (float[4,257] Y) { Y = Sigmoid(X) }", {}, -6.0f, 6.0f},
          {"sigmoid_scalar", kHeader13 + "g (float X) => (float Y) { Y = Sigmoid(X) }", {}, -6.0f, 6.0f},
          {"tanh", kHeader13 + "g (float[4,257] X) => (float[4,257] Y) { Y = Tanh(X) }", {}, -3.0f, 3.0f},
          {"exp", kHeader13 + "g (float[4,257] X) => (float[4,257] Y) { Y = Exp(X) }", {}, -4.0f, 4.0f},
          {"erf", kHeader13 + "g (float[4,257] X) => (float[4,257] Y) { Y = Erf(X) }", {}, -3.0f, 3.0f},
          {"silu_pattern",
           kHeader13 + "g (float[4,257] X) => (float[4,257] Y) { s = Sigmoid(X)  Y = Mul(X, s) }",
           {},
           -6.0f,
           6.0f},
          {"gelu_pattern",
           kHeader13 + "g (float[4,257] X) => (float[4,257] Y) {\n"
                       "  r2 = Constant<value = float {1.4142135}>()\n  one = Constant<value = float {1.0}>()\n"
                       "  half = Constant<value = float {0.5}>()\n  a = Div(X, r2)\n  b = Erf(a)\n  c = Add(b, one)\n"
                       "  d = Mul(X, c)\n  Y = Mul(d, half)\n}",
           {},
           -4.0f,
           4.0f},
      };
    case LayerKind::kPool:
      return {
          {"avg_3x3_s2_p1",
           kHeader13 + "g (float[1,3,9,9] X) => (float[1,3,5,5] Y) "
                       "{ Y = AveragePool<kernel_shape=[3,3], strides=[2,2], pads=[1,1,1,1]>(X) }",
           {}},
          {"avg_2x2_ceil_include_pad",
           kHeader13 + "g (float[1,2,7,7] X) => (float[1,2,4,4] Y) { Y = AveragePool<kernel_shape=[2,2], "
                       "strides=[2,2], pads=[1,1,0,0], ceil_mode=1, count_include_pad=1>(X) }",
           {}},
          {"global", kHeader13 + "g (float[2,5,7,7] X) => (float[2,5,1,1] Y) { Y = GlobalAveragePool(X) }", {}},
      };
    case LayerKind::kEltwise:
      return {
          {"add_relu",
           kHeader13 + "g (float[3,17] A, float[3,17] B) => (float[3,17] Y) { s = Add(A, B)  Y = Relu(s) }",
           {}},
          {"add_relu_scalar", kHeader13 + "g (float A, float B) => (float Y) { s = Add(A, B)  Y = Relu(s) }", {}},
      };
    case LayerKind::kGeneric:
      return {
          {"mul_const", kHeader13 + "g (float[3,5] X, float[5] C) => (float[3,5] Y) { Y = Mul(X, C) }", {{"C", {5}}}},
          {"transpose", kHeader13 + "g (float[4,6] X) => (float[6,4] Y) { Y = Transpose<perm=[1,0]>(X) }", {}},
      };
  }
  return {};
}

struct MatrixParam {
  TacticId tactic;
  PrecisionId precision;
  Case c;
};

std::vector<MatrixParam> all_params() {
  static constexpr TacticId kTactics[] = {
#define VN_TACTIC(id, kind, name, precisions, description) TacticId::id,
#include "core/engine/tactics.inc"
#undef VN_TACTIC
  };
  std::vector<MatrixParam> out;
  for (TacticId t : kTactics) {
    for (size_t p = 0; p < kPrecisionCount; ++p) {
      for (Case& c : cases_for(tactic_info(t).kind)) out.push_back({t, static_cast<PrecisionId>(p), std::move(c)});
    }
  }
  return out;
}

// Failure messages name the configuration instead of dumping the parameter's bytes.
void PrintTo(const MatrixParam& p, std::ostream* os) {
  *os << tactic_info(p.tactic).name << " | " << precision_name(p.precision) << " | " << p.c.name;
}

class TacticMatrix : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(TacticMatrix, MatchesTheReference) {
  const MatrixParam& param = GetParam();
  const TacticInfo& info = tactic_info(param.tactic);
  const std::string config =
      fmt::format("tactic {} | precision {} | case {}", info.name, precision_name(param.precision), param.c.name);
  if (!info.supports(param.precision)) {
    GTEST_SKIP() << info.name << " runs in " << mask_to_string(info.precisions) << ", not "
                 << precision_name(param.precision);
  }
  std::map<std::string, Tensor> weights;
  uint32_t seed = 7767517;
  for (const auto& [name, shape] : param.c.weights) weights[name] = random_tensor(shape, seed++);
  const Model model = make_model(param.c.text, weights);
  ASSERT_FALSE(model.graph.nodes.empty()) << config;
  TensorMap feeds;
  for (const ValueInfo* in : model.graph.runtime_inputs()) {
    feeds.set(in->name, random_tensor(in->static_shape(), seed++, param.c.lo, param.c.hi));
  }

  Result<FoldedGraph> folded = fold_constants(model, ops::reference_registry());
  ASSERT_TRUE(folded.ok()) << folded.status().to_string();
  std::vector<std::string> outputs;
  for (const ValueInfo& o : model.graph.outputs) outputs.push_back(o.name);
  Result<LayerGraph> graph = fuse_layers(model, *folded, outputs);
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();
  ASSERT_EQ(graph->layers.size(), 1u) << config << ": the case must fuse into one layer";
  const LayerSpec& spec = graph->layers[0];
  ASSERT_EQ(spec.kind, info.kind) << config << ": fused into a " << layer_kind_name(spec.kind) << " layer";

  std::vector<const Tensor*> inputs;
  for (const std::string& name : spec.inputs) inputs.push_back(feeds.find(name));
  const TensorMap expected = test::run_reference(model, feeds);
  const Tensor* ref = expected.find(spec.outputs[0]);
  ASSERT_NE(ref, nullptr) << config;
  ScaleTable scales;
  const auto minmax = [&](const std::string& name, const Tensor& t) {
    Calibrator c({CalibrationMethod::kMinMax});
    c.observe_range(name, t);
    scales[name] = c.scales().at(name);
  };
  for (size_t i = 0; i < inputs.size(); ++i) minmax(spec.inputs[i], *inputs[i]);
  minmax(spec.outputs[0], *ref);

  KernelArgs args;
  args.model = &model;
  args.spec = &spec;
  args.constants = &folded->constants;
  args.registry = &ops::reference_registry();
  args.tactic = param.tactic;
  args.precision = param.precision;
  args.scales = &scales;
  const Support support = tactic_applicable(args, inputs);
  if (!support.supported) GTEST_SKIP() << config << ": " << support.reason;
  Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
  ASSERT_TRUE(kernel.ok()) << config << ": " << kernel.status().to_string();
  LayerScales layer_scale_set;
  if (param.precision == PrecisionId::kInt8) layer_scale_set = *layer_scales(spec, scales);
  const CompiledLayer layer(spec, param.tactic, param.precision, std::move(*kernel),
                            std::vector<DType>(inputs.size(), DType::kFloat32), {}, layer_scale_set);
  std::vector<Tensor> out(spec.outputs.size()), again(spec.outputs.size());
  Status st = layer.run(inputs, out);
  ASSERT_TRUE(st.ok()) << config << ": " << st.to_string();
  ASSERT_TRUE(layer.run(inputs, again).ok());
  EXPECT_TRUE(out[0].same_as(again[0])) << config << ": two runs differ";

  // The same layer asked to round its own output (KernelArgs::round_outputs, as the builder asks
  // when no fault intervenes) gives the bits of CompiledLayer's rounding pass.
  KernelArgs rounding = args;
  rounding.round_outputs = true;
  rounding.output_scale = param.precision == PrecisionId::kInt8 ? layer_scale_set.outputs[0] : 0.0f;
  Result<std::unique_ptr<LayerKernel>> rounding_kernel = make_layer_kernel(rounding);
  ASSERT_TRUE(rounding_kernel.ok()) << config << ": " << rounding_kernel.status().to_string();
  const CompiledLayer rounding_layer(spec, param.tactic, param.precision, std::move(*rounding_kernel),
                                     std::vector<DType>(inputs.size(), DType::kFloat32), {}, layer_scale_set);
  std::vector<Tensor> rounded(spec.outputs.size());
  ASSERT_TRUE(rounding_layer.run(inputs, rounded).ok());
  EXPECT_TRUE(out[0].same_as(rounded[0])) << config << ": rounding in the epilogue changed the output";

  ASSERT_EQ(out[0].shape(), ref->shape()) << config;
  const Tolerance tolerance = param.precision == PrecisionId::kInt8
                                  ? test::int8_tolerance(scales.at(spec.outputs[0]))
                                  : test::tactic_tolerance(param.tactic, param.precision);
  test::expect_close(out[0], *ref, tolerance, config);
}

std::string param_name(const ::testing::TestParamInfo<MatrixParam>& info) {
  std::string name = fmt::format("{}_{}_{}", tactic_info(info.param.tactic).name, precision_name(info.param.precision),
                                 info.param.c.name);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllTactics, TacticMatrix, ::testing::ValuesIn(all_params()), param_name);

// Attention's batch of products (A and B both runtime, 16 pairs) on 4 threads gives the bits of
// one thread under every float GEMM tactic: the products then run one per thread.
TEST(GemmBatches, ProductsSpreadOverTheThreadsGiveTheBitsOfOneThread) {
  const Model model =
      make_model(kHeader13 + "g (float[2,8,5,70] A, float[2,8,70,9] B) => (float[2,8,5,9] Y) { Y = MatMul(A, B) }");
  const Tensor a = random_tensor({2, 8, 5, 70}, 11), b = random_tensor({2, 8, 70, 9}, 12);
  Result<FoldedGraph> folded = fold_constants(model, ops::reference_registry());
  ASSERT_TRUE(folded.ok());
  Result<LayerGraph> graph = fuse_layers(model, *folded, {"Y"});
  ASSERT_TRUE(graph.ok());
  const LayerSpec& spec = graph->layers[0];
  const std::vector<const Tensor*> inputs = {&a, &b};
  for (const TacticId tactic : {TacticId::kGemmBlocked, TacticId::kGemmSplitK}) {
    std::vector<Tensor> outs;
    for (const int threads : {1, 4}) {
      KernelArgs args;
      args.model = &model;
      args.spec = &spec;
      args.constants = &folded->constants;
      args.registry = &ops::reference_registry();
      args.tactic = tactic;
      args.precision = PrecisionId::kFp32;
      args.num_threads = threads;
      Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
      ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
      std::vector<Tensor> out(1);
      ASSERT_TRUE((*kernel)->run(inputs, out).ok());
      outs.push_back(std::move(out[0]));
    }
    EXPECT_TRUE(outs[0].same_as(outs[1])) << tactic_info(tactic).name;
  }
}

// conv__direct on depthwise and few-channel groups sums in registers (ops::conv_direct) where
// other shapes sum plane by plane: both give the bits of its definition, each output summed from
// 0 over (channel, kh, kw) with one fused multiply-add per tap inside the input, the bias after.
TEST(ConvDirect, SumsInRegistersGiveTheBitsOfThePlaneOrder) {
  struct Shape4 {
    int64_t c, m, group, k, stride, pad, h, w;
  };
  for (const Shape4 s : {Shape4{6, 6, 6, 3, 1, 1, 9, 11}, Shape4{8, 8, 8, 5, 2, 2, 11, 13},
                         Shape4{16, 16, 2, 3, 1, 1, 7, 9}, Shape4{3, 4, 1, 3, 1, 1, 6, 7}}) {
    const int64_t cg = s.c / s.group, oh = (s.h + 2 * s.pad - s.k) / s.stride + 1,
                  ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
    const std::string text = fmt::format(
        "{}g (float[1,{},{},{}] X, float[{},{},{},{}] W, float[{}] B) => (float[1,{},{},{}] Y) "
        "{{ Y = Conv<pads=[{},{},{},{}], strides=[{},{}], group={}>(X, W, B) }}",
        kHeader13, s.c, s.h, s.w, s.m, cg, s.k, s.k, s.m, s.m, oh, ow, s.pad, s.pad, s.pad, s.pad, s.stride, s.stride,
        s.group);
    const Tensor w = random_tensor({s.m, cg, s.k, s.k}, 21), b = random_tensor({s.m}, 22);
    const Tensor x = random_tensor({1, s.c, s.h, s.w}, 23);
    const Model model = make_model(text, {{"W", w}, {"B", b}});
    Result<FoldedGraph> folded = fold_constants(model, ops::reference_registry());
    ASSERT_TRUE(folded.ok());
    Result<LayerGraph> graph = fuse_layers(model, *folded, {"Y"});
    ASSERT_TRUE(graph.ok());
    KernelArgs args;
    args.model = &model;
    args.spec = &graph->layers[0];
    args.constants = &folded->constants;
    args.registry = &ops::reference_registry();
    args.tactic = TacticId::kConvDirect;
    args.precision = PrecisionId::kFp32;
    args.num_threads = 2;
    Result<std::unique_ptr<LayerKernel>> kernel = make_layer_kernel(args);
    ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
    std::vector<Tensor> out(1);
    const std::vector<const Tensor*> inputs = {&x};
    ASSERT_TRUE((*kernel)->run(inputs, out).ok());

    Tensor expected(DType::kFloat32, {1, s.m, oh, ow});
    const std::span<const float> xv = x.values<float>(), wv = w.values<float>(), bv = b.values<float>();
    const std::span<float> ev = expected.mutable_values<float>();
    for (int64_t o = 0; o < s.m; ++o) {
      const int64_t c0 = o / (s.m / s.group) * cg;
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          float acc = 0.0f;
          for (int64_t c = 0; c < cg; ++c) {
            for (int64_t kh = 0; kh < s.k; ++kh) {
              for (int64_t kw = 0; kw < s.k; ++kw) {
                const int64_t y = i * s.stride - s.pad + kh, xx = j * s.stride - s.pad + kw;
                if (y < 0 || y >= s.h || xx < 0 || xx >= s.w) continue;
                acc = std::fma(wv[static_cast<size_t>(((o * cg + c) * s.k + kh) * s.k + kw)],
                               xv[static_cast<size_t>(((c0 + c) * s.h + y) * s.w + xx)], acc);
              }
            }
          }
          ev[static_cast<size_t>((o * oh + i) * ow + j)] = acc + bv[static_cast<size_t>(o)];
        }
      }
    }
    EXPECT_TRUE(out[0].same_as(expected)) << "c=" << s.c << " group=" << s.group << " k=" << s.k;
  }
}

// A Gemm's transB weights are read where the model stores them: a one-row product (a classifier)
// sums each output along a weight row as the reference does, so the fp32 engine's result is the
// reference's to the bit (a transposed copy summed in scaled rows differed in the last bits).
TEST(GemmWeights, TransBOneRowProductIsTheReferencesToTheBit) {
  const Model model =
      make_model(kHeader13 + "g (float[1,70] A, float[33,70] B) => (float[1,33] Y) { Y = Gemm<transB=1>(A, B) }",
                 {{"B", random_tensor({33, 70}, 5)}});
  TensorMap feeds;
  feeds.set("A", random_tensor({1, 70}, 6));
  const TensorMap expected = test::run_reference(model, feeds);
  EngineOptions options;
  options.build.deterministic = true;  // gemm__blocked_f32acc, the first fp32 tactic
  EngineBackend engine(options);
  ASSERT_TRUE(engine.prepare(model, PrepareOptions{}).ok());
  Result<TensorMap> out = engine.run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_NE(out->find("Y"), nullptr);
  EXPECT_TRUE(out->find("Y")->same_as(*expected.find("Y")));
}

// The fp32 engine's MatMul layers finish each block of their output (bias, residual, activation)
// as the product completes it: the reference's bits, node by node, with many row blocks, few rows,
// a batch folded into the rows, and at one and three threads.
TEST(GemmWeights, EpiloguesFinishedInBlocksGiveTheReferencesBits) {
  for (const auto& [rows, batch] : {std::pair<int64_t, int64_t>{250, 1}, {3, 1}, {40, 3}}) {
    const std::string text = fmt::format(
        "{}g (float[{},{},70] X, float[{},{},300] R, float[70,300] W, float[300] B) => (float[{},{},300] Y) {{ "
        "P = MatMul(X, W) Q = Add(P, B) S = Add(Q, R) Y = Relu(S) }}",
        kHeader13, batch, rows, batch, rows, batch, rows);
    const Model model = make_model(text, {{"W", random_tensor({70, 300}, 7)}, {"B", random_tensor({300}, 8)}});
    TensorMap feeds;
    feeds.set("X", random_tensor({batch, rows, 70}, 9));
    feeds.set("R", random_tensor({batch, rows, 300}, 10));
    const TensorMap expected = test::run_reference(model, feeds);
    for (const int threads : {1, 3}) {
      EngineOptions options;
      options.build.deterministic = true;  // gemm__blocked_f32acc, the first fp32 tactic
      EngineBackend engine(options);
      PrepareOptions prepare;
      prepare.num_threads = threads;
      ASSERT_TRUE(engine.prepare(model, prepare).ok());
      ASSERT_EQ(engine.layers()->size(), 1u) << "the MatMul, its bias, residual and Relu fuse into one layer";
      Result<TensorMap> out = engine.run(feeds);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      ASSERT_NE(out->find("Y"), nullptr);
      EXPECT_TRUE(out->find("Y")->same_as(*expected.find("Y")))
          << rows << " rows, batch " << batch << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace vn::engine
