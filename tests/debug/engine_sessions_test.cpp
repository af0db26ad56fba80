// SPDX-License-Identifier: Apache-2.0
// The `debug build`, `debug precision` and `debug repeat` sessions called directly (no process),
// on real models: a fault on one of two tied Gemm tactics that only some builder seeds pick, the
// fp16 overflow fixture, and scripted verdicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/data/synthetic.h"
#include "core/debug/build_session.h"
#include "core/debug/precision_session.h"
#include "core/debug/repeat_session.h"
#include "core/engine/fault.h"
#include "core/engine/tactic_replay.h"
#include "core/ir/onnx_import.h"
#include "tests/debug/fixtures.h"
#include "tests/util/process.h"

namespace vn::debug {
namespace {

const std::string kDemo = vn::test::demo_model();

// An engine session over `model` with the built-in check, writing into `dir`.
EngineSessionConfig engine_session(Model model, const test::TempDir& dir) {
  EngineSessionConfig config;
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model.graph, {});
  EXPECT_TRUE(feeds.ok()) << feeds.status().to_string();
  config.feeds = std::move(*feeds);
  config.model = std::move(model);
  config.model_name = "model.onnx";
  config.setup.iter_artifact = dir / "it.plan";
  config.setup.save_tactics = dir / "replay.json";
  config.artifacts_dir = dir / "sorted";
  return config;
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path());
  return out;
}

TEST(BuildSession, UntilBadStopsAtTheFirstBuildThatPicksTheFaultyTactic) {
  test::TempDir dir;
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  BuildSessionConfig config;
  config.engine = engine_session(std::move(*model), dir);
  config.engine.build.timing_margin = 1000;  // every candidate ties: the seed alone picks
  config.engine.build.timing_runs = 1;
  Result<engine::FaultSpec> fault = engine::parse_fault("tactic=gemm__split_k4,kind=scale,factor=3");
  ASSERT_TRUE(fault.ok());
  config.engine.build.faults.push_back(*fault);
  Result<Until> until = Until::parse("bad");
  ASSERT_TRUE(until.ok());
  config.until = *until;
  config.first_builder_seed = 1;

  size_t reference_feeds = 0;
  std::vector<uint64_t> seeds;
  std::vector<bool> split_k;  // per build: fc chose the faulty tactic
  std::vector<Verdict> verdicts;
  BuildHooks hooks;
  hooks.on_reference = [&](size_t feeds) { reference_feeds = feeds; };
  hooks.on_built = [&](int64_t index, uint64_t seed, const engine::Plan* plan) {
    EXPECT_EQ(index, static_cast<int64_t>(seeds.size()));
    seeds.push_back(seed);
    ASSERT_NE(plan, nullptr);
    split_k.push_back(plan->find_layer("fc")->tactic == engine::TacticId::kGemmSplitK);
  };
  hooks.on_finish = [&](const IterationOutcome& o) {
    verdicts.push_back(o.result.verdict);
    // The tactic replay of this build was sorted by its verdict.
    ASSERT_EQ(o.sorted.size(), 1u);
    EXPECT_EQ(o.sorted[0].from, config.engine.setup.save_tactics);
    EXPECT_NE(o.sorted[0].to.string().find(o.result.verdict == Verdict::kBad ? "/bad/" : "/good/"), std::string::npos);
  };
  Result<BuildSessionResult> result = run_build_session(config, hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(reference_feeds, 1u);
  ASSERT_FALSE(seeds.empty());
  // Seeds count up from the first; only the last build picked the faulty tactic, and it failed.
  for (size_t i = 0; i < seeds.size(); ++i) EXPECT_EQ(seeds[i], 1 + i);
  EXPECT_EQ(std::count(split_k.begin(), split_k.end(), true), 1);
  EXPECT_TRUE(split_k.back());
  EXPECT_EQ(verdicts.back(), Verdict::kBad);
  EXPECT_EQ(result->summary.failed, 1);
  EXPECT_EQ(result->summary.passed, result->summary.iterations - 1);
  EXPECT_EQ(result->bad_seeds, std::vector<uint64_t>{seeds.back()});
  EXPECT_EQ(result->good_seeds.size(), seeds.size() - 1);
  EXPECT_EQ(files_in(dir / "sorted/bad").size(), 1u);
  EXPECT_EQ(files_in(dir / "sorted/good").size(), seeds.size() - 1);
  EXPECT_FALSE(std::filesystem::exists(config.engine.setup.iter_artifact)) << "removed after every build";
}

TEST(BuildSession, AFixedSeedIsUsedForEveryBuildAndTheArtifactCanBeKept) {
  test::TempDir dir;
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok());
  BuildSessionConfig config;
  config.engine = engine_session(std::move(*model), dir);
  config.engine.setup.save_tactics.clear();
  config.engine.build.builder_seed = 9;
  config.engine.keep_iter_artifact = true;
  config.until = *Until::parse("2");
  config.first_builder_seed = 1;  // a fixed seed wins
  Result<BuildSessionResult> result = run_build_session(config, {});
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->summary.iterations, 2);
  EXPECT_EQ(result->good_seeds, (std::vector<uint64_t>{9, 9}));
  EXPECT_TRUE(engine::load_plan(config.engine.setup.iter_artifact).ok());
}

