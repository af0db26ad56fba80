// SPDX-License-Identifier: Apache-2.0
// The debug tools on a real engine: `debug precision`, `debug reduce` and `debug build` with
// ONNX Runtime (the ort runner) as the engine under test, called as the command line calls them
// (core/debug sessions), and on a runner that crashes. The command line's own flags
// (--engine-runner, --save-keep-fp32) run end to end at the bottom.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/backend/runner_registry.h"
#include "core/data/synthetic.h"
#include "core/debug/build_session.h"
#include "core/debug/precision_session.h"
#include "core/debug/reduce_session.h"
#include "core/eut/runner_engine.h"
#include "core/ir/onnx_export.h"
#include "core/ir/onnx_import.h"
#include "tests/backend/runner_test_util.h"
#include "tests/util/cli_expect.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string scenario_model(const std::string& name) { return std::string(VN_SOURCE_DIR) + "/assets/scenarios/" + name; }

std::shared_ptr<eut::EngineUnderTest> ort_engine() {
  eut::RunnerEngineOptions options;
  Result<RunnerCommand> command = resolve_runner("ort", std::string(VN_SOURCE_DIR) + "/assets");
  EXPECT_TRUE(command.ok()) << command.status().to_string();
  options.runner.command = *command;
  options.spec = "ort";
  return eut::runner_engine(std::move(options));
}

// A session of float16 builds of `model_path` checked against the reference on one synthetic
// feed, with `under_test` as the engine.
debug::EngineSessionConfig fp16_session(const std::string& model_path,
                                        std::shared_ptr<eut::EngineUnderTest> under_test) {
  debug::EngineSessionConfig config;
  Result<Model> model = load_model(model_path);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return config;
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  EXPECT_TRUE(feeds.ok());
  config.model = std::move(*model);
  config.model_name = model_path;
  config.feeds = std::move(*feeds);
  config.setup.builtin.under_test = std::move(under_test);
  config.setup.builtin.threads = 1;
  config.setup.builtin.compare.atol[""] = 0.01;
  config.setup.builtin.compare.rtol[""] = 0.01;
  config.build.allowed = engine::kFp32 | engine::kFp16;
  config.build.constraints = engine::PrecisionConstraints::kObey;
  config.setup.iter_artifact.clear();
  return config;
}

