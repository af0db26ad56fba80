// SPDX-License-Identifier: Apache-2.0
// `convert --to-onnx --int8` in core: the QDQ structure ORT's quantize_static writes, scales equal
// to Vernier's calibration, opset upgrades, and a QDQ model that runs close to the original.
#include "core/surgeon/convert_qdq.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/engine/quantize.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ir/onnx_signature.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::surgeon {
namespace {

using engine::test::make_model;
using engine::test::random_tensor;
using ::testing::HasSubstr;

constexpr std::string_view kCnn = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,8,8] x, float[8,3,3,3] w1, float[8] b1, float[8,8,3,3] w2, float[8] b2, float[10,8] wf, float[10] bf,
   float[10,6] wm) => (float[1,6] y) {
  c1 = Conv <pads = [1, 1, 1, 1]> (x, w1, b1)
  r1 = Relu(c1)
  c2 = Conv <pads = [1, 1, 1, 1]> (r1, w2, b2)
  r2 = Relu(c2)
  p = GlobalAveragePool(r2)
  f = Flatten(p)
  fc = Gemm <transB = 1> (f, wf, bf)
  y = MatMul(fc, wm)
}
)ONNX";

Model cnn() {
  return make_model(kCnn, {{"w1", random_tensor({8, 3, 3, 3}, 1, -0.5f, 0.5f)},
                           {"b1", random_tensor({8}, 2, -0.1f, 0.1f)},
                           {"w2", random_tensor({8, 8, 3, 3}, 3, -0.3f, 0.3f)},
                           {"b2", random_tensor({8}, 4, -0.1f, 0.1f)},
                           {"wf", random_tensor({10, 8}, 5)},
                           {"bf", random_tensor({10}, 6, -0.1f, 0.1f)},
                           {"wm", random_tensor({10, 6}, 7)}});
}

std::vector<TensorMap> feeds(uint32_t seed, int count) {
  std::vector<TensorMap> out;
  for (int i = 0; i < count; ++i) out.push_back({{"x", random_tensor({1, 3, 8, 8}, seed + i, 0.0f, 1.0f)}});
  return out;
}

const Node* producer(const Graph& g, const std::string& name) {
  const int64_t i = g.producer_of(name);
  return i < 0 ? nullptr : &g.nodes[static_cast<size_t>(i)];
}

const Tensor& init(const Graph& g, const std::string& name) {
  const Initializer* i = g.find_initializer(name);
  EXPECT_NE(i, nullptr) << name;
  static const Tensor kNone;
  return i ? i->tensor : kNone;
}

// The DequantizeLinear feeding `name` and its QuantizeLinear, checked as one activation pair.
void expect_pair(const Graph& g, const std::string& consumer_input, const std::string& tensor, float scale) {
  SCOPED_TRACE(tensor);
  EXPECT_EQ(consumer_input, tensor + "_DequantizeLinear_Output");
  const Node* dq = producer(g, consumer_input);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op_type, "DequantizeLinear");
  const Node* q = producer(g, dq->inputs[0]);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->op_type, "QuantizeLinear");
  EXPECT_EQ(q->inputs[0], tensor);
  EXPECT_EQ(q->inputs[1], dq->inputs[1]);
  const Tensor& s = init(g, q->inputs[1]);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.values<float>()[0], scale);
  const Tensor& zp = init(g, q->inputs[2]);
  EXPECT_EQ(zp.dtype(), DType::kInt8);
  EXPECT_EQ(zp.values<int8_t>()[0], 0);
}

