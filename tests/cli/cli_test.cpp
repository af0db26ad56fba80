// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the vernier program: exit codes, reports and files, run as a user would.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/io/npz.h"
#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/util/cli_expect.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kDemo = vn::test::demo_model();

using test::expect_bad_input;

void save_text_model(const std::string& text, const std::filesystem::path& path) {
  LoadOptions opts;
  opts.check_model = false;
  opts.infer_shapes = false;
  Result<Model> m = parse_model_text(text, opts);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  SaveOptions save;
  save.check_model = false;
  ASSERT_TRUE(save_model(*m, path, save).ok());
}

TEST(Cli, HelpAndUsageErrors) {
  auto help = run_vernier({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("run"));
  EXPECT_THAT(help.out, HasSubstr("inspect"));
  expect_bad_input(run_vernier({}), "subcommand");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--no-such-flag"}), "--no-such-flag");
  expect_bad_input(run_vernier({"run", kDemo}), "--ref");
}

TEST(Cli, RunPrintsEveryOutputWithStatistics) {
  auto r = run_vernier({"run", kDemo, "--ref"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("probs [dtype=float32, shape=(1, 10)] | Stats: mean=0.1,"));
  EXPECT_THAT(r.out, HasSubstr("Completed 1 iteration(s)"));
}

TEST(Cli, MarkAllSavesEveryTensorInNodeOrder) {
  TempDir dir;
  auto r = run_vernier({"run", kDemo, "--ref", "--mark-all", "--save-outputs", (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<io::RunResults> results = io::load_run_results(dir / "out.json");
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_THAT((*results)[0].runner_name, StartsWith("ref-runner-N0-"));
  const TensorMap& outs = (*results)[0].iterations.at(0).outputs;
  std::vector<std::string> names;
  for (const NamedTensor& t : outs) names.push_back(t.name);
  // Graph outputs first, then every node output in node order.
  EXPECT_EQ(names, (std::vector<std::string>{"probs", "conv1", "bn1", "relu1", "pool1", "conv2", "relu2", "gap", "flat",
                                             "logits"}));
  const Tensor* probs = outs.find("probs");
  ASSERT_NE(probs, nullptr);
  auto v = probs->values<float>();
  EXPECT_NEAR(std::accumulate(v.begin(), v.end(), 0.0), 1.0, 1e-6);
  for (float x : outs.find("relu1")->values<float>()) EXPECT_GE(x, 0.0f);
}

TEST(Cli, SyntheticInputsMatchPolygraphySeedOne) {
  TempDir dir;
  auto r = run_vernier({"run", kDemo, "--ref", "--save-inputs", (dir / "in.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<std::vector<TensorMap>> feeds = io::load_feed_list(dir / "in.json");
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  auto image = feeds->at(0).find("image")->values<float>();
  EXPECT_FLOAT_EQ(image[0], 0.4170220f);
  EXPECT_FLOAT_EQ(image[1], 0.7203245f);
  EXPECT_NEAR(image[2], 0.0001144, 1e-7);
  EXPECT_FLOAT_EQ(image[3], 0.3023326f);
}

TEST(Cli, LoadedInputsReproduceTheRun) {
  TempDir dir;
  auto a = run_vernier({"run", kDemo, "--ref", "--seed", "7", "--iterations", "2", "--save-inputs",
                        (dir / "in.json").string(), "--save-outputs", (dir / "a.json").string()});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = run_vernier({"run", kDemo, "--ref", "--load-inputs", (dir / "in.json").string(), "--save-outputs",
                        (dir / "b.json").string()});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto ra = io::load_run_results(dir / "a.json");
  auto rb = io::load_run_results(dir / "b.json");
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ((*ra)[0].iterations.size(), 2u);
  ASSERT_EQ((*rb)[0].iterations.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE((*ra)[0].iterations[i].outputs.find("probs")->same_as(*(*rb)[0].iterations[i].outputs.find("probs")));
  }
  EXPECT_FALSE(
      (*ra)[0].iterations[0].outputs.find("probs")->same_as(*(*ra)[0].iterations[1].outputs.find("probs")));
}

TEST(Cli, SavesNpzForOneIterationOnly) {
  TempDir dir;
  auto ok = run_vernier({"run", kDemo, "--ref", "--outputs", "relu2", "--save-outputs", (dir / "o.npz").string()});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  Result<TensorMap> m = io::npz_load(dir / "o.npz");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->contains("probs"));
  EXPECT_TRUE(m->contains("relu2"));
  expect_bad_input(
      run_vernier({"run", kDemo, "--ref", "--iterations", "2", "--save-outputs", (dir / "o2.npz").string()}), ".json");
}

TEST(Cli, BadModelsAreOneLineErrors) {
  TempDir dir;
  expect_bad_input(run_vernier({"run", (dir / "missing.onnx").string(), "--ref"}), "missing.onnx");
  const std::string bytes = test::read_file(kDemo);
  test::write_file(dir / "truncated.onnx", bytes.substr(0, bytes.size() / 3));
  expect_bad_input(run_vernier({"run", (dir / "truncated.onnx").string(), "--ref"}), "truncated.onnx");
  test::write_file(dir / "text.onnx", "this is not a model\n");
  expect_bad_input(run_vernier({"inspect", "model", (dir / "text.onnx").string()}), "text.onnx");
  save_text_model(R"(<ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = FancyNewOp(x) })",
                  dir / "unknown_op.onnx");
  expect_bad_input(run_vernier({"run", (dir / "unknown_op.onnx").string(), "--ref"}), "FancyNewOp");
}

TEST(Cli, BadFeedsAreOneLineErrors) {
  TempDir dir;
  TensorMap wrong_name{{"picture", Tensor(DType::kFloat32, {1, 3, 32, 32})}};
  ASSERT_TRUE(io::npz_save(wrong_name, dir / "wrong_name.npz").ok());
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--load-inputs", (dir / "wrong_name.npz").string()}), "'image'");
  TensorMap wrong_dtype{{"image", Tensor(DType::kInt64, {1, 3, 32, 32})}};
  ASSERT_TRUE(io::npz_save(wrong_dtype, dir / "wrong_dtype.npz").ok());
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--load-inputs", (dir / "wrong_dtype.npz").string()}), "int64");
  TensorMap wrong_shape{{"image", Tensor(DType::kFloat32, {1, 3, 16, 16})}};
  ASSERT_TRUE(io::npz_save(wrong_shape, dir / "wrong_shape.npz").ok());
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--load-inputs", (dir / "wrong_shape.npz").string()}),
                   "(1, 3, 16, 16)");
  test::write_file(dir / "broken.json", "[{\"image\": {\"array\": \"k05VTVBZ\", ");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--load-inputs", (dir / "broken.json").string()}), "broken.json");
  test::write_file(dir / "broken.npy", "\x93NUMPY\x01\x00garbage");
  expect_bad_input(run_vernier({"inspect", "data", (dir / "broken.npy").string()}), "broken.npy");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--input-shapes", "image:1x3"}), "--input-shapes");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--outputs", "no_such_tensor"}), "no_such_tensor");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--val-range", "[5,1]"}), "--val-range");
}

TEST(Cli, InspectModelShowsNodesAttributesAndWeights) {
  auto r = run_vernier({"inspect", "model", kDemo});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("image [dtype=float32, shape=(1, 3, 32, 32)]"));
  EXPECT_THAT(r.out, HasSubstr("Node 0 | conv1 [Op: Conv]"));
  EXPECT_THAT(r.out, HasSubstr("---- 10 Node(s) ----"));
  EXPECT_THAT(r.out, HasSubstr("relu1 [dtype=float32, shape=(1, 8, 32, 32)]"));
  auto attrs = run_vernier({"inspect", "model", kDemo, "--show", "attrs"});
  EXPECT_THAT(attrs.out, HasSubstr("pads = [1, 1, 1, 1]"));
  auto weights = run_vernier({"inspect", "model", kDemo, "--show", "weights"});
  EXPECT_THAT(weights.out, HasSubstr("conv1.weight [dtype=float32, shape=(8, 3, 3, 3)] | Stats:"));
  expect_bad_input(run_vernier({"inspect", "model", kDemo, "--show", "everything"}), "everything");
}

TEST(Cli, InspectDataReadsEveryFormat) {
  TempDir dir;
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--save-inputs", (dir / "in.json").string(), "--save-outputs",
                         (dir / "out.json").string()})
                .exit_code,
            0);
  auto feeds = run_vernier({"inspect", "data", (dir / "in.json").string()});
  ASSERT_EQ(feeds.exit_code, 0) << feeds.err;
  EXPECT_THAT(feeds.out, HasSubstr("image [dtype=float32, shape=(1, 3, 32, 32)] | Stats:"));
  EXPECT_THAT(feeds.out, HasSubstr("Bin Range"));
  auto results = run_vernier({"inspect", "data", (dir / "out.json").string(), "--show-values"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  EXPECT_THAT(results.out, HasSubstr("ref-runner-N0-"));
  EXPECT_THAT(results.out, HasSubstr("probs [dtype=float32, shape=(1, 10)]"));
  auto golden = run_vernier({"inspect", "data", std::string(VN_TEST_DATA_DIR) + "/polygraphy/02b_golden.json"});
  ASSERT_EQ(golden.exit_code, 0) << golden.err;
  EXPECT_THAT(golden.out, HasSubstr("t_scale [dtype=float32, shape=(1, 3, 4, 4)]"));
}

TEST(Cli, DemoTriagesTheDemoScenario) {
  TempDir dir;
  auto r = run_vernier({"demo"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] Scenario demo:"));
  EXPECT_THAT(r.out, HasSubstr("culprit: layer 'conv2'"));
  EXPECT_TRUE(std::filesystem::exists(dir / "vernier_demo/report.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "vernier_demo/bundle/reproduce.sh"));
  // Its default folder is its own: a second demo replaces the first.
  EXPECT_EQ(run_vernier({"demo"}, dir.path()).exit_code, 0);
}

}  // namespace
}  // namespace vn

namespace vn {
namespace {

TEST(CliCompare, LoadedResultsAreComparedWithTheLiveRun) {
  TempDir dir;
  const std::string golden = (dir / "golden.json").string();
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--mark-all", "--save-outputs", golden}).exit_code, 0);
  auto same = run_vernier({"run", kDemo, "--ref", "--mark-all", "--load-outputs", golden, "--report-json",
                           (dir / "report.json").string()});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_THAT(same.out, HasSubstr("PASSED | all 10 tensor(s) matched"));
  const std::string report = test::read_file(dir / "report.json");
  EXPECT_THAT(report, HasSubstr("\"min_passing\""));
  EXPECT_THAT(report, HasSubstr("\"passed\": true"));

  // Other inputs change every tensor: the comparison fails with exit code 1 and names the culprits.
  auto other = run_vernier({"run", kDemo, "--ref", "--seed", "2", "--mark-all", "--load-outputs", golden});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.out, HasSubstr("conv1   FAILED"));
  EXPECT_THAT(other.out, HasSubstr("To pass        | atol >= "));
  EXPECT_THAT(other.out, HasSubstr("FAILED | 10 of 10 tensor(s) mismatched"));

  // A per-tensor tolerance and a statistic mode let the small softmax differences through.
  auto loose = run_vernier({"run", kDemo, "--ref", "--seed", "2", "--load-outputs", golden, "--atol", "probs:1",
                            "--check-error-stat", "max"});
  EXPECT_EQ(loose.exit_code, 0) << loose.out;
}

TEST(CliCompare, ComparesPolygraphyFilesWithoutRunning) {
  const std::string golden = std::string(VN_SOURCE_DIR) + "/tests/data/polygraphy/02b_golden.json";
  auto r = run_vernier({"run", kDemo, "--load-outputs", golden, golden});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("t_scale"));
  // Names are paired exactly: nothing in the demo model is called like the Polygraphy sample's tensors.
  auto unpaired = run_vernier({"run", kDemo, "--ref", "--load-outputs", golden});
  EXPECT_EQ(unpaired.exit_code, 1);
  EXPECT_THAT(unpaired.out, HasSubstr("no tensor name appears on both sides"));
  const std::string two_iterations = std::string(VN_SOURCE_DIR) + "/tests/data/polygraphy/19c_id_outputs.json";
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--load-outputs", two_iterations}), "2 iteration(s)");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--atol", "x:abc"}), "--atol");
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--check-error-stat", "p50"}), "--check-error-stat");
}

