// SPDX-License-Identifier: Apache-2.0
// Fault injection: spec parsing with clear errors, and every kind changing the named layer's
// output as specified, under its condition, deterministically, recorded in the plan.
#include "core/engine/fault.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/engine/engine_backend.h"
#include "tests/engine/engine_test_util.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

void expect_parse_error(const std::string& spec, const std::string& mention) {
  Result<FaultSpec> f = parse_fault(spec);
  ASSERT_FALSE(f.ok()) << spec;
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(f.status().message().find(mention), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find("--inject-fault '" + spec + "'"), std::string::npos);
}

TEST(FaultSpec, ParsesEveryKeyWithDefaults) {
  Result<FaultSpec> f = parse_fault("layer=conv1, kind=scale, factor=3.5, when=ALWAYS");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->layer, "conv1");
  EXPECT_EQ(f->kind, FaultKind::kScale);
  EXPECT_EQ(f->factor, 3.5);
  EXPECT_EQ(f->magnitude, 1.0);
  EXPECT_EQ(f->fraction, 1.0);
  EXPECT_EQ(f->when, FaultCondition::kAlways);

  f = parse_fault(
      "tactic=conv__winograd_f2x2_3x3,kind=noise,magnitude=0.5,fraction=0.25,"
      "when=channels-not-multiple-of-8,seed=7");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->tactic, "conv__winograd_f2x2_3x3");
  EXPECT_EQ(f->kind, FaultKind::kNoise);
  EXPECT_EQ(f->fraction, 0.25);
  EXPECT_EQ(f->when, FaultCondition::kChannelsNotMultipleOf8);
  EXPECT_EQ(f->seed, 7u);
  EXPECT_TRUE(parse_fault("layer=a,kind=bias-drop").ok());
}

TEST(FaultSpec, ErrorsNameTheProblem) {
  expect_parse_error("kind=scale", "exactly one target");
  expect_parse_error("layer=a,tactic=reference,kind=zero", "exactly one target");
  expect_parse_error("layer=a", "kind= is required");
  expect_parse_error("layer=a,kind=melt", "unknown kind 'melt'");
  expect_parse_error("layer=a,kind=scale,factor=big", "factor=big is not a finite number");
  expect_parse_error("layer=a,kind=scale,fraction=2", "fraction=2 is not in (0, 1]");
  expect_parse_error("layer=a,kind=scale,when=tuesdays", "unknown condition 'tuesdays'");
  expect_parse_error("tactic=conv__fastest,kind=zero", "unknown tactic 'conv__fastest'");
  expect_parse_error("layer=a,kind=zero,colour=red", "unknown key 'colour'");
  expect_parse_error("layer=a,kind", "'kind' is not key=value");
}

/// Gemm with bias (fc) then Relu: a layer "fc + relu" with a bias, 7 output channels.
Model fc_model(int64_t channels = 7) {
  const std::string text = fmt::format(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3,16] X, float[16,{0}] W, float[{0}] B) => (float[3,{0}] Y) {{ m = MatMul(X, W)  a = Add(m, B)  "
      "Y = Sigmoid(a) }}",
      channels);
  return make_model(text, {{"W", random_tensor({16, channels}, 1)}, {"B", random_tensor({channels}, 2, 1.0f, 2.0f)}});
}

const TensorMap& fc_feeds() {
  static const TensorMap feeds{{"X", random_tensor({3, 16}, 3)}};
  return feeds;
}

struct Outcome {
  Status status;
  Tensor y;
  std::shared_ptr<const Plan> plan;
};

Outcome run_with_faults(const Model& model, const std::vector<std::string>& specs, PrecisionMask allowed = kFp32) {
  EngineOptions o;
  o.build.deterministic = true;
  o.build.allowed = allowed;
  for (const std::string& s : specs) {
    Result<FaultSpec> f = parse_fault(s);
    EXPECT_TRUE(f.ok()) << f.status().to_string();
    if (f.ok()) o.build.faults.push_back(*f);
  }
  EngineBackend engine(o);
  Outcome out;
  out.status = engine.prepare(model, {});
  if (!out.status.ok()) return out;
  out.plan = std::make_shared<const Plan>(*engine.plan());
  Result<TensorMap> r = engine.run(fc_feeds());
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (r.ok()) out.y = *r->find("Y");
  return out;
}

TEST(FaultInjection, EachKindChangesTheNamedLayerAsSpecified) {
  const Model model = fc_model();
  const Tensor clean = run_with_faults(model, {}).y;
  const std::string layer = "layer=MatMul_0,";  // any node fused into the layer names it
  auto values = [](const Tensor& t) { return std::vector<float>(t.values<float>().begin(), t.values<float>().end()); };
  const std::vector<float> c = values(clean);

  const std::vector<float> scaled = values(run_with_faults(model, {layer + "kind=scale,factor=3"}).y);
  const std::vector<float> offset = values(run_with_faults(model, {layer + "kind=offset,magnitude=0.25"}).y);
  const std::vector<float> zero = values(run_with_faults(model, {layer + "kind=zero"}).y);
  const std::vector<float> nan = values(run_with_faults(model, {layer + "kind=nan"}).y);
  const std::vector<float> inf = values(run_with_faults(model, {layer + "kind=inf"}).y);
  const Outcome noisy = run_with_faults(model, {layer + "kind=noise,magnitude=0.1"});
  const std::vector<float> noise = values(noisy.y);
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(scaled[i], c[i] * 3.0f);
    EXPECT_EQ(offset[i], c[i] + 0.25f);
    EXPECT_EQ(zero[i], 0.0f);
    EXPECT_TRUE(std::isnan(nan[i]));
    EXPECT_TRUE(std::isinf(inf[i]));
    EXPECT_NE(noise[i], c[i]);
  }
  EXPECT_TRUE(noisy.y.same_as(run_with_faults(model, {layer + "kind=noise,magnitude=0.1"}).y))
      << "a given spec corrupts the same way every time";
  EXPECT_FALSE(noisy.y.same_as(run_with_faults(model, {layer + "kind=noise,magnitude=0.1,seed=2"}).y));

  // Half the elements, chosen by the spec's seed.
  const std::vector<float> half = values(run_with_faults(model, {layer + "kind=zero,fraction=0.5"}).y);
  size_t zeros = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (half[i] == 0.0f) ++zeros;
    EXPECT_TRUE(half[i] == 0.0f || half[i] == c[i]);
  }
  EXPECT_GT(zeros, c.size() / 4);
  EXPECT_LT(zeros, 3 * c.size() / 4);
}

