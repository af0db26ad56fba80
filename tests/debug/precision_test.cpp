// SPDX-License-Identifier: Apache-2.0
#include "core/debug/precision.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/data/synthetic.h"
#include "core/debug/build.h"
#include "core/engine/engine_backend.h"
#include "tests/debug/fixtures.h"

namespace vn::debug {
namespace {

using ::testing::ElementsAre;

const std::vector<std::string> kLayers = {"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7"};

// A check that passes when every layer of `needed` is marked; records what it was asked.
struct FakeCheck {
  std::vector<std::string> needed;
  std::vector<std::vector<std::string>> calls;

  Result<CheckResult> operator()(const std::vector<std::string>& marked) {
    calls.push_back(marked);
    CheckResult r;
    const bool all = std::all_of(needed.begin(), needed.end(), [&](const std::string& n) {
      return std::find(marked.begin(), marked.end(), n) != marked.end();
    });
    r.verdict = all ? Verdict::kGood : Verdict::kBad;
    return r;
  }
};

Result<PrecisionResult> search(FakeCheck& fake, PrecisionMode mode, PrecisionDirection dir, bool minimize = true) {
  PrecisionSearchOptions o;
  o.mode = mode;
  o.direction = dir;
  o.minimize = minimize;
  return search_precision(kLayers, o, [&](const std::vector<std::string>& m) { return fake(m); });
}

TEST(PrecisionSearch, BisectFindsTheSmallestPrefixThenTheLayerThatMatters) {
  FakeCheck fake{{"l5"}, {}};
  Result<PrecisionResult> r = search(fake, PrecisionMode::kBisect, PrecisionDirection::kForward);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->k.has_value());
  EXPECT_EQ(*r->k, 6);
  EXPECT_THAT(r->prefix, ElementsAre("l0", "l1", "l2", "l3", "l4", "l5"));
  EXPECT_THAT(r->layers, ElementsAre("l5"));
  // K = 0 and K = L come first, as Polygraphy never tests K = 0.
  EXPECT_TRUE(fake.calls.at(0).empty());
  EXPECT_EQ(fake.calls.at(1).size(), kLayers.size());
  // Bisect over 8 layers: 0, 8, then 3 halvings; minimizing tries the 5 non-boundary layers.
  EXPECT_EQ(fake.calls.size(), 2u + 3u + 5u);
}

TEST(PrecisionSearch, ReverseCountsFromTheOutputs) {
  FakeCheck fake{{"l2", "l6"}, {}};
  Result<PrecisionResult> r = search(fake, PrecisionMode::kBisect, PrecisionDirection::kReverse);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->k.has_value());
  EXPECT_EQ(*r->k, 6);
  EXPECT_THAT(r->prefix, ElementsAre("l2", "l3", "l4", "l5", "l6", "l7"));
  EXPECT_THAT(r->layers, ElementsAre("l2", "l6"));
}

TEST(PrecisionSearch, LinearAddsOneLayerAtATime) {
  FakeCheck fake{{"l2"}, {}};
  Result<PrecisionResult> r = search(fake, PrecisionMode::kLinear, PrecisionDirection::kForward, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->k, 3);
  EXPECT_EQ(fake.calls.size(), 4u);  // K = 0, 1, 2, 3
  EXPECT_EQ(r->layers, r->prefix);
}

TEST(PrecisionSearch, ZeroLayersWhenTheEngineAlreadyPasses) {
  FakeCheck fake{{}, {}};
  Result<PrecisionResult> r = search(fake, PrecisionMode::kBisect, PrecisionDirection::kForward);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->k, 0);
  EXPECT_TRUE(r->layers.empty());
  EXPECT_EQ(fake.calls.size(), 1u);
}

TEST(PrecisionSearch, NoConfigurationWhenEvenAllLayersFail) {
  FakeCheck fake{{"elsewhere"}, {}};
  Result<PrecisionResult> r = search(fake, PrecisionMode::kBisect, PrecisionDirection::kForward);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->k.has_value());
  EXPECT_EQ(fake.calls.size(), 2u);
}

TEST(PrecisionSearch, NamesTheLayerThatOverflowsFp16) {
  const Model model = test::fp16_overflow_model();
  data::SyntheticOptions synth;
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model.graph, synth);
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  Result<std::vector<TensorMap>> ref = reference_outputs(model, *feeds, 1);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  for (float v : ref->at(0).find("Y1")->values<float>()) ASSERT_GT(v, 65504.0f) << "the fixture must overflow fp16";

  engine::BuildOptions base;
  base.allowed = engine::kFp16 | engine::kFp16Strict;
  base.deterministic = true;
  base.constraints = engine::PrecisionConstraints::kObey;
  EngineCheckSetup setup;
  setup.model = &model;
  setup.feeds = &*feeds;
  setup.ref_outputs = &*ref;
  setup.builtin.compare.atol[""] = 1e-2;
  setup.builtin.compare.rtol[""] = 1e-2;

  engine::EngineOptions probe_options;
  probe_options.build = base;
  engine::EngineBackend probe(probe_options);
  ASSERT_TRUE(probe.prepare(model, {}).ok());
  std::vector<std::string> candidates, layers;
  for (const PrecisionCandidate& c : precision_candidates(*probe.plan(), nullptr)) {
    candidates.push_back(c.name);
    layers.push_back(c.layer);
  }
  ASSERT_THAT(candidates, ElementsAre("mm_a", "mm_big", "mm_c"));
  EXPECT_THAT(layers, ElementsAre("mm_a + relu_a", "mm_big", "mm_c + tanh_c"));

  for (PrecisionDirection dir : {PrecisionDirection::kForward, PrecisionDirection::kReverse}) {
    PrecisionSearchOptions o;
    o.direction = dir;
    Result<PrecisionResult> r =
        search_precision(candidates, o, [&](const std::vector<std::string>& marked) -> Result<CheckResult> {
          engine::BuildOptions build = base;
          for (const std::string& l : marked) build.layer_precisions.emplace_back(l, engine::PrecisionId::kFp32);
          VN_ASSIGN_OR_RETURN(EngineCheck c, check_engine_build(setup, build));
          return c.result;
        });
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_TRUE(r->k.has_value());
    EXPECT_EQ(*r->k, 2);
    EXPECT_THAT(r->layers, ElementsAre("mm_big"));
    EXPECT_EQ(r->steps.front().result.verdict, Verdict::kBad) << "all-fp16 overflows";
  }
}

TEST(PrecisionCandidates, LeavesOutLayersWithIntegerOutputs) {
  engine::Plan plan;
  engine::PlanLayer f;
  f.name = "conv + relu";
  f.nodes = {"conv", "relu"};
  f.outputs = {"y"};
  f.output_desc = {{DType::kFloat32, {1, 4}}};
  engine::PlanLayer i;
  i.name = "argmax";
  i.outputs = {"idx"};
  i.output_desc = {{DType::kInt64, {1}}};
  plan.layers = {f, i};
  std::vector<ExcludedLayer> excluded;
  const std::vector<PrecisionCandidate> c = precision_candidates(plan, &excluded);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].name, "conv");
  EXPECT_EQ(c[0].layer, "conv + relu");
  ASSERT_EQ(excluded.size(), 1u);
  EXPECT_EQ(excluded[0].layer, "argmax");
  EXPECT_NE(excluded[0].reason.find("int64"), std::string::npos);
}

}  // namespace
}  // namespace vn::debug
