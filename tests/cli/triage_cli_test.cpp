// SPDX-License-Identifier: Apache-2.0
// `vernier triage --headless` on the demo model: the path through the flowchart and the culprit
// for a faulty layer, a flaky tactic and a model without failure; report.json; usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;

const std::string kDemo = vn::test::demo_model();

std::vector<std::string> path_of(const std::filesystem::path& report_file) {
  const nlohmann::json report = nlohmann::json::parse(test::read_file(report_file));
  std::vector<std::string> path;
  for (const auto& step : report["path"]) {
    std::string entry = step["node"].get<std::string>();
    if (step.contains("answer")) entry.append(":").append(step["answer"].get<std::string>());
    path.push_back(entry);
  }
  return path;
}

// Runs the bundle's reproduce.sh with this build's vernier.
test::ProcessResult reproduce(const std::filesystem::path& bundle) {
  return test::run_process({"env", "VERNIER=" + std::string(VN_BINARY_DIR) + "/tui/vernier", "sh",
                            (bundle / "reproduce.sh").string()});
}

TEST(CliTriage, AFaultyLayerIsFoundLayerwiseAndExtracted) {
  TempDir dir;
  const auto r = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--deterministic", "--inject-fault",
                              "layer=relu1,kind=scale,factor=1.5"},
                             dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("culprit: layer 'relu1'"));
  EXPECT_EQ(path_of(dir / "w/report.json"),
            (std::vector<std::string>{"sanitize", "real_data:no", "intermittent:no", "layerwise:yes", "extract:yes",
                                      "minimal"}));
  // The bundle's model is relu1 alone, and it loads through the ONNX checker.
  const auto inspect = run_vernier({"inspect", "model", "w/bundle/model.onnx"}, dir.path());
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("---- 1 Node(s) ----"));
  EXPECT_THAT(inspect.out, HasSubstr("relu1 [Op: Relu]"));
  for (const char* file : {"inputs.json", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb",
                           "reference_outputs.json", "failing_outputs.json", "plan.json", "tactics.json", "faults.txt",
                           "report.md", "reproduce.sh"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / "w/bundle" / file)) << file;
  }
  const std::string report = test::read_file(dir / "w/bundle/report.md");
  EXPECT_THAT(report, HasSubstr("**Culprit:** layer 'relu1'"));
  EXPECT_THAT(report, HasSubstr("polygraphy run model.onnx --onnxrt --trt --load-inputs inputs.json"));
  EXPECT_THAT(report, HasSubstr("Extract the failing subgraph"));
  // One command reproduces the failure from the bundle alone.
  test::ProcessResult reproduced = reproduce(dir / "w/bundle");
  EXPECT_EQ(reproduced.exit_code, 1) << reproduced.out << reproduced.err;
  EXPECT_THAT(reproduced.out, HasSubstr("FAILED"));
}

TEST(CliTriage, AFlakyTacticIsNamedFromRepeatedBuilds) {
  TempDir dir;
  // Every tactic ties (huge margin), so the builder seed picks; the fault is on one GEMM tactic.
  const auto r = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--builder-seed", "3", "--builds", "12",
                              "--timing-margin", "1000", "--inject-fault", "tactic=gemm__split_k4,kind=scale,factor=1.5"},
                             dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("culprit: tactic gemm__split_k4"));
  EXPECT_EQ(path_of(dir / "w/report.json"),
            (std::vector<std::string>{"sanitize", "real_data:no", "intermittent:yes", "debug_intermittent:yes", "minimal"}));
  EXPECT_FALSE(std::filesystem::is_empty(dir / "w/builds/good"));
  EXPECT_FALSE(std::filesystem::is_empty(dir / "w/builds/bad"));
  // The bundle replays a bad build's tactics, so its plan fails every time.
  EXPECT_THAT(test::read_file(dir / "w/bundle/plan.json"), HasSubstr("gemm__split_k4"));
  EXPECT_EQ(reproduce(dir / "w/bundle").exit_code, 1);
}

TEST(CliTriage, AFailureHiddenByMarkingIsReduced) {
  TempDir dir;
  // The fault fires only in a fused layer: marking every tensor prevents the fusion and hides it.
  const auto r = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--deterministic", "--inject-fault",
                              "layer=conv2,kind=scale,factor=1.5,when=fused"},
                             dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(path_of(dir / "w/report.json"),
            (std::vector<std::string>{"sanitize", "real_data:no", "intermittent:no", "layerwise:no", "reduce:yes",
                                      "minimal"}));
  EXPECT_THAT(r.out, HasSubstr("culprit: nodes 'conv2', 'relu2'"));
  EXPECT_EQ(reproduce(dir / "w/bundle").exit_code, 1);
}

const std::string kZoo = std::string(VN_SOURCE_DIR) + "/assets/scenarios/";

