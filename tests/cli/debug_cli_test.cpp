// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of `debug build`, `inspect diff-tactics`, `debug precision` and `debug repeat`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/engine/plan.h"
#include "core/engine/tactic_replay.h"
#include "core/ir/onnx_export.h"
#include "tests/debug/fixtures.h"
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

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CliDebugBuild, SortsReplaysAndDiffTacticsNamesTheFaultyTactic) {
  TempDir dir;
  // Every tactic ties within a margin of 1000x, so each build's seed picks fc's Gemm tactic; the
  // fault corrupts builds that pick split-K.
  auto r = run_vernier({"debug", "build", kDemo, "--until", "10", "--first-builder-seed", "1", "--timing-margin",
                        "1000", "--inject-fault", "tactic=gemm__split_k4,kind=scale,factor=3", "--save-tactics",
                        "replay.json", "--artifacts", "replay.json"},
                       dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("RUNNING | Iteration 1 | Approximately 9 iteration(s) remaining"));
  EXPECT_THAT(r.out, HasSubstr("Builder seed 1:"));
  EXPECT_THAT(r.out, HasSubstr("Builder seed 10:"));
  const auto good = files_in(dir / "vernier_artifacts/good");
  const auto bad = files_in(dir / "vernier_artifacts/bad");
  EXPECT_EQ(good.size() + bad.size(), 10u);
  ASSERT_FALSE(good.empty()) << r.out;
  ASSERT_FALSE(bad.empty()) << r.out;
  EXPECT_THAT(r.out, HasSubstr(fmt::format("Finished 10 iteration(s) | Passed: {}/10", good.size())));
  EXPECT_FALSE(std::filesystem::exists(dir / "vernier_debug.plan")) << "the iteration plan is removed";
  for (const auto& f : bad) EXPECT_THAT(test::read_file(f), HasSubstr("\"gemm__split_k4\""));
  for (const auto& f : good) EXPECT_THAT(test::read_file(f), Not(HasSubstr("\"gemm__split_k4\"")));

  auto d = run_vernier({"inspect", "diff-tactics", "--dir", (dir / "vernier_artifacts").string()});
  ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_THAT(d.out, HasSubstr(fmt::format("Loaded {} good tactic replay(s)", good.size())));
  EXPECT_THAT(d.out, HasSubstr(fmt::format("Loaded {} bad tactic replay(s)", bad.size())));
  // fc's first suspect is the faulty tactic, with a perfect score.
  const size_t fc = d.out.find("[I] Layer: fc\n");
  ASSERT_NE(fc, std::string::npos) << d.out;
  EXPECT_THAT(d.out.substr(fc),
              StartsWith(fmt::format("[I] Layer: fc\n        1. gemm__split_k4 (fp32) | score 1.00 | in "
                                     "{}/{} bad, 0/{} good",
                                     bad.size(), bad.size(), good.size())));
  EXPECT_THAT(d.out, HasSubstr("Most suspicious: layer fc with gemm__split_k4 (fp32) (score 1.00)"));
}

TEST(CliDebugBuild, UntilGoodAndUntilBadStopAtTheFirstSuchBuild) {
  TempDir dir;
  const std::vector<std::string> common = {"debug",
                                           "build",
                                           kDemo,
                                           "--first-builder-seed",
                                           "1",
                                           "--timing-margin",
                                           "1000",
                                           "--inject-fault",
                                           "tactic=gemm__split_k4,kind=scale,factor=3"};
  for (const char* until : {"good", "bad"}) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--until", until});
    auto r = run_vernier(args, dir.path());
    ASSERT_NE(r.exit_code, 2) << r.out << r.err;
    const std::string last = std::string(until) == "good" ? "PASSED" : "FAILED";
    const size_t finish = r.out.find("Finished ");
    ASSERT_NE(finish, std::string::npos) << r.out;
    // The last iteration has the verdict asked for, and every earlier one the other.
    const size_t last_verdict = r.out.rfind(" | Iteration ", finish);
    ASSERT_NE(last_verdict, std::string::npos);
    EXPECT_EQ(r.out.substr(r.out.rfind("[I] ", last_verdict) + 4, 6), last) << r.out;
    EXPECT_EQ(r.out.find(std::string("[I] ") + last + " | Iteration"),
              r.out.rfind(std::string("[I] ") + last + " | Iteration"))
        << r.out;
  }
}

