// SPDX-License-Identifier: Apache-2.0
// What a check's tolerance can tell, on real tensors and real checks: an atol above every
// reference value passes an engine that outputs zeros, a tolerance below fp16's rounding fails an
// engine that only rounds, and the built-in check says the numbers, where its tolerance came
// from and what it cannot tell, for passing checks as for failing ones.
#include "core/debug/tolerance_reach.h"

#include <gtest/gtest.h>

#include "core/data/synthetic.h"
#include "core/debug/builtin_check.h"
#include "core/engine/fault.h"
#include "tests/debug/fixtures.h"

namespace vn::debug {
namespace {

using Source = ToleranceOrigin::Source;

// Y = X W with W's entries in [lo, hi): outputs of about 8 * hi for X in [0, 1).
Model matmul_model(float lo, float hi) {
  Model m = engine::test::make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "mm (float[4,8] X, float[8,16] W) => (float[4,16] Y) { Y = MatMul(X, W) }",
      {{"W", engine::test::random_tensor({8, 16}, 5, lo, hi)}});
  m.graph.nodes[0].name = "mm";
  return m;
}

std::vector<TensorMap> feeds_of(const Model& model) {
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model.graph, {});
  EXPECT_TRUE(feeds.ok()) << feeds.status().to_string();
  return feeds.ok() ? std::move(*feeds) : std::vector<TensorMap>{};
}

BuiltinCheck check_at(double atol, double rtol, ToleranceOrigin origin) {
  BuiltinCheck check;
  check.engine.build.deterministic = true;
  check.compare.atol[""] = atol;
  check.compare.rtol[""] = rtol;
  check.origin = origin;
  return check;
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(ToleranceReach, AnAtolAboveEveryReferenceValuePassesAnEngineThatOutputsZeros) {
  // Outputs near 1e-8 (random weights of 1e-9), an engine whose only layer outputs zeros.
  const Model model = matmul_model(-1e-9f, 1e-9f);
  const std::vector<TensorMap> feeds = feeds_of(model);
  BuiltinCheck check = check_at(1e-2, 1e-2, {Source::kFlag, Source::kFlag});
  Result<engine::FaultSpec> zero = engine::parse_fault("layer=mm,kind=zero");
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  check.engine.build.faults.push_back(*zero);
  Result<BuiltinCheckDetail> d = run_builtin_check(model, feeds, check);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->result.verdict, Verdict::kGood);
  ASSERT_EQ(d->outputs.size(), 1u);
  const OutputNumbers& y = d->outputs[0];
  EXPECT_TRUE(y.passed);
  EXPECT_EQ(y.cosine, 0);  // nothing in common with the reference, yet it passes
  EXPECT_GT(y.reach.ref_max_abs, 0);
  EXPECT_LT(y.reach.ref_max_abs, 1e-7);
  EXPECT_TRUE(y.reach.cannot_fail);
  EXPECT_FALSE(y.reach.rounding_fails);
  EXPECT_EQ(y.tolerance_from, "--atol/--rtol");
  // The reason has the numbers of the passing output and says the tolerance cannot tell.
  EXPECT_TRUE(has(d->result.reason, "1 output comparison(s) within tolerance; the closest to failing, 'Y': "))
      << d->result.reason;
  EXPECT_TRUE(has(d->result.reason, "cosine 0 (atol 0.01, rtol 0.01: --atol/--rtol)")) << d->result.reason;
  EXPECT_TRUE(has(d->result.reason, "atol 0.01 is not below the largest magnitude of the reference of 'Y'"))
      << d->result.reason;
  EXPECT_TRUE(has(d->result.reason, "cannot tell a wrong output of that size from the right one")) << d->result.reason;

  // Polygraphy's default 1e-5 is above them too.
  Result<BuiltinCheckDetail> by_default = run_builtin_check(model, feeds, check_at(1e-5, 1e-5, {}));
  ASSERT_TRUE(by_default.ok());
  EXPECT_TRUE(by_default->outputs[0].reach.cannot_fail);
  EXPECT_EQ(by_default->outputs[0].tolerance_from, "Polygraphy's default");
}

TEST(ToleranceReach, AToleranceBelowFp16RoundingFailsAnEngineThatOnlyRounds) {
  // Outputs up to about 8, an fp16 engine without any fault: only rounding.
  const Model model = matmul_model(-1.0f, 1.0f);
  const std::vector<TensorMap> feeds = feeds_of(model);
  BuiltinCheck strict = check_at(1e-5, 1e-5, {Source::kFlag, Source::kFlag});
  strict.engine.build.allowed = engine::kFp32 | engine::kFp16 | engine::kFp16Strict;
  Result<BuiltinCheckDetail> d = run_builtin_check(model, feeds, strict);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->result.verdict, Verdict::kBad);
  const OutputNumbers& y = d->outputs[0];
  EXPECT_FALSE(y.passed);
  EXPECT_GT(y.cosine, 0.9999);  // the same values, rounded
  EXPECT_TRUE(y.reach.rounding_fails);
  EXPECT_EQ(y.reach.precision, engine::PrecisionId::kFp16);
  EXPECT_TRUE(has(d->result.reason, "1 of 1 output comparison(s) fail; 'Y': max abs error ")) << d->result.reason;
  EXPECT_TRUE(has(d->result.reason, "rounding alone can fail this tolerance: fp16's epsilon is 0.000977"))
      << d->result.reason;

  // At the fp16 preset the same engine passes, with its numbers and nothing to add.
  BuiltinCheck preset = check_at(1e-2, 1e-2, {Source::kPreset, Source::kPreset, engine::PrecisionId::kFp16});
  preset.engine.build.allowed = strict.engine.build.allowed;
  Result<BuiltinCheckDetail> p = run_builtin_check(model, feeds, preset);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->result.verdict, Verdict::kGood);
  EXPECT_TRUE(p->outputs[0].reach.note.empty()) << p->outputs[0].reach.note;
  EXPECT_GT(p->outputs[0].max_abs_error, 0);
  EXPECT_LT(p->outputs[0].used, 1);
  EXPECT_TRUE(has(p->result.reason, "(atol 0.01, rtol 0.01: the fp16 preset)")) << p->result.reason;
}