TEST(PrecisionSession, NamesTheLayerThatMustRunInFp32) {
  test::TempDir dir;
  PrecisionSessionConfig config;
  config.engine = engine_session(test::fp16_overflow_model(), dir);
  config.engine.build.allowed |= engine::kFp16 | engine::kFp16Strict;
  config.engine.build.deterministic = true;
  config.engine.build.constraints = engine::PrecisionConstraints::kObey;
  config.engine.setup.builtin.compare.atol[""] = 1e-2;  // the fp16 tolerance preset
  config.engine.setup.builtin.compare.rtol[""] = 1e-2;
  config.higher = engine::PrecisionId::kFp32;

  std::vector<std::string> candidates;
  bool seeded = false;
  std::vector<std::vector<std::string>> marked;
  std::vector<int64_t> steps;
  PrecisionHooks hooks;
  hooks.on_seed = [&](uint64_t) { seeded = true; };
  hooks.on_candidates = [&](const std::vector<PrecisionCandidate>& c, const std::vector<ExcludedLayer>& excluded) {
    for (const PrecisionCandidate& p : c) candidates.push_back(p.name);
    EXPECT_TRUE(excluded.empty());
  };
  hooks.on_start = [&](int64_t step, const std::vector<std::string>& layers) {
    EXPECT_EQ(step, static_cast<int64_t>(marked.size()) + 1);
    marked.push_back(layers);
  };
  hooks.on_step = [&](int64_t step, const PrecisionStep& st, const std::vector<SortedArtifact>& sorted) {
    steps.push_back(step);
    EXPECT_EQ(st.marked, marked.back());
    ASSERT_EQ(sorted.size(), 1u);  // the tactic replay
  };
  Result<PrecisionSessionResult> result = run_precision_session(config, hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_FALSE(seeded) << "deterministic builds need no seed";
  EXPECT_EQ(result->seed, 0u);
  EXPECT_EQ(candidates, (std::vector<std::string>{"mm_a", "mm_big", "mm_c"}));
  ASSERT_FALSE(marked.empty());
  EXPECT_TRUE(marked.front().empty()) << "K = 0 is tested first";
  EXPECT_EQ(steps.size(), result->search.steps.size());
  ASSERT_TRUE(result->search.k.has_value());
  EXPECT_EQ(*result->search.k, 2);
  EXPECT_EQ(result->search.layers, std::vector<std::string>{"mm_big"});
  // The replay of the last build (mm_big alone in fp32, passing) is among the good ones.
  bool found = false;
  for (const auto& f : files_in(dir / "sorted/good")) {
    Result<engine::TacticReplay> replay = engine::load_tactic_replay(f);
    ASSERT_TRUE(replay.ok());
    const auto* big = replay->find("mm_big");
    const auto* first = replay->find("mm_a + relu_a");
    ASSERT_TRUE(big && first);
    found = found || (big->precision == engine::PrecisionId::kFp32 && first->precision == engine::PrecisionId::kFp16);
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(std::filesystem::exists(config.engine.setup.iter_artifact));
}

TEST(RepeatSession, ScriptedVerdictsUntilGood) {
  test::TempDir dir;
  RepeatSessionConfig config;
  config.until = *Until::parse("good");
  config.iteration_file = dir / "info.json";
  config.artifacts = {dir / "art.txt"};
  config.artifacts_dir = dir / "sorted";
  RepeatHooks hooks;
  std::vector<int64_t> started;
  hooks.on_start = [&](int64_t index) { started.push_back(index); };
  hooks.ask = [&](int64_t index) -> Result<CheckResult> {
    EXPECT_EQ(test::read_file(config.iteration_file), "{\"iteration\":" + std::to_string(index) + "}\n");
    test::write_file(dir / "art.txt", std::to_string(index));
    CheckResult r;
    r.verdict = index < 2 ? Verdict::kBad : Verdict::kGood;
    return r;
  };
  Result<LoopSummary> summary = run_repeat_session(config, hooks);
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(started, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(summary->failed, 2);
  EXPECT_EQ(summary->passed, 1);
  EXPECT_EQ(files_in(dir / "sorted/bad").size(), 2u);
  EXPECT_EQ(files_in(dir / "sorted/good").size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(config.iteration_file));
}

TEST(RepeatSession, AnExternalCheckDecidesWithoutAsking) {
  RepeatSessionConfig config;
  config.until = *Until::parse("3");
  ExternalCheck check;
  check.argv = {"false"};
  config.check = *ExternalChecker::create(check);
  Result<LoopSummary> summary = run_repeat_session(config, {});
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(summary->iterations, 3);
  EXPECT_EQ(summary->failed, 3);
}

TEST(Until, ParsesCountsGoodAndBad) {
  EXPECT_TRUE(Until::parse("3")->done(2, Verdict::kBad));
  EXPECT_FALSE(Until::parse("3")->done(1, Verdict::kBad));
  EXPECT_TRUE(Until::parse("good")->done(0, Verdict::kGood));
  EXPECT_FALSE(Until::parse("good")->done(5, Verdict::kUnresolved));
  EXPECT_TRUE(Until::parse("bad")->done(0, Verdict::kBad));
  for (const char* bad : {"0", "-1", "sometimes", "3x", "99999999999999999999"}) {
    Result<Until> u = Until::parse(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_NE(u.status().message().find(std::string("'") + bad + "'"), std::string::npos);
  }
}

}  // namespace
}  // namespace vn::debug