TEST(CliDebugBuild, ExternalCheckReadsTheIterationPlan) {
  TempDir dir;
  // The check runs the plan each build wrote against the reference: exit 1 for a faulty build.
  auto r = run_vernier({"debug",
                        "build",
                        kDemo,
                        "--until",
                        "4",
                        "--first-builder-seed",
                        "1",
                        "--timing-margin",
                        "1000",
                        "--inject-fault",
                        "tactic=gemm__split_k4,kind=scale,factor=3",
                        "--artifacts",
                        "it.plan",
                        "--iter-artifact",
                        "it.plan",
                        "--check",
                        test::vernier_binary(),
                        "run",
                        kDemo,
                        "--ref",
                        "--engine",
                        "--load-engine",
                        "it.plan"},
                       dir.path());
  ASSERT_NE(r.exit_code, 2) << r.out << r.err;
  const auto good = files_in(dir / "vernier_artifacts/good");
  const auto bad = files_in(dir / "vernier_artifacts/bad");
  EXPECT_EQ(good.size() + bad.size(), 4u) << r.out;
  // The sorted plans are the builds the check judged: bad ones run the faulty tactic.
  for (const auto& [files, faulty] : {std::pair{bad, true}, std::pair{good, false}}) {
    for (const auto& f : files) {
      Result<engine::Plan> plan = engine::load_plan(f);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      EXPECT_EQ(plan->find_layer("fc")->tactic == engine::TacticId::kGemmSplitK, faulty) << f;
    }
  }
  EXPECT_THAT(r.out, HasSubstr("Finished 4 iteration(s)"));
}

TEST(CliDebugBuild, BadUsageIsOneLine) {
  TempDir dir;
  expect_bad_input(run_vernier({"debug", "build", kDemo, "--until", "sometimes"}, dir.path()), "--until 'sometimes'");
  expect_bad_input(run_vernier({"debug", "build", kDemo, "--until", "0"}, dir.path()), "--until '0'");
  expect_bad_input(run_vernier({"debug", "build", kDemo}, dir.path()), "--until");
  expect_bad_input(run_vernier({"debug", "build", kDemo, "--until", "1", "--save-engine", "e.plan"}, dir.path()),
                   "--save-engine");
  expect_bad_input(run_vernier({"debug", "build", kDemo, "--until", "1", "--local-errors"}, dir.path()),
                   "--local-errors");
  test::write_file(dir / "vernier_debug.plan", "{}");
  expect_bad_input(run_vernier({"debug", "build", kDemo, "--until", "1"}, dir.path()), "already exists");
  expect_bad_input(run_vernier({"inspect", "diff-tactics", "--dir", (dir / "nothing").string()}), "nothing");
}

