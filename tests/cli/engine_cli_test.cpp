// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the engine on the command line: `run --ref --engine`, the Engine build
// flags (int8 calibration included), `convert`, `inspect model PLAN` and `inspect tactics`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/engine/plan.h"
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

TEST(CliEngine, RunRefEngineFp16PassesWithThePrecisionPreset) {
  auto r = run_vernier({"run", kDemo, "--ref", "--engine", "--fp16", "--deterministic"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tolerance preset for an engine with fp16 layers: atol=0.01, rtol=0.01"));
  EXPECT_THAT(r.out, HasSubstr("Built the engine in"));
  EXPECT_THAT(r.out, HasSubstr("engine-runner-N1-"));
  EXPECT_THAT(r.out, HasSubstr("vs. ref-runner-N0-"));
  EXPECT_THAT(r.out, HasSubstr("PASSED | 1 comparison(s)"));
}

TEST(CliEngine, ExplicitTolerancesReplaceThePreset) {
  auto r =
      run_vernier({"run", kDemo, "--ref", "--engine", "--fp16", "--builder-seed", "1", "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("Tolerance preset")));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
}

TEST(CliEngine, AnInjectedFaultFailsTheComparison) {
  auto r = run_vernier(
      {"run", kDemo, "--ref", "--engine", "--deterministic", "--inject-fault", "layer=fc,kind=scale,factor=2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 fault(s) injected (testing facility)"));
  EXPECT_THAT(r.out, HasSubstr("FAILED"));
}

TEST(CliEngine, BackendsCompareInCommandLineOrder) {
  TempDir dir;
  auto r = run_vernier(
      {"run", kDemo, "--engine", "--ref", "--deterministic", "--save-outputs", (dir / "out.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ref-runner-N1-"));
  EXPECT_THAT(r.out, HasSubstr("vs. engine-runner-N0-"));
  Result<io::RunResults> saved = io::load_run_results(dir / "out.json");
  ASSERT_TRUE(saved.ok()) << saved.status().to_string();
  ASSERT_EQ(saved->size(), 2u);
  EXPECT_THAT((*saved)[0].runner_name, StartsWith("engine-runner-N0-"));
  EXPECT_THAT((*saved)[1].runner_name, StartsWith("ref-runner-N1-"));
}

TEST(CliEngine, BadEngineFlagsAreOneLineErrors) {
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--inject-fault", "layer=fc,kind=melt"}),
                   "unknown kind 'melt'");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--inject-fault", "layer=nope,kind=zero"}),
                   "no layer or node is named 'nope'");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--calibration-data", "calib.json"}), "add --int8");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--int8", "--calibration-method", "kl"}),
                   "--calibration-method");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--layer-precisions", "fc:int8"}), "need --int8");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--int8", "--calibration-data", "/nonexistent/c.json"}),
                   "/nonexistent/c.json");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--layer-precisions", "fc"}), "--layer-precisions 'fc'");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--layer-precisions", "fc:fp8"}), "fp8");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--precision-constraints", "always"}),
                   "--precision-constraints");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--timing-margin", "-1"}), "--timing-margin");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-tactics", "/nonexistent/replay.json"}),
                   "/nonexistent/replay.json");
}

/// Saves `iterations` synthetic feeds of the demo model (seed 7) as a Polygraphy feed list.
std::string save_calibration_feeds(const TempDir& dir, int iterations) {
  const std::string path = (dir / "calib.json").string();
  auto r = run_vernier(
      {"run", kDemo, "--ref", "--seed", "7", "--iterations", std::to_string(iterations), "--save-inputs", path});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return path;
}

TEST(CliEngine, RunRefEngineInt8WithCalibrationDataPassesWithTheInt8Preset) {
  TempDir dir;
  const std::string calib = save_calibration_feeds(dir, 4);
  auto r = run_vernier({"run", kDemo, "--ref", "--engine", "--int8", "--calibration-data", calib});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("[I] int8: entropy calibration over 4 feed(s) of " + calib));
  EXPECT_THAT(r.out, HasSubstr("precisions: fp32 4, int8 3"));
  EXPECT_THAT(r.out, HasSubstr("Tolerance preset for an engine with int8 layers: atol=0.1, rtol=0.1"));
  EXPECT_THAT(r.out, HasSubstr("PASSED | 1 comparison(s)"));
}