TEST(FaultInjection, BiasDropLeavesTheBiasOut) {
  const Model model = fc_model();
  const Outcome dropped = run_with_faults(model, {"layer=Add_1,kind=bias-drop"});
  ASSERT_TRUE(dropped.status.ok()) << dropped.status.to_string();
  // Without the bias the layer computes Sigmoid(X W): compare with a model that has none.
  const Model no_bias = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3,16] X, float[16,7] W) => (float[3,7] Y) { m = MatMul(X, W)  Y = Sigmoid(m) }",
      {{"W", random_tensor({16, 7}, 1)}});
  EXPECT_TRUE(dropped.y.same_as(run_with_faults(no_bias, {}).y));

  const Outcome refused = run_with_faults(no_bias, {"layer=MatMul_0,kind=bias-drop"});
  EXPECT_EQ(refused.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status.message().find("adds no bias"), std::string::npos);
}

TEST(FaultInjection, ConditionsAreDecidedPerLayer) {
  const Tensor clean7 = run_with_faults(fc_model(7), {}).y;
  const Tensor clean8 = run_with_faults(fc_model(8), {}).y;
  const std::string spec = "layer=MatMul_0,kind=zero,when=channels-not-multiple-of-8";
  EXPECT_FALSE(run_with_faults(fc_model(7), {spec}).y.same_as(clean7)) << "7 channels: the fault applies";
  EXPECT_TRUE(run_with_faults(fc_model(8), {spec}).y.same_as(clean8)) << "8 channels: it does not";

  const std::string reduced = "layer=MatMul_0,kind=zero,when=reduced-precision";
  EXPECT_TRUE(run_with_faults(fc_model(7), {reduced}).y.same_as(clean7));
  const Outcome fp16 = run_with_faults(fc_model(7), {reduced}, kFp16);
  for (float v : fp16.y.values<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(FaultInjection, FusedFaultsVanishWhenMarkingPreventsTheFusion) {
  const Model model = fc_model();
  const Tensor clean = run_with_faults(model, {}).y;
  const std::string spec = "layer=MatMul_0,kind=scale,factor=3,when=fused";
  // MatMul + bias + Sigmoid fuse into one layer: the fault applies.
  const Outcome fused = run_with_faults(model, {spec});
  ASSERT_TRUE(fused.status.ok()) << fused.status.to_string();
  EXPECT_GT(fused.plan->layers[0].nodes.size(), 1u);
  EXPECT_FALSE(fused.y.same_as(clean));
  // Every tensor marked: the MatMul runs alone and the fault does not fire.
  EngineOptions o;
  o.build.deterministic = true;
  o.build.faults.push_back(*parse_fault(spec));
  EngineBackend engine(o);
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(engine.prepare(model, prep).ok());
  for (const PlanLayer& layer : engine.plan()->layers) EXPECT_TRUE(layer.faults.empty()) << layer.name;
  Result<TensorMap> out = engine.run(fc_feeds());
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->find("Y")->same_as(clean));
}

TEST(FaultInjection, TacticFaultsApplyOnlyToBuildsThatPickTheTactic) {
  const Model model = fc_model();
  const Tensor clean = run_with_faults(model, {}).y;
  // A deterministic fp32 build runs the product with gemm__blocked_f32acc, never split-K.
  const Outcome unpicked = run_with_faults(model, {"tactic=gemm__split_k4,kind=zero"});
  EXPECT_TRUE(unpicked.y.same_as(clean));
  EXPECT_TRUE(unpicked.plan->layers[0].faults.empty());
  const Outcome picked = run_with_faults(model, {"tactic=gemm__blocked_f32acc,kind=zero"});
  EXPECT_FALSE(picked.y.same_as(clean));
  EXPECT_EQ(picked.plan->layers[0].faults, (std::vector<size_t>{0}));
}

TEST(FaultInjection, FaultsAreRecordedInThePlanAndReplayedFromIt) {
  const Model model = fc_model();
  const Outcome built = run_with_faults(model, {"layer=MatMul_0,kind=scale,factor=2"});
  ASSERT_EQ(built.plan->faults.size(), 1u);
  EXPECT_EQ(built.plan->faults[0].text, "layer=MatMul_0,kind=scale,factor=2");
  Result<Plan> parsed = plan_from_json(plan_to_json(*built.plan));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EngineOptions load;
  load.plan = std::make_shared<const Plan>(std::move(*parsed));
  EngineBackend engine(load);
  ASSERT_TRUE(engine.prepare(model, {}).ok());
  EXPECT_TRUE(engine.run(fc_feeds())->find("Y")->same_as(built.y));
}

TEST(FaultInjection, AFaultOnAnUnknownLayerFailsTheBuild) {
  const Outcome o = run_with_faults(fc_model(), {"layer=nope,kind=zero"});
  EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(o.status.message().find("no layer or node is named 'nope'"), std::string::npos);
}

}  // namespace
}  // namespace vn::engine
