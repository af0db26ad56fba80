// SPDX-License-Identifier: Apache-2.0
// `convert --to-onnx --fp16` in core: which values become float16, where Casts go, what stays
// float32 and why, and that the result loads, type-checks and runs close to the original.
#include "core/surgeon/convert_fp16.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include <Eigen/Core>

#include "core/data/synthetic.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "core/ir/onnx_signature.h"
#include "core/surgeon/fp16_rules.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::surgeon {
namespace {

using engine::test::make_model;
using engine::test::random_tensor;
using ::testing::HasSubstr;

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

constexpr std::string_view kMlp = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4] x, float[4,4] w, float[4] b) => (float[2,4] y) {
  m = MatMul(x, w)
  a = Add(m, b)
  y = Relu(a)
}
)ONNX";

Model mlp() { return make_model(kMlp, {{"w", random_tensor({4, 4}, 1)}, {"b", random_tensor({4}, 2)}}); }

const Node* producer(const Graph& g, const std::string& name) {
  const int64_t i = g.producer_of(name);
  return i < 0 ? nullptr : &g.nodes[static_cast<size_t>(i)];
}

std::optional<DType> type_of(const Graph& g, const std::string& name) {
  const std::optional<ValueInfo> v = g.find_value_info(name);
  return v ? v->dtype : std::nullopt;
}

// Saves and reloads `model`: the ONNX checker, Vernier's validation and shape inference see it.
Model reload(const Model& model, const test::TempDir& dir, const std::string& name) {
  const std::filesystem::path path = dir / name;
  Status st = save_model(model, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  Result<Model> loaded = load_model(path);
  EXPECT_TRUE(loaded.ok()) << loaded.status().to_string();
  return loaded.ok() ? std::move(loaded).value() : Model();
}

double mean_abs(const Tensor& t) {
  const Result<std::vector<double>> v = tensor_to_doubles(t);
  double sum = 0;
  for (double x : *v) sum += std::fabs(x);
  return v->empty() ? 0 : sum / static_cast<double>(v->size());
}

double mean_abs_diff(const Tensor& a, const Tensor& b) {
  const Result<std::vector<double>> va = tensor_to_doubles(a), vb = tensor_to_doubles(b);
  double sum = 0;
  for (size_t i = 0; i < va->size(); ++i) sum += std::fabs((*va)[i] - (*vb)[i]);
  return va->empty() ? 0 : sum / static_cast<double>(va->size());
}

TEST(ConvertFp16, WeightsAndActivationsBecomeFloat16WithCastsAtTheEdges) {
  const Model model = mlp();
  Result<Fp16Result> r = convert_to_fp16(model, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Graph& g = r->model.graph;
  EXPECT_EQ(g.find_initializer("w")->tensor.dtype(), DType::kFloat16);
  EXPECT_EQ(g.find_initializer("b")->tensor.dtype(), DType::kFloat16);
  EXPECT_EQ(g.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(g.outputs[0].dtype, DType::kFloat32);
  // x -> Cast -> MatMul; Relu writes y__fp16, a Cast writes y.
  const Node* matmul = producer(g, "m");
  ASSERT_NE(matmul, nullptr);
  const Node* in_cast = producer(g, matmul->inputs[0]);
  ASSERT_NE(in_cast, nullptr);
  EXPECT_EQ(in_cast->op_type, "Cast");
  EXPECT_EQ(in_cast->inputs[0], "x");
  const Node* out_cast = producer(g, "y");
  ASSERT_NE(out_cast, nullptr);
  EXPECT_EQ(out_cast->op_type, "Cast");
  EXPECT_EQ(out_cast->attr("to")->i, dtype_to_onnx(DType::kFloat32));
  EXPECT_EQ(out_cast->inputs[0], "y__fp16");
  EXPECT_EQ(producer(g, "y__fp16")->op_type, "Relu");
  EXPECT_EQ(type_of(g, "m"), DType::kFloat16);
  EXPECT_EQ(type_of(g, "a"), DType::kFloat16);
  EXPECT_EQ(type_of(g, "y__fp16"), DType::kFloat16);
  EXPECT_EQ(r->report.nodes_fp16.size(), 3u);
  EXPECT_TRUE(r->report.kept.empty());
  EXPECT_EQ(r->report.casts_added, 2u);
  EXPECT_EQ(r->report.initializers_fp16, 2u);
  EXPECT_TRUE(check_model_types(r->model).ok());
  test::TempDir dir;
  const Model loaded = reload(r->model, dir, "fp16.onnx");
  EXPECT_EQ(loaded.graph.nodes.size(), 5u);
}

// The reference's float16 kernels: variadic math, data movement, Cast.
TEST(ConvertFp16, RunsOnTheReferenceWhereItHasFloat16Kernels) {
  const Model model = make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x, float[2,3] w, float[3] b, int64[1] shape) => (float[3,2] y, float[6] z) {
  s = Sum(x, w)
  m = Mean(s, b)
  t = Transpose <perm = [1, 0]> (m)
  y = Identity(t)
  z = Reshape(m, shape)
}
)ONNX",
                                 {{"w", random_tensor({2, 3}, 1)},
                                  {"b", random_tensor({3}, 2)},
                                  {"shape", Tensor::from_vector<int64_t>({1}, {6})}});
  Result<Fp16Result> r = convert_to_fp16(model, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->report.nodes_fp16.size(), 5u);
  test::TempDir dir;
  const Model loaded = reload(r->model, dir, "runs.onnx");
  for (uint32_t seed : {3u, 4u, 5u}) {
    const TensorMap feeds{{"x", random_tensor({2, 3}, seed, -100.0f, 100.0f)}};
    const TensorMap want = engine::test::run_reference(model, feeds);
    const TensorMap got = engine::test::run_reference(loaded, feeds);
    for (const char* name : {"y", "z"}) {
      ASSERT_NE(got.find(name), nullptr) << name;
      EXPECT_EQ(got.find(name)->dtype(), DType::kFloat32);
      // Float16 keeps 11 significant bits: each rounding is within 2^-11 of the value.
      EXPECT_LE(mean_abs_diff(*got.find(name), *want.find(name)), 2e-3 * mean_abs(*want.find(name))) << name;
      EXPECT_GT(mean_abs_diff(*got.find(name), *want.find(name)), 0.0) << name << " was not computed in float16";
    }
  }
}

