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

const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

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
  // The minimal failing model is relu1 alone, and it loads through the ONNX checker.
  const auto inspect = run_vernier({"inspect", "model", "w/minimal.onnx"}, dir.path());
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("---- 1 Node(s) ----"));
  EXPECT_THAT(inspect.out, HasSubstr("relu1 [Op: Relu]"));
  EXPECT_TRUE(std::filesystem::exists(dir / "w/minimal_inputs.json"));
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