TEST(RunnerDebug, PrecisionOnOrtNamesTheLayerBeyondFloat16sRange) {
  // fp16_range.onnx scales its scores by 1e5, which float16 cannot hold: on ONNX Runtime the
  // float16 model fails, and the search must name 'gain' alone among the layers the conversion
  // lowered.
  debug::PrecisionSessionConfig config;
  config.engine = fp16_session(scenario_model("fp16_range.onnx"), ort_engine());
  config.engine.artifacts_dir = test::TempDir().path();
  Result<debug::PrecisionSessionResult> r = debug::run_precision_session(config, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  std::vector<std::string> candidates;
  for (const debug::PrecisionCandidate& c : r->candidates) candidates.push_back(c.name);
  EXPECT_THAT(candidates, ElementsAre("conv1", "relu1", "pool", "flatten", "classifier", "gain"));
  ASSERT_FALSE(r->search.steps.empty());
  EXPECT_EQ(r->search.steps.front().result.verdict, debug::Verdict::kBad) << "as converted, the model fails";
  EXPECT_THAT(r->search.layers, ElementsAre("gain"));

  // What the printed `vernier run` command verifies: gain kept in float32 passes on ONNX Runtime.
  std::vector<TensorMap> ref_outputs;
  Result<debug::EngineCheckSetup> setup = debug::prepare_engine_checks(config.engine, ref_outputs, {});
  ASSERT_TRUE(setup.ok()) << setup.status().to_string();
  engine::BuildOptions build = config.engine.build;
  build.layer_precisions.emplace_back("gain", engine::PrecisionId::kFp32);
  Result<debug::EngineCheck> check = debug::check_engine_build(*setup, build);
  ASSERT_TRUE(check.ok()) << check.status().to_string();
  EXPECT_EQ(check->result.verdict, debug::Verdict::kGood) << check->result.reason;
}

TEST(RunnerDebug, ReduceOnOrtKeepsTheCancellingNodes) {
  // cancellation.onnx subtracts two nearly equal products: in float16 on ONNX Runtime the
  // difference is mostly rounding, and every candidate without both products and the
  // subtraction passes.
  test::TempDir dir;
  debug::EngineSessionConfig engine = fp16_session(scenario_model("cancellation.onnx"), ort_engine());
  Result<debug::ReduceSession> session = debug::ReduceSession::open(engine.model, engine.feeds, 1);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  debug::ReduceSessionConfig config;
  debug::BuiltinCheck builtin = engine.setup.builtin;
  builtin.engine.build = engine.build;
  config.builtin = builtin;
  config.iter_artifact = dir / "iter.onnx";
  config.save_replay = dir / "replay.json";
  config.artifacts_dir = dir / "artifacts";
  config.output = dir / "minimal.onnx";
  Result<debug::ReduceSessionResult> r = session->run(config, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->reduce.failed_any);
  EXPECT_EQ(r->total_nodes, 5);
  EXPECT_THAT(r->minimal, HasSubstr("product_a (MatMul)"));
  EXPECT_THAT(r->minimal, HasSubstr("product_b (MatMul)"));
  EXPECT_THAT(r->minimal, HasSubstr("difference (Sub)"));
  EXPECT_THAT(r->minimal, ::testing::Not(HasSubstr("scale (Mul)")));
  ASSERT_TRUE(r->saved_output);

  // The minimal model fails on ONNX Runtime on its own.
  Result<Model> minimal = load_model(dir / "minimal.onnx");
  ASSERT_TRUE(minimal.ok()) << minimal.status().to_string();
  debug::EngineSessionConfig again = fp16_session((dir / "minimal.onnx").string(), ort_engine());
  std::vector<TensorMap> ref_outputs;
  Result<debug::EngineCheckSetup> setup = debug::prepare_engine_checks(again, ref_outputs, {});
  ASSERT_TRUE(setup.ok()) << setup.status().to_string();
  Result<debug::EngineCheck> check = debug::check_engine_build(*setup, again.build);
  ASSERT_TRUE(check.ok()) << check.status().to_string();
  EXPECT_EQ(check->result.verdict, debug::Verdict::kBad);
}

TEST(RunnerDebug, BuildOnOrtSaysEveryBuildIsTheSame) {
  debug::BuildSessionConfig config;
  config.engine = fp16_session(scenario_model("fp16_range.onnx"), ort_engine());
  test::TempDir dir;
  config.engine.artifacts_dir = dir.path();
  Result<debug::Until> until = debug::Until::parse("3");
  ASSERT_TRUE(until.ok());
  config.until = *until;
  Result<debug::BuildSessionResult> r = debug::run_build_session(config, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->summary.failed, 3);
  Result<eut::Capabilities> caps = config.engine.setup.builtin.under_test->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_FALSE(caps->builds_vary) << "ONNX Runtime builds a model one way";
}

TEST(RunnerDebug, PrecisionOnARunnerThatCrashesAtLoadIsAnErrorNamingIt) {
  Model model = test::small_runner_model();
  test::TempDir dir;
  const std::string path = (dir / "small.onnx").string();
  ASSERT_TRUE(save_model(model, path).ok());
  debug::PrecisionSessionConfig config;
  config.engine = fp16_session(path, eut::runner_engine({test::fake_runner("crash_load"), {}, "fake"}));
  config.engine.artifacts_dir = dir / "artifacts";
  Result<debug::PrecisionSessionResult> r = debug::run_precision_session(config, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kExternalFailure) << r.status().to_string();
  EXPECT_THAT(r.status().to_string(), HasSubstr(path));
}

TEST(RunnerDebug, ReduceOnARunnerThatCrashesInEveryRunFindsNoFailure) {
  // Every candidate is unresolved (the engine could not run it): nothing failed, and the session
  // says the check never saw the model fail instead of naming a culprit.
  Model model = test::small_runner_model();
  test::TempDir dir;
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model.graph, {});
  ASSERT_TRUE(feeds.ok());
  Result<debug::ReduceSession> session = debug::ReduceSession::open(model, *feeds, 1);
  ASSERT_TRUE(session.ok());
  debug::ReduceSessionConfig config;
  debug::BuiltinCheck builtin;
  builtin.under_test = eut::runner_engine({test::fake_runner("crash_run"), {}, "fake"});
  config.builtin = builtin;
  config.iter_artifact = dir / "iter.onnx";
  config.save_replay = dir / "replay.json";
  config.artifacts_dir = dir / "artifacts";
  Result<debug::ReduceSessionResult> r = session->run(config, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
}

TEST(RunnerDebug, BuildOnARunnerThatAnswersGarbageFailsEachBuildWithTheReason) {
  Model model = test::small_runner_model();
  test::TempDir dir;
  const std::string path = (dir / "small.onnx").string();
  ASSERT_TRUE(save_model(model, path).ok());
  debug::BuildSessionConfig config;
  config.engine = fp16_session(path, eut::runner_engine({test::fake_runner("garbage_run"), {}, "fake"}));
  config.engine.build.allowed = engine::kFp32;
  config.engine.artifacts_dir = dir / "artifacts";
  Result<debug::Until> until = debug::Until::parse("2");
  ASSERT_TRUE(until.ok());
  config.until = *until;
  std::vector<std::string> reasons;
  debug::BuildHooks hooks;
  hooks.on_finish = [&](const debug::IterationOutcome& o) { reasons.push_back(o.result.reason); };
  Result<debug::BuildSessionResult> r = debug::run_build_session(config, hooks);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(r->summary.passed, 0);
  for (const std::string& reason : reasons) EXPECT_THAT(reason, HasSubstr("this is not json"));
}

// ---- The command line ----

TEST(RunnerDebugCli, PrecisionSavesTheLayersToKeepAndTheirCommandPasses) {
  test::TempDir dir;
  const std::string model = scenario_model("fp16_range.onnx");
  test::ProcessResult r = test::run_vernier({"debug", "precision", model, "--fp16", "--engine-runner", "ort",
                                             "--save-keep-fp32", "keep.txt", "--deterministic"},
                                            dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("these 1 layer(s) must run in fp32 (removing any other still passes): gain"));
  std::ifstream in(dir / "keep.txt");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("\ngain\n"));

  // The printed command applies the layers on ONNX Runtime and passes.
  const std::string marker = "Apply and verify with:\n    vernier ";
  const size_t at = r.out.find(marker);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream line(r.out.substr(at + marker.size(), r.out.find('\n', at + marker.size()) - at - marker.size()));
  std::vector<std::string> args;
  for (std::string word; line >> word;) args.push_back(word);
  test::ProcessResult verify = test::run_vernier(args, dir.path());
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // And `convert --keep-fp32 @FILE` takes the file.
  test::ProcessResult convert = test::run_vernier(
      {"convert", model, "--to-onnx", "kept.onnx", "--fp16", "--keep-fp32", "@keep.txt"}, dir.path());
  ASSERT_EQ(convert.exit_code, 0) << convert.out << convert.err;
  EXPECT_THAT(convert.out, HasSubstr("1 kept in float32"));
}

