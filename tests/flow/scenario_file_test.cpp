// SPDX-License-Identifier: Apache-2.0
// Scenario files: every one of the zoo loads with its paths resolved; malformed files are refused
// with the file and the key at fault.
#include "core/flow/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/util/process.h"

namespace vn::flow {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kZoo = std::filesystem::path(VN_SOURCE_DIR) / "assets" / "scenarios";

TEST(ScenarioFile, EveryScenarioOfTheZooLoadsWithItsFiles) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kZoo)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    Result<Scenario> s = load_scenario(entry.path());
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(s->name, entry.path().stem().string());
    EXPECT_TRUE(std::filesystem::exists(s->model)) << s->model;
    for (const auto& p : s->load_inputs) EXPECT_TRUE(std::filesystem::exists(p)) << p;
    if (!s->calibration_data.empty()) {
      EXPECT_TRUE(std::filesystem::exists(s->calibration_data)) << s->calibration_data;
    }
    EXPECT_FALSE(s->expect.path.empty());
  }
  EXPECT_GE(count, 7);
}

TEST(ScenarioFile, FieldsAndPathsRelativeToTheFile) {
  test::TempDir dir;
  test::write_file(dir / "s.json", R"({"format": "vernier-scenario", "version": 1, "name": "s", "title": "t",
    "model": "m.onnx", "data": {"seed": 3, "load_inputs": ["real.npz"]},
    "engine": {"precisions": ["fp16"], "builder_seed": 18446744073709551615, "inject_fault": ["layer=a,kind=zero"]},
    "check": {"command": ["sh", "-c", "exit 1"], "fail_regex": ["x"], "fail_code": [1]},
    "expect": {"outcome": "localized", "path": ["sanitize", "minimal"], "culprit": "layer 'a'"}})");
  Result<Scenario> s = load_scenario(dir / "s.json");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->model, dir / "m.onnx");
  EXPECT_EQ(s->seed, 3u);
  EXPECT_EQ(s->load_inputs, std::vector<std::filesystem::path>{dir / "real.npz"});
  EXPECT_EQ(s->builder_seed, 18446744073709551615ull);
  EXPECT_EQ(s->inject_fault, std::vector<std::string>{"layer=a,kind=zero"});
  ASSERT_TRUE(s->check.has_value());
  EXPECT_EQ(s->check->command.size(), 3u);
  EXPECT_EQ(s->check->fail_codes, std::vector<int>{1});
  EXPECT_EQ(s->expect.culprit, "layer 'a'");
}

TEST(ScenarioFile, MalformedFilesAreRefusedNamingTheKey) {
  test::TempDir dir;
  const std::string head = R"({"format": "vernier-scenario", "version": 1, "name": "s", "title": "t", "model": "m.onnx", )";
  const std::string expect = R"("expect": {"outcome": "no_bug", "path": ["sanitize"]}})";
  auto refused = [&](const std::string& text, const std::string& message) {
    test::write_file(dir / "bad.json", text);
    Result<Scenario> s = load_scenario(dir / "bad.json");
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_THAT(s.status().message(), HasSubstr(message)) << text;
    EXPECT_THAT(s.status().message(), HasSubstr("bad.json"));
  };
  refused(head + R"("engine": {"fp16": true}, )" + expect, "'engine.fp16': unknown key");
  refused(head + R"("engine": {"precisions": ["fp8"]}, )" + expect, "'fp8' is not fp16");
  refused(head + R"("data": {"seed": -1}, )" + expect, "'data.seed': expected an integer");
  refused(head + R"("triage": {"builds": 1}, )" + expect, "'triage.builds'");
  refused(head + R"("check": {"command": []}, )" + expect, "'check.command'");
  refused(head + R"("compare": {"atol": "1e-3"}, )" + expect, "'compare.atol': expected a list");
  refused(head + R"("data": {}})", "'expect': missing");
  refused(R"({"format": "vernier-flowchart", "version": 1})", "not a Vernier scenario");
  refused("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", "deep");
  refused(std::string(kMaxScenarioBytes + 1, ' '), "too large");
  EXPECT_THAT(load_scenario(dir / "none.json").status().message(), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace vn::flow