// The weight DequantizeLinear feeding `consumer_input`: int8 per channel along `axis`, each
// channel's largest |value| `weight_max` (127, or 63 under reduce_range).
void expect_weight(const Graph& g, const Model& original, const std::string& consumer_input,
                   const std::string& weight, int64_t axis, std::vector<float>* scales_out = nullptr,
                   int32_t weight_max = 127) {
  SCOPED_TRACE(weight);
  const Node* dq = producer(g, consumer_input);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op_type, "DequantizeLinear");
  ASSERT_NE(dq->attr("axis"), nullptr);
  EXPECT_EQ(dq->attr("axis")->i, axis);
  const Tensor& w = original.graph.find_initializer(weight)->tensor;
  const Tensor& q = init(g, dq->inputs[0]);
  EXPECT_EQ(q.dtype(), DType::kInt8);
  EXPECT_EQ(q.shape(), w.shape());
  const Tensor& s = init(g, dq->inputs[1]);
  const Tensor& zp = init(g, dq->inputs[2]);
  const int64_t channels = w.dim(axis);
  EXPECT_EQ(s.shape(), Shape{channels});
  EXPECT_EQ(zp.shape(), Shape{channels});
  EXPECT_EQ(zp.dtype(), DType::kInt8);
  for (int8_t z : zp.values<int8_t>()) EXPECT_EQ(z, 0);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  std::vector<double> amax(static_cast<size_t>(channels), 0.0);
  for (int64_t e = 0; e < w.numel(); ++e) {
    double& m = amax[static_cast<size_t>((e / inner) % channels)];
    m = std::max(m, std::fabs(static_cast<double>(w.values<float>()[static_cast<size_t>(e)])));
  }
  std::vector<int32_t> qmax(static_cast<size_t>(channels), 0);
  for (int64_t e = 0; e < w.numel(); ++e) {
    int32_t& m = qmax[static_cast<size_t>((e / inner) % channels)];
    m = std::max(m, std::abs(static_cast<int32_t>(q.values<int8_t>()[static_cast<size_t>(e)])));
  }
  for (int64_t c = 0; c < channels; ++c) {
    const double a = amax[static_cast<size_t>(c)];
    EXPECT_EQ(s.values<float>()[static_cast<size_t>(c)], engine::scale_from_amax(weight_max == 127 ? a : a * 127 / weight_max))
        << c;
    if (a > 0) {
      EXPECT_EQ(qmax[static_cast<size_t>(c)], weight_max) << c;
    }
  }
  if (scales_out) scales_out->assign(s.values<float>().begin(), s.values<float>().end());
}

