// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <fstream>

#include "core/debug/artifacts.h"
#include "core/debug/replay.h"
#include "tests/util/process.h"

namespace vn::debug {
namespace {

TEST(Replay, RoundTripsEveryVerdict) {
  test::TempDir dir;
  DebugReplay replay;
  replay.record(DebugReplay::key(0, "outputs"), {{{"num_nodes", 5}}, 0, Verdict::kGood, "exit code 0"});
  replay.record(DebugReplay::key(1, "outputs"), {{{"num_nodes", 7}}, 1, Verdict::kBad, "exit code 1"});
  replay.record(DebugReplay::key(0, "inputs"), {{{"num_nodes", 3}}, 0, Verdict::kUnresolved, "signal"});
  ASSERT_TRUE(replay.save(dir.path() / "r.json").ok());
  auto loaded = DebugReplay::load(dir.path() / "r.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->size(), 3u);
  EXPECT_EQ(loaded->find("_N1_outputs")->verdict, Verdict::kBad);
  EXPECT_EQ(loaded->find("_N1_outputs")->state["num_nodes"], 7);
  EXPECT_EQ(loaded->find("_N0_inputs")->verdict, Verdict::kUnresolved);
  EXPECT_EQ(loaded->find("_N0_outputs")->reason, "exit code 0");
  EXPECT_EQ(loaded->find("_N5"), nullptr);
}

TEST(Replay, ReadsPolygraphysFormat) {
  test::TempDir dir;
  std::ofstream(dir.path() / "p.json") << R"({
    "_N0_outputs": {"state": {"num_nodes": 5}, "iteration_info": {"iteration": 0},
                    "success": true, "polygraphy_class": "IterationContext"},
    "_N1_outputs": {"state": {"num_nodes": 7}, "iteration_info": {"iteration": 1},
                    "success": false, "polygraphy_class": "IterationContext"}})";
  auto loaded = DebugReplay::load(dir.path() / "p.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->find("_N0_outputs")->verdict, Verdict::kGood);
  EXPECT_EQ(loaded->find("_N1_outputs")->verdict, Verdict::kBad);
  EXPECT_EQ(loaded->find("_N1_outputs")->iteration, 1);
}

TEST(Replay, MalformedFilesAreIoErrorsNamingTheEntry) {
  test::TempDir dir;
  std::ofstream(dir.path() / "a.json") << "[1, 2]";
  std::ofstream(dir.path() / "b.json") << R"({"_N0": {"success": "yes"}})";
  std::ofstream(dir.path() / "c.json") << "{";
  EXPECT_EQ(DebugReplay::load(dir.path() / "a.json").status().code(), StatusCode::kIoError);
  auto b = DebugReplay::load(dir.path() / "b.json");
  EXPECT_NE(b.status().message().find("'_N0'"), std::string::npos);
  EXPECT_FALSE(DebugReplay::load(dir.path() / "c.json").ok());
  EXPECT_FALSE(DebugReplay::load(dir.path() / "missing.json").ok());
}

TEST(Replay, SkipCurrentSitsBesideTheReplay) {
  EXPECT_EQ(skip_current_path("out/replay.json"), std::filesystem::path("out/replay_skip_current.json"));
}

TEST(Artifacts, SortsIntoVerdictFoldersWithoutOverwriting) {
  test::TempDir dir;
  const auto artifact = dir.path() / "vernier_debug.onnx";
  const auto start = std::chrono::system_clock::now();
  ArtifactSorter sorter(dir.path() / "art", {artifact, dir.path() / "absent.json"}, start);
  std::ofstream(artifact) << "model 1";
  auto first = sorter.sort(2, Verdict::kBad, "outputs");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_EQ(first->size(), 2u);
  const auto name = sorter.destination_name(artifact, 2, "outputs");
  EXPECT_EQ((*first)[0].to, dir.path() / "art" / "bad" / name);
  EXPECT_TRUE(name.starts_with("vernier_debug_"));
  EXPECT_TRUE(name.ends_with("_N2_outputs.onnx"));
  EXPECT_FALSE(std::filesystem::exists(artifact));
  EXPECT_EQ((*first)[1].problem, "missing");
  // The same iteration again: the destination exists, so the new file stays where it is.
  std::ofstream(artifact) << "model 2";
  auto second = sorter.sort(2, Verdict::kBad, "outputs");
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE((*second)[0].to.empty());
  EXPECT_NE((*second)[0].problem.find("not overwritten"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(artifact));
  auto good = sorter.sort(3, Verdict::kGood);
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "art" / "good" / sorter.destination_name(artifact, 3, "")));
}

}  // namespace
}  // namespace vn::debug
