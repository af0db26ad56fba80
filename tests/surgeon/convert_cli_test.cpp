// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of `vernier convert MODEL --to-onnx OUT.onnx --fp16|--int8`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/cli_expect.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

using test::expect_bad_input;

TEST(CliConvertOnnx, Fp16WritesAFloat16ModelThatRunsAndReportsWhatItKept) {
  TempDir dir;
  const std::string out = (dir / "demo16.onnx").string();
  auto r = run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--keep-fp32", "softmax"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] float16: 9 node(s) compute in float16, 1 kept in float32:"));
  EXPECT_THAT(r.out, HasSubstr("1 kept, --keep-fp32: softmax (Softmax)"));
  EXPECT_THAT(r.out, HasSubstr("Weights: 10 float32 initializer(s) and Constant(s) now float16"));
  EXPECT_THAT(r.out, HasSubstr("[I] Saved the float16 model to " + out));
  Result<Model> m = load_model(out);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(m->graph.outputs[0].dtype, DType::kFloat32);

  // --fp16-io, and --keep-fp32 from a file.
  test::write_file(dir / "keep.txt", "# from debug precision\nfc\nsoftmax\n");
  const std::string io = (dir / "io.onnx").string();
  r = run_vernier({"convert", kDemo, "--to-onnx", io, "--fp16", "--fp16-io", "--keep-fp32",
                   "@" + (dir / "keep.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 kept, --keep-fp32: fc (Gemm), softmax (Softmax)"));
  EXPECT_THAT(r.out, HasSubstr("graph inputs and outputs are float16"));
  m = load_model(io);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->graph.inputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(m->graph.outputs[0].dtype, DType::kFloat16);
}

TEST(CliConvertOnnx, ClampedWeightsAreReported) {
  Model model = engine::test::make_model(R"ONNX(
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2] x, float[2] w) => (float[1,2] y) { y = Mul(x, w) }
)ONNX",
                                         {{"w", Tensor::from_vector<float>({2}, {1e6f, 0.5f})}});
  TempDir dir;
  ASSERT_TRUE(save_model(model, dir / "big.onnx").ok());
  auto r = run_vernier({"convert", (dir / "big.onnx").string(), "--to-onnx", (dir / "o.onnx").string(), "--fp16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[W]     'w': 1 value(s) beyond float16's range clamped to +-65504 (largest |x| 1e+06)"));
}

TEST(CliConvertOnnx, Int8WritesAQdqModelWithVernierScales) {
  TempDir dir;
  const std::string calib = (dir / "calib.json").string();
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--iterations", "4", "--val-range", "image:[0,1]", "--save-inputs", calib})
                .exit_code,
            0);
  const std::string out = (dir / "q.onnx").string();
  auto r = run_vernier({"convert", kDemo, "--to-onnx", out, "--int8", "--calibration-data", calib,
                        "--calibration-method", "minmax"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] int8 scales: minmax calibration over 4 feed(s) of " + calib));
  EXPECT_THAT(r.out, HasSubstr("[I] int8 QDQ: 3 node(s) quantized (2 Conv, 1 Gemm), 0 left in float"));
  EXPECT_THAT(r.out, HasSubstr("3 bias(es) int32"));
  Result<Model> m = load_model(out);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const size_t dq = std::count_if(m->graph.nodes.begin(), m->graph.nodes.end(),
                                  [](const Node& n) { return n.op_type == "DequantizeLinear"; });
  // Pairs after image, conv1, pool1, conv2, flat and logits; the 3 weights and 3 biases.
  EXPECT_EQ(dq, 12u);
  auto run = run_vernier({"run", out, "--ref"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  // Without data: synthetic feeds, said on stdout.
  r = run_vernier({"convert", kDemo, "--to-onnx", out, "--int8", "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 synthetic feed(s) (seed 3) (synthetic data: give --calibration-data"));
}

TEST(CliConvertOnnx, BadCombinationsAreOneLineErrors) {
  TempDir dir;
  const std::string out = (dir / "x.onnx").string();
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out}), "--to-onnx needs --fp16");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--int8"}), "not both");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--keep-fp32", "conv1", "nope"}),
                   "--keep-fp32 names 'nope', which is no node of the model");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--keep-fp32", "@/nonexistent/list"}),
                   "/nonexistent/list: cannot read the list of names");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--int8", "--fp16-io"}), "--fp16-io is for --fp16");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--calibration-method", "minmax"}),
                   "calibration flags are for --int8");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "--bf16"}), "--bf16 is for engine plans");
  expect_bad_input(run_vernier({"convert", kDemo, "--to-onnx", out, "--fp16", "-o", "p.json"}), "-o is for engine plans");
  expect_bad_input(run_vernier({"convert", kDemo}), "convert needs -o PLAN");
  EXPECT_FALSE(std::filesystem::exists(out));
  // The engine plan keeps working.
  auto plan = run_vernier({"convert", kDemo, "--deterministic", "-o", (dir / "plan.json").string()});
  EXPECT_EQ(plan.exit_code, 0) << plan.out << plan.err;
}

}  // namespace
}  // namespace vn