TEST(ConvertQdq, ReduceRangeQuantizesWeightsToSevenBits) {
  // For x86 int8 kernels without VNNI, which saturate pairs of full-range products in 16 bits:
  // every weight in [-63, 63], each channel's largest on 63, the rest of the model as without it.
  const Model model = cnn();
  Result<engine::ScaleTable> scales = engine::calibrate(model, feeds(10, 4), {engine::CalibrationMethod::kMinMax},
                                                        ops::reference_registry(), 1);
  ASSERT_TRUE(scales.ok()) << scales.status().to_string();
  Result<QdqResult> r = insert_qdq(model, *scales, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Graph& g = r->model.graph;
  ASSERT_EQ(r->report.quantized.size(), 4u);
  expect_weight(g, model, producer(g, "c1")->inputs[1], "w1", 0, nullptr, 63);
  expect_weight(g, model, producer(g, "c2")->inputs[1], "w2", 0, nullptr, 63);
  expect_weight(g, model, producer(g, "fc")->inputs[1], "wf", 0, nullptr, 63);
  expect_weight(g, model, producer(g, "y")->inputs[1], "wm", 1, nullptr, 63);
  expect_pair(g, producer(g, "c1")->inputs[0], "x", scales->at("x"));
  EXPECT_TRUE(check_model_types(r->model).ok());
}

TEST(ConvertQdq, ConvGemmAndMatMulGetQdqPairsPerChannelWeightsAndInt32Biases) {
  const Model model = cnn();
  Result<engine::ScaleTable> scales = engine::calibrate(model, feeds(10, 4), {engine::CalibrationMethod::kMinMax},
                                                        ops::reference_registry(), 1);
  ASSERT_TRUE(scales.ok()) << scales.status().to_string();
  Result<QdqResult> r = insert_qdq(model, *scales);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Graph& g = r->model.graph;
  ASSERT_EQ(r->report.quantized.size(), 4u);
  EXPECT_TRUE(r->report.skipped.empty());
  EXPECT_EQ(r->report.opset_after, 13);
  // x, r1, f, fc: inputs of quantized nodes; c1, c2, fc: outputs of Conv and Gemm; not y (a graph
  // output).
  EXPECT_EQ(r->report.activations, 6u);

  const Node* conv1 = producer(g, "c1");
  ASSERT_NE(conv1, nullptr);
  expect_pair(g, conv1->inputs[0], "x", scales->at("x"));
  std::vector<float> w1_scales;
  expect_weight(g, model, conv1->inputs[1], "w1", 0, &w1_scales);
  const Node* bias_dq = producer(g, conv1->inputs[2]);
  ASSERT_NE(bias_dq, nullptr);
  const Tensor& qb = init(g, bias_dq->inputs[0]);
  const Tensor& bs = init(g, bias_dq->inputs[1]);
  EXPECT_EQ(qb.dtype(), DType::kInt32);
  EXPECT_EQ(init(g, bias_dq->inputs[2]).dtype(), DType::kInt32);
  const Tensor& b1 = model.graph.find_initializer("b1")->tensor;
  for (size_t c = 0; c < 8; ++c) {
    EXPECT_EQ(bs.values<float>()[c], scales->at("x") * w1_scales[c]);
    EXPECT_EQ(qb.values<int32_t>()[c], static_cast<int32_t>(std::nearbyint(b1.values<float>()[c] / bs.values<float>()[c])));
  }
  // The Conv output is quantized: Relu reads its DequantizeLinear.
  expect_pair(g, producer(g, "r1")->inputs[0], "c1", scales->at("c1"));
  const Node* conv2 = producer(g, "c2");
  expect_pair(g, conv2->inputs[0], "r1", scales->at("r1"));
  expect_weight(g, model, conv2->inputs[1], "w2", 0);
  const Node* gemm = producer(g, "fc");
  expect_pair(g, gemm->inputs[0], "f", scales->at("f"));
  expect_weight(g, model, gemm->inputs[1], "wf", 0);  // transB: B is [N, K]
  const Node* matmul = producer(g, "y");
  expect_pair(g, matmul->inputs[0], "fc", scales->at("fc"));
  expect_weight(g, model, matmul->inputs[1], "wm", 1);  // [K, N]: the output columns
  EXPECT_EQ(matmul->inputs[1], "wm_DequantizeLinear_Output");
  EXPECT_EQ(g.outputs[0].name, "y");
  EXPECT_EQ(matmul->outputs[0], "y");
  // The float weights are gone.
  EXPECT_EQ(g.find_initializer("w1"), nullptr);
  EXPECT_TRUE(check_model_types(r->model).ok());

  // It loads and runs on the reference within 5% of the float model's mean |output|.
  test::TempDir dir;
  ASSERT_TRUE(save_model(r->model, dir / "q.onnx").ok());
  Result<Model> loaded = load_model(dir / "q.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  double err = 0, mag = 0;
  for (const TensorMap& feed : feeds(100, 4)) {
    const Tensor want = *engine::test::run_reference(model, feed).find("y");
    const Tensor got = *engine::test::run_reference(*loaded, feed).find("y");
    for (int64_t i = 0; i < want.numel(); ++i) {
      err += std::fabs(got.values<float>()[static_cast<size_t>(i)] - want.values<float>()[static_cast<size_t>(i)]);
      mag += std::fabs(want.values<float>()[static_cast<size_t>(i)]);
    }
  }
  EXPECT_LE(err, 0.05 * mag) << "relative mean error " << err / mag;
  EXPECT_GT(err, 0.0);  // it really is quantized
}

TEST(ConvertQdq, ScalesAreVernierCalibrationsForTheSameDataAndMethod) {
  const Model model = cnn();
  for (const auto method : {engine::CalibrationMethod::kMinMax, engine::CalibrationMethod::kPercentile,
                            engine::CalibrationMethod::kEntropy}) {
    SCOPED_TRACE(engine::calibration_method_name(method));
    Result<engine::ScaleTable> scales = engine::calibrate(model, feeds(20, 3), {method}, ops::reference_registry(), 1);
    ASSERT_TRUE(scales.ok());
    QdqOptions options;
    options.int8.calibration.method = method;
    options.int8.feeds = feeds(20, 3);
    Result<QdqResult> r = convert_to_qdq(model, options);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_THAT(r->report.calibration, HasSubstr(std::string(engine::calibration_method_name(method)) +
                                                 " calibration over 3 feed(s)"));
    EXPECT_FALSE(r->report.synthetic);
    for (const QuantizedNode& q : r->report.quantized) {
      EXPECT_EQ(q.input_scale, scales->at(q.input)) << q.node;
      if (!q.output.empty()) {
        EXPECT_EQ(q.output_scale, scales->at(q.output)) << q.node;
      }
    }
  }
  QdqOptions synthetic;
  Result<QdqResult> r = convert_to_qdq(model, synthetic);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->report.synthetic);
  EXPECT_THAT(r->report.calibration, HasSubstr("synthetic feed(s)"));
}

TEST(ConvertQdq, OlderOpsetsAreRaisedTo13WhenEveryNodeMeansTheSame) {
  const Model model = make_model(R"ONNX(
<ir_version: 6, opset_import: ["" : 11]>
g (float[1,2,4,4] x, float[3,2,1,1] w) => (float[1,3] y) {
  c = Conv(x, w)
  r = Relu(c)
  p = GlobalAveragePool(r)
  f = Flatten(p)
  y = Softmax <axis = 1> (f)
}
)ONNX",
                                 {{"w", random_tensor({3, 2, 1, 1}, 1)}});
  engine::ScaleTable scales{{"x", 0.01f}, {"c", 0.02f}};
  Result<QdqResult> r = insert_qdq(model, scales);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->report.opset_before, 11);
  EXPECT_EQ(r->report.opset_after, 13);
  EXPECT_EQ(r->model.opset(""), 13);
  EXPECT_GE(r->model.ir_version, 7);
  test::TempDir dir;
  ASSERT_TRUE(save_model(r->model, dir / "up.onnx").ok());
  EXPECT_TRUE(load_model(dir / "up.onnx").ok());

  // Unsqueeze took its axes as an attribute before opset 13; Softmax over a 4-D input normalized
  // the flattened trailing axes.
  const Model unsqueeze = make_model(R"ONNX(
<ir_version: 6, opset_import: ["" : 11]>
g (float[2,4] x, float[4,3] w) => (float[1,2,3] y) {
  m = MatMul(x, w)
  y = Unsqueeze <axes = [0]> (m)
}
)ONNX",
                                     {{"w", random_tensor({4, 3}, 1)}});
  Result<QdqResult> bad = insert_qdq(unsqueeze, {{"x", 0.01f}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("per-channel QDQ needs opset 13, and this model imports opset 11"));
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'Unsqueeze_1': Unsqueeze-11 became Unsqueeze-13"));
  const Model softmax = make_model(R"ONNX(
<ir_version: 6, opset_import: ["" : 11]>
g (float[1,2,4,4] x, float[3,2,1,1] w) => (float[1,3,4,4] y) {
  c = Conv(x, w)
  y = Softmax <axis = 1> (c)
}
)ONNX",
                                   {{"w", random_tensor({3, 2, 1, 1}, 1)}});
  EXPECT_THAT(insert_qdq(softmax, {{"x", 0.01f}}).status().message(),
              HasSubstr("Softmax over axis 1 of a flattened input means another thing in opset 13"));
}

