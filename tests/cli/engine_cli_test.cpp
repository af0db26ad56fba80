// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the engine on the command line: `run --ref --engine`, the Engine build
// flags, `convert`, `inspect model PLAN` and `inspect tactics`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/io/polygraphy_json.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

void expect_bad_input(const test::ProcessResult& r, const std::string& must_mention) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, StartsWith("vernier: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(must_mention));
}

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
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--int8"}), "--int8");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--layer-precisions", "fc"}), "--layer-precisions 'fc'");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--layer-precisions", "fc:fp8"}), "fp8");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--precision-constraints", "always"}),
                   "--precision-constraints");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--timing-margin", "-1"}), "--timing-margin");
  expect_bad_input(run_vernier({"run", kDemo, "--engine", "--load-tactics", "/nonexistent/replay.json"}),
                   "/nonexistent/replay.json");
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
