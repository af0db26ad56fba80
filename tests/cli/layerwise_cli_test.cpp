// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of layer-wise comparison on the command line: `run --mark-all --local-errors`
// naming the culprit, the JSON report, saving a streamed run and comparing it again from the
// files, and `--external` engines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/polygraphy_json.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kDemo = vn::test::demo_model();
const std::vector<std::string> kFault = {"--deterministic", "--inject-fault", "layer=relu1,kind=scale,factor=1.01"};

std::vector<std::string> args(std::vector<std::string> a, const std::vector<std::string>& more = kFault) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(CliLayerwise, LocalErrorsNameTheFaultyLayer) {
  TempDir dir;
  const std::string report = (dir / "report.json").string();
  auto r = run_vernier(
      args({"run", kDemo, "--ref", "--engine", "--mark-all", "--local-errors", "--report-json", report}));
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("10 run alone on the reference's inputs"));
  EXPECT_THAT(r.out, HasSubstr("Culprit        | 'relu1' (Relu) is the first layer whose own local error"));
  EXPECT_THAT(r.out, HasSubstr("Absolute error histogram:"));
  EXPECT_THAT(r.out, HasSubstr("Tensors held at most:"));
  const nlohmann::json j = nlohmann::json::parse(test::read_file(report));
  EXPECT_FALSE(j["passed"].get<bool>());
  const nlohmann::json& cmp = j["comparisons"][0]["comparison"];
  EXPECT_EQ(cmp["culprit"], "relu1");
  EXPECT_EQ(cmp["ranking"][0], "relu1");
  EXPECT_TRUE(cmp["local_errors"].get<bool>());
  ASSERT_EQ(cmp["layers"].size(), 10u);
  for (const nlohmann::json& layer : cmp["layers"]) {
    ASSERT_TRUE(layer.contains("local")) << layer["name"];
    EXPECT_EQ(layer["local"][0]["passed"].get<bool>(), layer["name"] != "relu1") << layer["name"];
  }
}

TEST(CliLayerwise, AStreamedRunSavesBothSidesAndComparesAgainFromTheFile) {
  TempDir dir;
  const std::string saved = (dir / "saved.json").string();
  auto r = run_vernier(args({"run", kDemo, "--ref", "--engine", "--mark-all", "--save-outputs", saved}));
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Culprit        | 'relu1' (Relu) is the first layer whose own accumulated error"));
  Result<io::RunResults> results = io::load_run_results(saved);
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  ASSERT_EQ(results->size(), 2u);
  for (const io::RunnerResults& runner : *results) {
    ASSERT_EQ(runner.iterations.size(), 1u);
    EXPECT_EQ(runner.iterations[0].outputs.size(), 10u) << runner.runner_name;
  }
  // The saved layer-wise results compare again, ranked against the model's graph.
  auto again = run_vernier({"run", kDemo, "--load-outputs", saved});
  ASSERT_EQ(again.exit_code, 1) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("| layer-wise ===="));
  EXPECT_THAT(again.out, HasSubstr("Culprit        | 'relu1' (Relu)"));
}

TEST(CliLayerwise, LocalErrorsNeedTheReferenceFirstAndTheEngineSecond) {
  auto r = run_vernier(args({"run", kDemo, "--engine", "--ref", "--mark-all", "--local-errors"}));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, StartsWith("vernier: error: "));
  EXPECT_THAT(r.err, HasSubstr("--local-errors"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliLayerwise, ExternalEngineThroughTheProcessProtocol) {
  TempDir dir;
  const std::filesystem::path runner = dir / "runner.sh";
  // The "other engine" is Vernier's own engine with a fault on conv2, run as a command.
  test::write_file(runner, std::string("#!/bin/sh\nexec ") + VN_BINARY_DIR +
                               "/tui/vernier run \"$1\" --engine --deterministic --inject-fault "
                               "layer=conv2,kind=offset,magnitude=0.05 --load-inputs \"$2\" --save-outputs \"$3\" "
                               "--outputs $(cat \"$4\") > /dev/null\n");
  const std::string command = "sh " + runner.string() + " {model} {inputs} {outputs} {mark}";
  auto plain = run_vernier({"run", kDemo, "--ref", "--external", command});
  ASSERT_EQ(plain.exit_code, 1) << plain.out << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("external-runner-N1-"));
  auto layerwise = run_vernier({"run", kDemo, "--ref", "--external", command, "--mark-all"});
  ASSERT_EQ(layerwise.exit_code, 1) << layerwise.out << layerwise.err;
  EXPECT_THAT(layerwise.out, HasSubstr("Culprit        | 'conv2' (Conv)"));

  auto crash = run_vernier({"run", kDemo, "--ref", "--external", "kill -SEGV $$ {outputs}"});
  EXPECT_EQ(crash.exit_code, 2) << crash.out << crash.err;
  EXPECT_THAT(crash.err, HasSubstr("killed by signal 11 (SIGSEGV)"));
  auto hang = run_vernier({"run", kDemo, "--ref", "--external", "sleep 30; echo {outputs}", "--external-timeout", "0.5"});
  EXPECT_EQ(hang.exit_code, 2) << hang.out << hang.err;
  EXPECT_THAT(hang.err, HasSubstr("timed out after 0.5 s"));
}

}  // namespace
}  // namespace vn