TEST(ConvertFp16, Fp16IoMakesGraphInputsAndOutputsFloat16) {
  Fp16Options options;
  options.keep_io_types = false;
  Result<Fp16Result> r = convert_to_fp16(mlp(), options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Graph& g = r->model.graph;
  EXPECT_EQ(g.inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(g.outputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(r->report.casts_added, 0u);
  EXPECT_EQ(producer(g, "y")->op_type, "Relu");
  EXPECT_EQ(producer(g, "m")->inputs[0], "x");
}

TEST(ConvertFp16, KeepFp32ByNameAndFromAFileCastsAroundTheNode) {
  test::TempDir dir;
  test::write_file(dir / "keep.txt", "# layers that must stay float32\n\n  Add_1  \n");
  Result<std::vector<std::string>> names = expand_name_list({"@" + (dir / "keep.txt").string()});
  ASSERT_TRUE(names.ok()) << names.status().to_string();
  EXPECT_EQ(*names, std::vector<std::string>{"Add_1"});
  for (const std::vector<std::string>& keep : {std::vector<std::string>{"Add_1"}, *names}) {
    Fp16Options options;
    options.keep_fp32 = keep;
    Result<Fp16Result> r = convert_to_fp16(mlp(), options);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const Graph& g = r->model.graph;
    ASSERT_EQ(r->report.kept.size(), 1u);
    EXPECT_EQ(r->report.kept[0].node, "Add_1");
    EXPECT_EQ(r->report.kept[0].reason, "--keep-fp32");
    // The bias is read only by the float32 Add: it stays float32.
    EXPECT_EQ(g.find_initializer("b")->tensor.dtype(), DType::kFloat32);
    EXPECT_EQ(r->report.initializers_fp32, 1u);
    const Node* add = producer(g, "a");
    ASSERT_NE(add, nullptr);
    EXPECT_EQ(add->inputs[0], "m__fp32");
    EXPECT_EQ(producer(g, "m__fp32")->op_type, "Cast");
    EXPECT_EQ(type_of(g, "a"), DType::kFloat32);
    EXPECT_EQ(producer(g, "y__fp16")->inputs[0], "a__fp16");
    EXPECT_TRUE(reload(r->model, dir, "keep.onnx").graph.nodes.size() > 0);
  }
  Fp16Options unknown;
  unknown.keep_fp32 = {"Add_1", "nope"};
  Result<Fp16Result> bad = convert_to_fp16(mlp(), unknown);
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(), "--keep-fp32 names 'nope', which is no node of the model");
  EXPECT_EQ(expand_name_list({"@" + (dir / "missing.txt").string()}).status().code(), StatusCode::kIoError);
}

TEST(ConvertFp16, ValuesBeyondFloat16AreClampedAndReported) {
  Tensor w = random_tensor({4, 4}, 1);
  w.mutable_values<float>()[3] = 1e5f;
  w.mutable_values<float>()[7] = -7e4f;
  w.mutable_values<float>()[8] = 1e-9f;  // below float16's smallest subnormal
  const Model model = make_model(kMlp, {{"w", w}, {"b", random_tensor({4}, 2)}});
  Result<Fp16Result> r = convert_to_fp16(model, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->report.clamped.size(), 1u);
  EXPECT_EQ(r->report.clamped[0].name, "w");
  EXPECT_EQ(r->report.clamped[0].count, 2);
  EXPECT_DOUBLE_EQ(r->report.clamped[0].max_abs, 1e5);
  EXPECT_EQ(r->report.flushed_to_zero, 1);
  const Tensor& converted = r->model.graph.find_initializer("w")->tensor;
  EXPECT_EQ(static_cast<float>(converted.values<Eigen::half>()[3]), 65504.0f);
  EXPECT_EQ(static_cast<float>(converted.values<Eigen::half>()[7]), -65504.0f);
}

// Shape arithmetic, a Constant feeding Resize's scales, an ONNX-ML-free block-listed op, a data
// Constant and a Cast to float32 on the data path.
constexpr std::string_view kShapes = R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,4,4] x, int64[1,1,4,4] mask) => (float[1,1,8,8] y, float[1,1,4,4] z) {
  s = Shape(x)
  sf = Cast <to = 1> (s)
  one = Constant <value = float[4] {1, 1, 1, 1}> ()
  d = Mul(sf, one)
  di = Cast <to = 7> (d)
  r = Reshape(x, di)
  k = Constant <value = float {2}> ()
  rk = Sum(r, k)
  roi = Constant <value = float[0] {}> ()
  scales = Constant <value = float[4] {1, 1, 2, 2}> ()
  y = Resize(rk, roi, scales)
  mf = Cast <to = 1> (mask)
  z = Max(rk, mf)
}
)ONNX";