TEST(CliTriage, OptionsGivenOnTheCommandLineWinOverTheScenarios) {
  TempDir dir;
  // The scenario's check looks for a message Vernier never prints; the command line's regex is
  // right, so the reduction keeps the fused pair.
  const auto fixed = run_vernier({"triage", "--scenario", kZoo + "reduce_check.json", "--headless", "--workdir", "w",
                                  "--fail-regex", "FAILED \\| [0-9]+ comparison"},
                                 dir.path());
  EXPECT_EQ(fixed.exit_code, 1) << fixed.out << fixed.err;
  EXPECT_EQ(path_of(dir / "w/report.json"),
            (std::vector<std::string>{"sanitize", "real_data:no", "intermittent:no", "layerwise:no", "reduce:yes",
                                      "minimal"}));
  EXPECT_THAT(fixed.out, HasSubstr("culprit: nodes 'conv2', 'relu2'"));
  EXPECT_TRUE(std::filesystem::exists(dir / "w/vernier_debug.onnx"));
  // Another fault replaces the scenario's: now layer-wise comparison sees it.
  const auto other = run_vernier({"triage", "--scenario", kZoo + "fused_fault.json", "--headless", "--workdir", "o",
                                  "--inject-fault", "layer=conv1,kind=scale,factor=1.5"},
                                 dir.path());
  EXPECT_EQ(other.exit_code, 1) << other.out << other.err;
  EXPECT_THAT(other.out, HasSubstr("culprit: layer 'conv1"));
  // Neither a model nor a scenario; a malformed scenario.
  const auto none = run_vernier({"triage", "--headless"}, dir.path());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("give the MODEL to triage, a --scenario, or --resume DIR"));
  test::write_file(dir / "bad.json", R"({"format": "vernier-scenario", "version": 1, "name": "b", "title": "t",
      "model": "m.onnx", "engine": {"fp17": true}, "expect": {"outcome": "no_bug", "path": ["sanitize"]}})");
  const auto bad = run_vernier({"triage", "--scenario", "bad.json", "--headless"}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("'engine.fp17': unknown key"));
}

TEST(CliTriage, NoFailureExitsZero) {
  TempDir dir;
  const auto r = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--deterministic"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Outcome: no_failure"));
  // An earlier triage is not overwritten without --force.
  const auto again = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--deterministic"}, dir.path());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("--force"));
  EXPECT_EQ(run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--deterministic", "--force"}, dir.path()).exit_code, 0);
}

TEST(CliTriage, ResumeContinuesTheSessionWithItsOwnOptions) {
  TempDir dir;
  const auto r = run_vernier({"triage", kDemo, "--headless", "--deterministic", "--inject-fault",
                              "layer=relu1,kind=scale,factor=1.5"},
                             dir.path());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  // Without --workdir each triage gets a fresh folder.
  EXPECT_TRUE(std::filesystem::exists(dir / "vernier_triage/session.json"));
  const auto again = run_vernier({"triage", kDemo, "--headless", "--deterministic"}, dir.path());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "vernier_triage_2/report.json"));
  // An explicit folder holding a session points at --resume.
  const auto taken = run_vernier({"triage", kDemo, "--workdir", "vernier_triage"}, dir.path());
  EXPECT_EQ(taken.exit_code, 2);
  EXPECT_THAT(taken.err, HasSubstr("--resume vernier_triage"));
  // An ended session resumes to its result, probing nothing, from another folder too.
  const auto resumed = run_vernier({"triage", "--resume", (dir / "vernier_triage").string()}, dir / "vernier_triage");
  EXPECT_EQ(resumed.exit_code, 1) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("6 step(s) answered"));
  EXPECT_THAT(resumed.out, HasSubstr("culprit: layer 'relu1'"));
  EXPECT_THAT(resumed.out, HasSubstr("over 2 run(s) of the session"));
  EXPECT_THAT(resumed.out, HasSubstr("(earlier run: "));
  const nlohmann::json state = nlohmann::json::parse(test::read_file(dir / "vernier_triage/session.json"));
  EXPECT_EQ(state["runs"], 2);
  // The options are the session's: others are refused.
  const auto extra = run_vernier({"triage", "--resume", "vernier_triage", "--atol", "1"}, dir.path());
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_THAT(extra.err, HasSubstr("got --atol"));
  const auto none = run_vernier({"triage", "--resume", "nowhere"}, dir.path());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("no triage session here"));
}

TEST(CliTriage, ChineseChart) {
  TempDir dir;
  const auto r = run_vernier({"triage", kDemo, "--headless", "--workdir", "w", "--lang", "zh", "--deterministic",
                              "--inject-fault", "layer=relu1,kind=scale,factor=1.5"},
                             dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("你得到了一个最小失败用例"));
  const auto bad = run_vernier({"triage", kDemo, "--lang", "fr"}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--lang 'fr'"));
}

}  // namespace
}  // namespace vn