TEST(CliCompare, SavedResultsAreComparedWithNoModel) {
  // As `polygraphy run --load-outputs a.json b.json`: two files, no model, either spelling.
  TempDir dir;
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--save-outputs", a}).exit_code, 0);
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--seed", "2", "--save-outputs", b}).exit_code, 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--load-outputs", a, b}, {"run", "--load-outputs", a, "--load-outputs", b}}) {
    auto r = run_vernier(args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("Loaded 1 runner(s) from " + b));
    EXPECT_THAT(r.out, HasSubstr("FAILED | 1 comparison(s)"));
  }
  auto same = run_vernier({"run", "--load-outputs", a, a});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  // With a model the results do not come from, they are compared tensor by tensor, not ranked
  // as the layers of that model.
  auto unrelated = run_vernier(
      {"run", std::string(VN_SOURCE_DIR) + "/assets/scenarios/fp16_range.onnx", "--load-outputs", a, b});
  EXPECT_EQ(unrelated.exit_code, 1) << unrelated.out;
  EXPECT_THAT(unrelated.out, Not(HasSubstr("layer-wise")));
  EXPECT_THAT(unrelated.out, Not(HasSubstr("layer(s)")));
  auto one = run_vernier({"run", "--load-outputs", a});
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_THAT(one.out, HasSubstr("1 runner(s) loaded: nothing to compare"));
  expect_bad_input(run_vernier({"run", "--ref"}), "a model is required");
}

}  // namespace
}  // namespace vn

namespace vn {
namespace {

TEST(Cli, ReferenceInDoubleAgreesWithFloatWithinRounding) {
  TempDir dir;
  const std::string golden = (dir / "fp32.json").string();
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--mark-all", "--save-outputs", golden}).exit_code, 0);
  auto r = run_vernier({"run", kDemo, "--ref", "--ref-precision", "fp64", "--mark-all", "--load-outputs", golden,
                        "--atol", "1e-5", "--rtol", "1e-4"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASSED | all 10 tensor(s) matched"));
  // fp32 and fp64 differ in rounding, so the comparison is not exact.
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("conv1   PASSED        0        0")));
  expect_bad_input(run_vernier({"run", kDemo, "--ref", "--ref-precision", "fp8"}), "--ref-precision");
}

}  // namespace
}  // namespace vn
