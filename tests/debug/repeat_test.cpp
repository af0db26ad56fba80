// SPDX-License-Identifier: Apache-2.0
#include "core/debug/repeat.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/util/process.h"

namespace vn::debug {
namespace {

CheckResult verdict(Verdict v) {
  CheckResult r;
  r.verdict = v;
  return r;
}

TEST(DebugLoop, StopsByTheRuleAndCountsVerdicts) {
  std::vector<int64_t> started;
  LoopOptions options;
  options.done = [](int64_t index, Verdict v) { return v == Verdict::kBad || index >= 9; };
  options.on_start = [&](int64_t i) { started.push_back(i); };
  // Good, unresolved, good, bad: stops at the first bad.
  const std::vector<Verdict> script = {Verdict::kGood, Verdict::kUnresolved, Verdict::kGood, Verdict::kBad,
                                       Verdict::kGood};
  Result<LoopSummary> summary =
      run_iterations(options, [&](int64_t i) -> Result<CheckResult> { return verdict(script.at(i)); });
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(started, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(summary->iterations, 4);
  EXPECT_EQ(summary->passed, 2);
  EXPECT_EQ(summary->failed, 1);
  EXPECT_EQ(summary->unresolved, 1);
  EXPECT_DOUBLE_EQ(summary->pass_rate(), 50.0);
}

TEST(DebugLoop, WritesTheIterationFileForEachCheckAndSortsArtifacts) {
  test::TempDir dir;
  const std::filesystem::path info = dir / "iter.json";
  const std::filesystem::path artifact = dir / "out.txt";
  const ArtifactSorter sorter(dir / "art", {artifact});
  LoopOptions options;
  options.done = [](int64_t index, Verdict) { return index >= 2; };
  options.iteration_file = info;
  options.sorter = &sorter;
  std::vector<IterationOutcome> outcomes;
  options.on_finish = [&](const IterationOutcome& o) { outcomes.push_back(o); };
  Result<LoopSummary> summary = run_iterations(options, [&](int64_t i) -> Result<CheckResult> {
    const std::string seen = test::read_file(info);
    test::write_file(artifact, seen);
    return verdict(i == 1 ? Verdict::kBad : Verdict::kGood);
  });
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(summary->iterations, 3);
  EXPECT_FALSE(std::filesystem::exists(info)) << "the iteration file is removed after each check";
  ASSERT_EQ(outcomes.size(), 3u);
  for (const IterationOutcome& o : outcomes) {
    ASSERT_EQ(o.sorted.size(), 1u);
    EXPECT_EQ(o.sorted[0].to.parent_path().filename(), o.index == 1 ? "bad" : "good");
    EXPECT_EQ(test::read_file(o.sorted[0].to), "{\"iteration\":" + std::to_string(o.index) + "}\n");
  }
}

TEST(DebugLoop, ACheckErrorEndsTheLoop) {
  LoopOptions options;
  options.done = [](int64_t, Verdict) { return false; };
  Result<LoopSummary> summary = run_iterations(options, [](int64_t i) -> Result<CheckResult> {
    if (i == 2) return make_error(StatusCode::kExternalFailure, "cannot start 'nope'");
    return verdict(Verdict::kGood);
  });
  EXPECT_EQ(summary.status().code(), StatusCode::kExternalFailure);
}

}  // namespace
}  // namespace vn::debug