TEST(ConvertQdq, QuantizedModelsAndComputedWeightsAreNotQuantized) {
  const Model model = make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,4] x, float[4,4] w) => (float[4,4] y, float[4,4] z) {
  a = MatMul(x, w)
  wi = Identity(w)
  b = MatMul(x, wi)
  z = MatMul(a, b)
  y = Add(a, b)
}
)ONNX",
                                 {{"w", random_tensor({4, 4}, 1)}});
  Result<QdqResult> r = insert_qdq(model, {{"x", 0.01f}, {"a", 0.02f}, {"b", 0.02f}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->report.quantized.size(), 2u);
  ASSERT_EQ(r->report.skipped.size(), 1u);
  EXPECT_EQ(r->report.skipped[0].node, "MatMul_3");
  EXPECT_THAT(r->report.skipped[0].reason, HasSubstr("not a float32 constant: both operands are computed"));
  // The weight both MatMuls read, one through an Identity as exporters share weights, is quantized
  // once; the Identity nothing reads any more goes.
  size_t dq = 0, identities = 0;
  for (const Node& n : r->model.graph.nodes) {
    dq += n.op_type == "DequantizeLinear" ? 1 : 0;
    identities += n.op_type == "Identity" ? 1 : 0;
  }
  EXPECT_EQ(dq, 2u);  // x's pair and the shared weight
  EXPECT_EQ(identities, 0u);
  EXPECT_EQ(r->model.graph.find_initializer("w"), nullptr);

  Result<QdqResult> again = insert_qdq(r->model, {{"x", 0.01f}});
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(again.status().message(), HasSubstr("the model is already quantized"));
}

TEST(ConvertQdq, AConstantNodeWeightIsQuantizedAndTheConstantGoes) {
  const Model model = make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[3,2] x) => (float[3,2] y) {
  wc = Constant <value = float[2,2] {1, -2, 3, 0.5}> ()
  y = MatMul(x, wc)
}
)ONNX");
  Result<QdqResult> r = insert_qdq(model, {{"x", 0.05f}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->report.quantized.size(), 1u);
  const Graph& g = r->model.graph;
  EXPECT_EQ(g.producer_of("wc"), -1);
  const Node* dq = producer(g, producer(g, "y")->inputs[1]);
  ASSERT_NE(dq, nullptr);
  // Columns {1, 3} and {-2, 0.5}: scales 3/127 and 2/127.
  EXPECT_EQ(init(g, dq->inputs[1]).values<float>()[0], engine::scale_from_amax(3.0));
  EXPECT_EQ(init(g, dq->inputs[1]).values<float>()[1], engine::scale_from_amax(2.0));
  const std::vector<int8_t> q(init(g, dq->inputs[0]).values<int8_t>().begin(),
                              init(g, dq->inputs[0]).values<int8_t>().end());
  EXPECT_EQ(q, (std::vector<int8_t>{42, -127, 127, 32}));
}

}  // namespace
}  // namespace vn::surgeon