TEST(ToleranceReach, RoundingBoundsFollowEachPrecision) {
  // A reference up to 2.54 and its fp16 rounding, compared directly.
  Tensor ref = engine::test::random_tensor({256}, 9, -2.54f, 2.54f);
  ref.mutable_values<float>()[0] = 2.54f;
  Tensor rounded = ref.clone();
  for (float& v : rounded.mutable_values<float>()) v = engine::round_to_half(v);
  const TensorComparison c = compare_tensors("t", rounded, ref, Tolerance{}, false);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(tolerance_reach(c, ref, engine::PrecisionId::kFp16).rounding_fails);
  EXPECT_TRUE(tolerance_reach(c, ref, engine::PrecisionId::kBf16).rounding_fails);
  // fp32's rounding (6e-8 of a value) is below Polygraphy's 1e-5: nothing to say.
  EXPECT_TRUE(tolerance_reach(c, ref, engine::PrecisionId::kFp32).note.empty());
  // int8: a step of 2.54 / 127 = 0.02 moves values by up to 0.01, above atol 1e-3 but not 0.1.
  Tolerance tight{1e-3, 1e-3};
  EXPECT_TRUE(tolerance_reach(compare_tensors("t", rounded, ref, tight, false), ref, engine::PrecisionId::kInt8)
                  .rounding_fails);
  Tolerance preset{0.1, 0.1};
  EXPECT_FALSE(tolerance_reach(compare_tensors("t", rounded, ref, preset, false), ref, engine::PrecisionId::kInt8)
                   .rounding_fails);
  // The magnitude from which rounding can fail: atol over half the epsilon.
  EXPECT_DOUBLE_EQ(rounding_fails_above(Tolerance{1e-5, 1e-5}, engine::PrecisionId::kFp16), 1e-5 / 0x1p-11);
  EXPECT_EQ(rounding_fails_above(Tolerance{1e-5, 1e-2}, engine::PrecisionId::kFp16), INFINITY);
  EXPECT_TRUE(has(rounding_note(Tolerance{1e-5, 1e-5}, engine::PrecisionId::kFp16),
                  "rtol 1e-05 is below fp16's rounding (epsilon 0.000977"));
  EXPECT_EQ(rounding_note(Tolerance{}, engine::PrecisionId::kFp32), "");
  // A comparison that could not compare has nothing to say.
  const TensorComparison shapes = compare_tensors("t", Tensor(DType::kFloat32, {2}), ref, Tolerance{}, false);
  EXPECT_TRUE(tolerance_reach(shapes, ref, engine::PrecisionId::kFp16).note.empty());
}

TEST(ToleranceReach, OriginNamesEachSourceAndPerTensorFlags) {
  EXPECT_EQ(origin_text({}), "Polygraphy's default");
  EXPECT_EQ(origin_text({Source::kFlag, Source::kFlag}), "--atol/--rtol");
  EXPECT_EQ(origin_text({Source::kPreset, Source::kPreset, engine::PrecisionId::kBf16}), "the bf16 preset");
  EXPECT_EQ(origin_text({Source::kFlag, Source::kPreset, engine::PrecisionId::kFp16}),
            "atol: --atol; rtol: the fp16 preset");
  CompareConfig config;
  config.atol[""] = 1e-2;
  config.atol["logits"] = 1e-1;
  const ToleranceOrigin preset{Source::kPreset, Source::kPreset, engine::PrecisionId::kFp16};
  EXPECT_EQ(origin_text(origin_for(preset, config, "logits")), "atol: --atol; rtol: the fp16 preset");
  EXPECT_EQ(origin_text(origin_for(preset, config, "probs")), "the fp16 preset");
}

TEST(ToleranceReach, TheWorstOutputIsTheFirstFailingElseTheClosestToFailing) {
  std::vector<OutputNumbers> outputs(3);
  outputs[0].name = "a", outputs[0].passed = true, outputs[0].used = 0.2;
  outputs[1].name = "b", outputs[1].passed = true, outputs[1].used = 0.7;
  outputs[2].name = "c", outputs[2].passed = true, outputs[2].used = 0.1;
  EXPECT_EQ(worst_output(outputs)->name, "b");
  outputs[2].passed = false;
  EXPECT_EQ(worst_output(outputs)->name, "c");
  EXPECT_EQ(worst_output({}), nullptr);
  OutputNumbers close;
  close.cosine = 1 - 4.2e-7;
  EXPECT_TRUE(has(numbers_text(close), "cosine 1 - 4.2e-07 (atol 0, rtol 0)")) << numbers_text(close);
  close.cosine = 1;
  EXPECT_TRUE(has(numbers_text(close), "cosine 1 (")) << numbers_text(close);
}

}  // namespace
}  // namespace vn::debug