TEST(ConvertFp16, ShapeArithmeticAndBlockedOpsStayFloat32) {
  const Model model = make_model(kShapes);
  Result<Fp16Result> r = convert_to_fp16(model, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::map<std::string, std::string> kept;
  for (const KeptNode& k : r->report.kept) kept[k.node] = k.reason;
  const std::string statik = "static shape or index arithmetic (its values do not depend on the inputs)";
  EXPECT_EQ(kept["Cast_1"], statik);
  EXPECT_EQ(kept["Constant_2"], statik);
  EXPECT_EQ(kept["Mul_3"], statik);
  EXPECT_EQ(kept["Constant_8"],  // Resize's roi
            "static value read only where ONNX takes any float type (an exponent, Resize's roi): kept exact");
  EXPECT_EQ(kept["Constant_9"], statik);  // scales
  EXPECT_EQ(kept["Resize_10"], fp16_block_reason("Resize"));
  EXPECT_EQ(kept["Max_12"], fp16_block_reason("Max"));
  EXPECT_EQ(kept.size(), 7u);
  const Graph& g = r->model.graph;
  EXPECT_EQ(type_of(g, "d"), DType::kFloat32);
  EXPECT_EQ(type_of(g, "scales"), DType::kFloat32);
  EXPECT_EQ(type_of(g, "r"), DType::kFloat16);
  EXPECT_EQ(type_of(g, "rk"), DType::kFloat16);
  // The data Constant is float16; the Cast of the mask now casts to float16.
  EXPECT_EQ(producer(g, "k")->attr("value")->t.dtype(), DType::kFloat16);
  EXPECT_EQ(producer(g, "mf")->attr("to")->i, dtype_to_onnx(DType::kFloat16));
  EXPECT_EQ(r->report.casts_retargeted, 1u);
  // Resize and Max read float32 copies of rk and mf.
  EXPECT_EQ(producer(g, "y")->inputs[0], "rk__fp32");
  EXPECT_EQ(producer(g, "z")->inputs[1], "mf__fp32");
  EXPECT_TRUE(check_model_types(r->model).ok());

  test::TempDir dir;
  const Model loaded = reload(r->model, dir, "shapes.onnx");
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model.graph, {});
  ASSERT_TRUE(feeds.ok());
  const TensorMap want = engine::test::run_reference(model, feeds->front());
  const TensorMap got = engine::test::run_reference(loaded, feeds->front());
  for (const char* name : {"y", "z"}) {
    ASSERT_NE(got.find(name), nullptr) << name;
    engine::test::expect_close(*got.find(name), *want.find(name), {1e-2, 1e-2}, name);
  }
}