TEST(CliEngine, TimingCacheIsFilledThenUsed) {
  TempDir dir;
  const std::vector<std::string> cmd = {"convert", kDemo, "--builder-seed", "2", "--timing-cache", "cache.json"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  auto first = run_vernier(with(cmd, {"-o", "a.json"}), dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("(0 found there,"));
  auto second = run_vernier(with(cmd, {"-o", "b.json"}), dir.path());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr(" 0 timed)"));
  EXPECT_THAT(second.out, Not(HasSubstr("(0 found there,")));
  test::write_file(dir / "bad.json", "[]");
  auto bad = run_vernier({"convert", kDemo, "--timing-cache", "bad.json", "-o", "c.json"}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("not a Vernier timing cache"));
}

TEST(CliEngine, ConvertInt8CalibratesOnAnNpz) {
  TempDir dir;
  Tensor image(DType::kFloat32, {1, 3, 32, 32});
  float v = 0;
  for (float& x : image.mutable_values<float>()) {
    v += 0.37f;
    x = v - std::floor(v);
  }
  TensorMap feed;
  feed.set("image", image);
  const std::string npz = (dir / "calib.npz").string(), plan = (dir / "plan.json").string();
  ASSERT_TRUE(io::npz_save(feed, npz).ok());
  auto c = run_vernier(
      {"convert", kDemo, "--int8", "--calibration-data", npz, "--calibration-method", "percentile", "-o", plan});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.err, HasSubstr("[I] int8: percentile calibration over 1 feed(s) of " + npz));
  EXPECT_THAT(c.out, HasSubstr("int8 3"));
}

TEST(CliEngine, Int8WithoutCalibrationDataCalibratesOnSyntheticInputsAndSaysSo) {
  auto r = run_vernier({"run", kDemo, "--ref", "--engine", "--int8", "--calibration-method", "minmax", "--iterations",
                        "2", "--deterministic"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("[W] int8: no --calibration-data, so calibrating on 2 synthetic feed(s) (seed 1)"));
  EXPECT_THAT(r.err, HasSubstr("[I] int8: minmax calibration over 2 synthetic feed(s)"));
  EXPECT_THAT(r.out, HasSubstr("PASSED"));
}

TEST(CliEngine, ConvertInt8WithACalibrationCacheThenReuseIt) {
  TempDir dir;
  const std::string calib = save_calibration_feeds(dir, 3);
  const std::string plan = (dir / "int8.plan").string(), cache = (dir / "calib.cache").string();
  auto c = run_vernier({"convert", kDemo, "--int8", "--calibration-data", calib, "--calibration-method", "entropy",
                        "--calibration-cache", cache, "-o", plan});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.err, HasSubstr("[I] int8: wrote the calibration cache " + cache));
  EXPECT_THAT(c.out, HasSubstr("4 layer(s) without an int8 tactic stay in float"));

  auto i = run_vernier({"inspect", "model", plan});
  ASSERT_EQ(i.exit_code, 0) << i.out << i.err;
  EXPECT_THAT(i.out, HasSubstr("Calibration: entropy calibration over 3 feed(s) of " + calib));
  EXPECT_THAT(i.out, HasSubstr("3 int8 layer(s)"));
  EXPECT_THAT(i.out, HasSubstr("softmax (fp32): no int8 tactic for Softmax layers"));
  EXPECT_THAT(i.out, HasSubstr("conv__im2col_int8"));

  auto run = run_vernier({"run", kDemo, "--ref", "--engine", "--load-engine", plan});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("Tolerance preset for an engine with int8 layers"));

  // A second build reads the cache: no calibration data, the same scales.
  const std::string again = (dir / "again.plan").string();
  auto c2 = run_vernier({"convert", kDemo, "--int8", "--calibration-cache", cache, "-o", again});
  ASSERT_EQ(c2.exit_code, 0) << c2.out << c2.err;
  EXPECT_THAT(c2.err, HasSubstr("read from the calibration cache " + cache));
  EXPECT_THAT(c2.err, Not(HasSubstr("synthetic")));
  Result<engine::Plan> first = engine::load_plan(plan), second = engine::load_plan(again);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(first->int8_scales.empty());
  EXPECT_EQ(first->int8_scales, second->int8_scales);

  // The plan fixes int8 and its scales; a cache for another model is refused.
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-engine", plan, "--int8"}), "--int8");
  std::string text;
  {
    std::ifstream in(cache);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t hash = text.find("\"hash\": \"0x");
  ASSERT_NE(hash, std::string::npos) << text;
  text.replace(hash + 11, 4, "beef");
  {
    std::ofstream out(cache);
    out << text;
  }
  expect_bad_input(run_vernier({"convert", kDemo, "--int8", "--calibration-cache", cache, "-o", again}),
                   "was calibrated on another model");
}