TEST(RunnerDebugCli, ReduceWithAnEngineRunnerNeedsTheBuiltinCheck) {
  test::TempDir dir;
  test::ProcessResult r = test::run_vernier(
      {"debug", "reduce", scenario_model("cancellation.onnx"), "--engine-runner", "ort", "-o", "min.onnx"}, dir.path());
  test::expect_bad_input(r, "add --builtin-check");
}

TEST(RunnerDebugCli, ReduceOnOrtWritesAModelThatFailsThere) {
  test::TempDir dir;
  test::ProcessResult r =
      test::run_vernier({"debug", "reduce", scenario_model("cancellation.onnx"), "--builtin-check", "--engine-runner",
                         "ort", "--fp16", "-o", "min.onnx", "--no-progress"},
                        dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(runner ort) vs reference"));
  test::ProcessResult run =
      test::run_vernier({"run", "min.onnx", "--ref", "--engine-runner", "ort", "--fp16"}, dir.path());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
}

TEST(RunnerDebugCli, LocalErrorsOnOrtNameTheLayerBeyondFloat16sRange) {
  test::TempDir dir;
  test::ProcessResult r =
      test::run_vernier({"run", scenario_model("fp16_range.onnx"), "--ref", "--engine-runner", "ort", "--fp16",
                         "--mark-all", "--local-errors"},
                        dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Culprit        | 'gain' (Mul) is the first layer whose own local error breaks tolerance"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Not run alone")));
}

