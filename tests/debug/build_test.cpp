// SPDX-License-Identifier: Apache-2.0
#include "core/debug/build.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/data/synthetic.h"
#include "core/engine/tactic_replay.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn::debug {
namespace {

const std::string kDemo = vn::test::demo_model();

TEST(DebugBuild, AFaultOnATiedTacticMakesSomeSeedsBadAndOthersGood) {
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  ASSERT_TRUE(feeds.ok());
  Result<std::vector<TensorMap>> ref = reference_outputs(*model, *feeds, 1);
  ASSERT_TRUE(ref.ok());
  test::TempDir dir;
  EngineCheckSetup setup;
  setup.model = &*model;
  setup.feeds = &*feeds;
  setup.ref_outputs = &*ref;
  setup.iter_artifact = dir / "it.plan";
  setup.save_tactics = dir / "replay.json";

  engine::BuildOptions build;
  build.timing_margin = 1000;  // every candidate ties: the seed alone picks
  build.timing_runs = 1;
  Result<engine::FaultSpec> fault = engine::parse_fault("tactic=gemm__split_k4,kind=scale,factor=3");
  ASSERT_TRUE(fault.ok());
  build.faults.push_back(*fault);

  std::set<Verdict> seen;
  for (uint64_t seed = 1; seed <= 12 && seen.size() < 2; ++seed) {
    build.builder_seed = seed;
    Result<EngineCheck> c = check_engine_build(setup, build);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    ASSERT_TRUE(c->plan);
    const engine::PlanLayer* fc = c->plan->find_layer("fc");
    ASSERT_NE(fc, nullptr);
    const bool faulty = fc->tactic == engine::TacticId::kGemmSplitK;
    EXPECT_EQ(c->result.verdict, faulty ? Verdict::kBad : Verdict::kGood)
        << "seed " << seed << ": " << c->result.reason;
    seen.insert(c->result.verdict);
    // The replay and plan of this very build are on disk for the check and the artifact sorter.
    Result<engine::TacticReplay> replay = engine::load_tactic_replay(setup.save_tactics);
    ASSERT_TRUE(replay.ok());
    EXPECT_EQ(replay->find("fc")->tactic, fc->tactic);
    EXPECT_TRUE(engine::load_plan(setup.iter_artifact).ok());
  }
  EXPECT_EQ(seen.size(), 2u) << "twelve seeds should pick both tied Gemm tactics";
}

TEST(DebugBuild, ABuildThatFailsIsABadIteration) {
  Result<Model> model = load_model(kDemo);
  ASSERT_TRUE(model.ok());
  std::vector<TensorMap> feeds, ref;
  EngineCheckSetup setup;
  setup.model = &*model;
  setup.feeds = &feeds;
  setup.ref_outputs = &ref;
  engine::BuildOptions build;
  build.deterministic = true;
  build.constraints = engine::PrecisionConstraints::kObey;
  build.layer_precisions.emplace_back("no_such_layer", engine::PrecisionId::kFp16);
  Result<EngineCheck> c = check_engine_build(setup, build);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->result.verdict, Verdict::kBad);
  EXPECT_NE(c->result.reason.find("no_such_layer"), std::string::npos) << c->result.reason;
}

}  // namespace
}  // namespace vn::debug