// Writes the fp16 overflow fixture into `dir` and returns its path.
std::string overflow_model(const TempDir& dir) {
  const std::filesystem::path path = dir / "overflow.onnx";
  Status st = save_model(test::fp16_overflow_model(), path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path.string();
}

// The command line printed after "Apply and verify with:", split at spaces (the test paths
// need no quoting).
std::vector<std::string> printed_command(const std::string& out) {
  const size_t at = out.find("Apply and verify with:\n");
  if (at == std::string::npos) return {};
  const size_t start = out.find_first_not_of(' ', at + 23);
  std::istringstream line(out.substr(start, out.find('\n', start) - start));
  std::vector<std::string> words;
  for (std::string w; line >> w;) words.push_back(w);
  return words;
}

TEST(CliDebugPrecision, NamesTheOverflowingLayerAndPrintsACommandThatPasses) {
  TempDir dir;
  const std::string model = overflow_model(dir);
  for (const char* direction : {"forward", "reverse"}) {
    auto r =
        run_vernier({"debug", "precision", model, "--fp16", "--deterministic", "--direction", direction}, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("3 layer(s) can be marked fp32"));
    EXPECT_THAT(r.out, HasSubstr("RUNNING | Iteration 1 | 0 layer(s) in fp32: (none)"));
    EXPECT_THAT(r.out, HasSubstr("FAILED | Iteration 1"));
    EXPECT_THAT(r.out, HasSubstr("these 1 layer(s) must run in fp32 (removing any other still passes): mm_big\n"));
    const std::vector<std::string> command = printed_command(r.out);
    ASSERT_GE(command.size(), 3u) << r.out;
    EXPECT_EQ(command[0], "vernier");
    EXPECT_THAT(r.out, HasSubstr("--layer-precisions mm_big:fp32 --precision-constraints obey"));
    auto verify = run_vernier(std::vector<std::string>(command.begin() + 1, command.end()), dir.path());
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }
  // Without the marking the same build fails: the command's --layer-precisions is what fixes it.
  auto plain = run_vernier({"run", model, "--ref", "--engine", "--fp16", "--deterministic"}, dir.path());
  EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;
}

TEST(CliDebugPrecision, LinearModeAndBadUsage) {
  TempDir dir;
  const std::string model = overflow_model(dir);
  auto r = run_vernier({"debug", "precision", model, "--fp16", "--deterministic", "--mode", "linear", "--no-minimize",
                        "--save-tactics", "replay.json"},
                       dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Finished 3 iteration(s) | Passed: 1/3"));
  // Each iteration's tactic replay is sorted by its verdict: K = 0 and 1 fail, K = 2 passes.
  const auto bad = files_in(dir / "vernier_artifacts/bad");
  const auto good = files_in(dir / "vernier_artifacts/good");
  ASSERT_EQ(bad.size(), 2u) << r.out;
  ASSERT_EQ(good.size(), 1u) << r.out;
  EXPECT_THAT(good[0].filename().string(), HasSubstr("_N2.json"));
  Result<engine::TacticReplay> replay = engine::load_tactic_replay(good[0]);
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_EQ(replay->find("mm_big")->precision, engine::PrecisionId::kFp32);
  EXPECT_EQ(replay->find("mm_c + tanh_c")->precision, engine::PrecisionId::kFp16);
  EXPECT_THAT(r.out, HasSubstr("first 2 layer(s) in fp32: mm_a, mm_big"));
  EXPECT_THAT(r.out, HasSubstr("--layer-precisions mm_a:fp32 mm_big:fp32"));

  expect_bad_input(run_vernier({"debug", "precision", model}, dir.path()), "--fp16, --bf16 or --tf32");
  expect_bad_input(run_vernier({"debug", "precision", model, "--fp16", "-p", "fp8"}, dir.path()), "fp8");
  expect_bad_input(run_vernier({"debug", "precision", model, "--fp16", "--precision-constraints", "none"}, dir.path()),
                   "--precision-constraints none");
  expect_bad_input(run_vernier({"debug", "precision", model, "--fp16", "--mode", "ddmin"}, dir.path()), "--mode");
}

// A POSIX shell check: reads the iteration from the --iter-info file, writes it to art.txt, and
// passes on even iterations (or, with FIRST_FAILS=n, fails the first n).
std::vector<std::string> shell_check(const std::string& rule) {
  return {"/bin/sh", "-c", "i=$(tr -dc 0-9 < info.json); echo $i > art.txt; " + rule};
}

TEST(CliDebugRepeat, SortsArtifactsByTheCheckOfEachIteration) {
  TempDir dir;
  std::vector<std::string> args = {"debug",     "repeat",      "--until", "4",      "--iter-info",
                                   "info.json", "--artifacts", "art.txt", "--check"};
  for (const std::string& a : shell_check("[ $((i % 2)) -eq 0 ]")) args.push_back(a);
  auto r = run_vernier(args, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Finished 4 iteration(s) | Passed: 2/4 | Pass Rate: 50%"));
  const auto good = files_in(dir / "vernier_artifacts/good");
  const auto bad = files_in(dir / "vernier_artifacts/bad");
  ASSERT_EQ(good.size(), 2u);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_THAT(good[0].filename().string(), HasSubstr("_N0.txt"));
  EXPECT_EQ(test::read_file(good[0]), "0\n");
  EXPECT_EQ(test::read_file(good[1]), "2\n");
  EXPECT_EQ(test::read_file(bad[0]), "1\n");
  EXPECT_EQ(test::read_file(bad[1]), "3\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "info.json"));
}

TEST(CliDebugRepeat, UntilGoodAndBad) {
  TempDir dir;
  auto run = [&](const char* until, const std::string& rule) {
    std::vector<std::string> args = {"debug", "repeat", "--until", until, "--iter-info", "info.json", "--check"};
    for (const std::string& a : shell_check(rule)) args.push_back(a);
    return run_vernier(args, dir.path());
  };
  // Fails iterations 0 and 1, passes from 2 on: --until good stops after 3.
  auto good = run("good", "[ $i -ge 2 ]");
  EXPECT_EQ(good.exit_code, 1);
  EXPECT_THAT(good.out, HasSubstr("Finished 3 iteration(s) | Passed: 1/3"));
  // Passes 0 to 4: --until bad stops at iteration 5 (index 5).
  auto bad = run("bad", "[ $i -lt 5 ]");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.out, HasSubstr("Finished 6 iteration(s) | Passed: 5/6"));
  auto all = run("3", "true");
  EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_THAT(all.out, HasSubstr("Finished 3 iteration(s) | Passed: 3/3 | Pass Rate: 100%"));
}

TEST(CliDebugRepeat, AsksWithoutACheck) {
  TempDir dir;
  // "x" and an empty line are not answers; "Fail" and "PASS" are (first letter, any case).
  auto r = test::run_process({"/bin/sh", "-c",
                              "printf 'x\\n\\nFail\\nPASS\\n' | '" + test::vernier_binary() +
                                  "' debug repeat --until 2 --artifacts art.txt --iter-info info.json"},
                             dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Starting interactive debugging session"));
  EXPECT_THAT(r.out, HasSubstr(">>> Did 'this iteration' [p]ass or [f]ail? "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '>') / 3, 4) << "one question, two re-asks, one question";
  EXPECT_THAT(r.out, HasSubstr("FAILED | Iteration 1"));
  EXPECT_THAT(r.out, HasSubstr("PASSED | Iteration 2"));
  EXPECT_THAT(r.out, HasSubstr("Finished 2 iteration(s) | Passed: 1/2"));
}

TEST(CliDebugRepeat, BadUsageIsOneLine) {
  TempDir dir;
  // Without --check it asks on stdin; a closed stdin is an error, not a hang.
  expect_bad_input(run_vernier({"debug", "repeat", "--until", "3"}, dir.path()), "no answer on stdin");
  expect_bad_input(run_vernier({"debug", "repeat", "--until", "never", "--check", "true"}, dir.path()),
                   "--until 'never'");
  expect_bad_input(run_vernier({"debug", "repeat", "--until", "1", "--check", "/no/such/program"}, dir.path()),
                   "/no/such/program");
}

}  // namespace
}  // namespace vn