TEST(RunnerDebugCli, LocalErrorsOnARunnerThatFailsTheIsolatedRunSkipEachLayerWithTheReason) {
  // The runner serves the layer-wise run and then misbehaves on the isolated-layers model: the
  // comparison stands, and every layer says why it has no local error.
  test::TempDir dir;
  ASSERT_TRUE(save_model(test::small_runner_model(), dir / "small.onnx").ok());
  const std::vector<std::pair<std::string, std::string>> modes = {
      {"missing_tensor_run", "did not return output"},
      {"wrong_dtype_run", "as float64 but its load reply declared float32"},
      {"crash_run", "SIGSEGV"},
  };
  for (const auto& [mode, why] : modes) {
    SCOPED_TRACE(mode);
    const std::string runner =
        "env FAKE_MODE=" + mode + " FAKE_ONLY_ISOLATED=1 " + VN_PYTHON + " " + test::fake_runner_script();
    test::ProcessResult r = test::run_vernier(
        {"run", "small.onnx", "--ref", "--engine-runner", runner, "--mark-all", "--local-errors"}, dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("PASSED | all 4 tensor(s) matched"));
    for (const char* layer : {"'Relu_0'", "'Sigmoid_1'", "'Mul_2'", "'Add_3'"}) {
      EXPECT_THAT(r.out, HasSubstr(std::string("Not run alone: ") + layer + ": the engine cannot run the isolated layers"));
    }
    EXPECT_THAT(r.out, HasSubstr(why));
  }
}

TEST(RunnerDebugCli, TriageOfTheUsersOwnFloat16ModelOnOrt) {
  // --engine-model: the user converted the model themselves; the triage pairs each part of the
  // float32 model with the same part of theirs, names the layer, and the bundle reproduces.
  test::TempDir dir;
  const std::string model = scenario_model("fp16_range.onnx");
  ASSERT_EQ(test::run_vernier({"convert", model, "--to-onnx", "mine_fp16.onnx", "--fp16"}, dir.path()).exit_code, 0);
  test::ProcessResult r = test::run_vernier({"triage", model, "--headless", "--engine-runner", "ort", "--engine-model",
                                             "mine_fp16.onnx", "--fp16", "--workdir", "work"},
                                            dir.path());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("culprit: layer 'gain'"));
  EXPECT_THAT(r.out, HasSubstr("running mine_fp16.onnx"));
  test::ProcessResult again = test::run_process({"sh", "reproduce.sh"}, dir / "work" / "bundle");
  EXPECT_EQ(again.exit_code, 1) << again.out << again.err;

  test::expect_bad_input(test::run_vernier({"debug", "precision", model, "--fp16", "--engine-model", "mine_fp16.onnx"},
                                           dir.path()),
                         "--engine-model");
  test::expect_bad_input(
      test::run_vernier({"debug", "reduce", model, "-o", "min.onnx", "--engine-model", "mine_fp16.onnx"}, dir.path()),
      "add --builtin-check");
}

TEST(RunnerDebugCli, DemoTriagesOnTheRunnerGiven) {
  test::TempDir dir;
  test::ProcessResult r =
      test::run_vernier({"demo", "--engine-runner", "ort", "--workdir", "demo", "--headless"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Scenario ort_fp16_range"));
  EXPECT_THAT(r.out, HasSubstr("culprit: layer 'gain'"));
  std::ifstream in(dir / "demo" / "report.json");
  std::stringstream report;
  report << in.rdbuf();
  EXPECT_THAT(report.str(), HasSubstr("(runner ort)\""));

  test::expect_bad_input(test::run_vernier({"demo", "--engine-runner", "ort", "--browse"}, dir.path()), "--browse");
  test::expect_bad_input(test::run_vernier({"demo", "--runner-option", "x=1"}, dir.path()), "--engine-runner");
}

}  // namespace
}  // namespace vn