TEST(CliEngine, ConvertInspectAndRunASavedPlan) {
  TempDir dir;
  const std::string plan = (dir / "plan.json").string(), tactics = (dir / "tactics.json").string();
  auto c = run_vernier({"convert", kDemo, "--fp16", "--builder-seed", "4", "-o", plan, "--save-tactics", tactics});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_THAT(c.out, HasSubstr("Saved the engine plan to " + plan));

  auto i = run_vernier({"inspect", "model", plan, "--show", "timings"});
  ASSERT_EQ(i.exit_code, 0) << i.out << i.err;
  EXPECT_THAT(i.out, HasSubstr("==== Engine plan"));
  EXPECT_THAT(i.out, HasSubstr("conv1 + bn1 + relu1"));
  EXPECT_THAT(i.out, HasSubstr("Tensors fused away"));
  EXPECT_THAT(i.out, HasSubstr("Timed candidates"));
  EXPECT_THAT(i.out, HasSubstr("builder seed 4"));

  auto t = run_vernier({"inspect", "tactics", tactics});
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_THAT(t.out, HasSubstr("[I] Layer: conv1 + bn1 + relu1"));
  EXPECT_THAT(t.out, HasSubstr("Algorithm: (Implementation: 0, Tactic: "));
  EXPECT_THAT(t.out, HasSubstr("TensorInfo(DataType.HALF"));

  auto run = run_vernier({"run", kDemo, "--ref", "--engine", "--load-engine", plan});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("Loaded the engine plan " + plan));

  const std::string replayed = (dir / "replayed.json").string();
  auto again = run_vernier({"convert", kDemo, "--load-tactics", tactics, "-o", replayed});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto ri = run_vernier({"inspect", "model", replayed});
  EXPECT_THAT(ri.out, HasSubstr("tactics replayed"));

  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-engine", plan, "--fp16"}),
                   "runs the plan as it was built");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-engine", plan, "--outputs", "relu1"}),
                   "rebuild the plan");
}

TEST(CliEngine, APlanForAnotherModelIsRefused) {
  TempDir dir;
  const std::string plan = (dir / "plan.json").string(), other = (dir / "other.onnx").string();
  ASSERT_EQ(run_vernier({"convert", kDemo, "--deterministic", "-o", plan}).exit_code, 0);
  // The same graph with one weight changed is another model.
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Tensor w = model->graph.initializers.front().tensor.clone();
  w.mutable_values<float>()[0] += 1.0f;
  model->graph.initializers.front().tensor = w;
  ASSERT_TRUE(save_model(*model, other).ok());
  expect_bad_input(run_vernier({"run", other, "--engine", "--load-engine", plan}), "built for another model");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-engine", kDemo}), kDemo);
}

TEST(CliEngine, MarkAllShowsThePreventedFusions) {
  TempDir dir;
  const std::string plan = (dir / "plan.json").string();
  ASSERT_EQ(run_vernier({"convert", kDemo, "--deterministic", "--mark-all", "-o", plan}).exit_code, 0);
  auto i = run_vernier({"inspect", "model", plan});
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_THAT(i.out, HasSubstr("Fusions prevented by marked outputs"));
  EXPECT_THAT(i.out, HasSubstr("Conv+BatchNormalization of conv1, bn1: prevented by marked output conv1"));
}

}  // namespace
}  // namespace vn