TEST(ConvertFp16, TheBlockListIsOneListWithAReasonPerOp) {
  std::set<std::string_view> seen;
  for (const Fp16BlockedOp& op : fp16_blocked_ops()) {
    EXPECT_TRUE(seen.insert(op.op_type).second) << op.op_type << " is listed twice";
    EXPECT_FALSE(op.reason.empty()) << op.op_type;
    EXPECT_EQ(fp16_block_reason(op.op_type), op.reason);
  }
  EXPECT_EQ(seen.size(), 33u);
  EXPECT_TRUE(fp16_block_reason("Conv").empty());
  EXPECT_TRUE(fp16_random_op("RandomNormal"));
  EXPECT_FALSE(fp16_random_op("TopK"));
}

TEST(ConvertFp16, OpsWithoutFloat16InOnnxAndSubgraphNodesStayFloat32) {
  // QuantizeLinear has no float16 input before opset 19; the If body reads an outer value.
  const Model model = make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[4] x, bool c) => (float[4] y, uint8[4] q) {
  h = Sum(x, x)
  sc = Constant <value = float {0.1}> ()
  zp = Constant <value = uint8 {0}> ()
  q = QuantizeLinear(h, sc, zp)
  y = If (c) <then_branch = t () => (float[4] a) { a = Neg(h) },
              else_branch = e () => (float[4] b) { b = Abs(h) }>
}
)ONNX");
  Result<Fp16Result> r = convert_to_fp16(model, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::map<std::string, std::string> kept;
  for (const KeptNode& k : r->report.kept) kept[k.node] = k.reason;
  EXPECT_THAT(kept["QuantizeLinear_3"], HasSubstr("has no float16 type for 'x'"));
  EXPECT_EQ(kept["If_4"], "has subgraphs: kept in float32 whole");
  const Graph& g = r->model.graph;
  EXPECT_EQ(type_of(g, "h"), DType::kFloat16);
  // The If body now reads the float32 copy of h.
  const Node* if_node = producer(g, "y");
  ASSERT_NE(if_node, nullptr);
  EXPECT_EQ(if_node->attr("then_branch")->g->nodes[0].inputs[0], "h__fp32");
  test::TempDir dir;
  const Model loaded = reload(r->model, dir, "sub.onnx");
  const TensorMap feeds{{"x", random_tensor({4}, 5)}, {"c", Tensor::scalar<bool>(true)}};
  const TensorMap want = engine::test::run_reference(model, feeds);
  const TensorMap got = engine::test::run_reference(loaded, feeds);
  engine::test::expect_close(*got.find("y"), *want.find("y"), {1e-2, 1e-2}, "If");
}

TEST(ConvertFp16, TheDemoModelConvertsLoadsAndStaysCloseToFloat32) {
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok());
  Fp16Options options;
  options.keep_fp32 = {"softmax"};
  Result<Fp16Result> r = convert_to_fp16(*model, options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->report.nodes_fp16.size(), 9u);
  ASSERT_EQ(r->report.kept.size(), 1u);
  EXPECT_EQ(r->report.kept[0].node, "softmax");
  test::TempDir dir;
  const Model loaded = reload(r->model, dir, "demo16.onnx");
  for (const Initializer& init : loaded.graph.initializers) {
    EXPECT_EQ(init.tensor.dtype(), DType::kFloat16) << init.name;
  }
  EXPECT_EQ(type_of(loaded.graph, "logits"), DType::kFloat16);
  EXPECT_EQ(type_of(loaded.graph, "probs"), DType::kFloat32);
  EXPECT_EQ(producer(loaded.graph, "probs")->op_type, "Softmax");  // kept float32: no edge Cast
  EXPECT_EQ(producer(loaded.graph, "probs")->inputs[0], "logits__fp32");
  // The reference has no float16 Conv: ONNX Runtime runs this model in the `models` tests.
}

}  // namespace
}  // namespace vn::surgeon
