// SPDX-License-Identifier: Apache-2.0
// The builder: precision choice from flags and constraints, tactic choice by timing with ties
// broken by the builder seed, deterministic builds, plans saved and loaded (and refused for
// another model), tactic replays.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/engine/engine_backend.h"
#include "core/engine/fault.h"
#include "core/engine/tactic_replay.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn::engine {
namespace {

using test::make_model;
using test::random_tensor;

/// Conv 3x3 + Relu, GlobalAveragePool, Flatten, MatMul, Softmax: five layers, three of which
/// have several tactics.
Model small_cnn(uint32_t weight_seed = 1) {
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,8,10,10] X, float[8,8,3,3] W, float[8,10] W2) => (float[1,10] Y) {\n"
      "  c = Conv<pads=[1,1,1,1]>(X, W)\n  r = Relu(c)\n  p = GlobalAveragePool(r)\n  f = Flatten(p)\n"
      "  m = MatMul(f, W2)\n  Y = Softmax(m)\n}";
  return make_model(text,
                    {{"W", random_tensor({8, 8, 3, 3}, weight_seed)}, {"W2", random_tensor({8, 10}, weight_seed + 1)}});
}

const TensorMap& small_cnn_feeds() {
  static const TensorMap feeds{{"X", random_tensor({1, 8, 10, 10}, 42)}};
  return feeds;
}

/// A prepared engine, or a failed prepare's status.
struct Prepared {
  std::unique_ptr<EngineBackend> engine;
  Status status;
};

Prepared prepare(const Model& model, EngineOptions options, PrepareOptions prep = {}) {
  Prepared p{std::make_unique<EngineBackend>(std::move(options)), Status::OK()};
  p.status = p.engine->prepare(model, prep);
  return p;
}

TensorMap run(EngineBackend& engine, const TensorMap& feeds = small_cnn_feeds()) {
  Result<TensorMap> out = engine.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::move(out).value() : TensorMap();
}

std::vector<std::string> choices(const Plan& plan) {
  std::vector<std::string> out;
  for (const PlanLayer& l : plan.layers) {
    out.push_back(fmt::format("{}:{}", tactic_info(l.tactic).name, precision_name(l.precision)));
  }
  return out;
}

EngineOptions deterministic(PrecisionMask allowed = kFp32) {
  EngineOptions o;
  o.build.deterministic = true;
  o.build.allowed = allowed;
  return o;
}

TEST(Builder, DeterministicBuildsTakeTheFirstCandidateInCatalogueOrder) {
  const Model model = small_cnn();
  Prepared a = prepare(model, deterministic());
  ASSERT_TRUE(a.status.ok()) << a.status.to_string();
  EXPECT_EQ(choices(*a.engine->plan()),
            (std::vector<std::string>{"conv__im2col_gemm:fp32", "pool__f32acc:fp32", "reference:fp32",
                                      "gemm__blocked_f32acc:fp32", "softmax__max_shifted:fp32"}));
  EXPECT_EQ(a.engine->plan()->layers[0].choice, "deterministic");
  EXPECT_EQ(a.engine->plan()->layers[2].choice, "only candidate");
  Prepared b = prepare(model, deterministic());
  EXPECT_TRUE(run(*a.engine).find("Y")->same_as(*run(*b.engine).find("Y")));
}

TEST(Builder, TimedBuildsRecordEveryCandidate) {
  EngineOptions o;
  o.build.builder_seed = 1;
  Prepared p = prepare(small_cnn(), o);
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  const PlanLayer& conv = p.engine->plan()->layers[0];
  ASSERT_EQ(conv.timings.size(), 3u);
  for (const TacticTiming& t : conv.timings) EXPECT_GT(t.median_ms, 0.0);
  EXPECT_FALSE(conv.choice.empty());
  EXPECT_EQ(p.engine->plan()->settings.builder_seed, 1u);
}

TEST(Builder, TiedTimingsAreBrokenByTheBuilderSeed) {
  const Model model = small_cnn();
  std::set<std::vector<std::string>> distinct;
  std::vector<std::string> first;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    EngineOptions o;
    o.build.builder_seed = seed;
    o.build.timing_margin = 1e9;  // every candidate ties: the seed alone decides
    o.build.timing_runs = 1;
    Prepared p = prepare(model, o);
    ASSERT_TRUE(p.status.ok()) << p.status.to_string();
    distinct.insert(choices(*p.engine->plan()));
    if (seed == 1) first = choices(*p.engine->plan());
    EXPECT_NE(p.engine->plan()->layers[0].choice.find("broken by the builder seed"), std::string::npos);
  }
  EXPECT_GT(distinct.size(), 1u) << "different seeds must be able to pick different tactics";
  EngineOptions again;
  again.build.builder_seed = 1;
  again.build.timing_margin = 1e9;
  again.build.timing_runs = 1;
  Prepared p = prepare(model, again);
  EXPECT_EQ(choices(*p.engine->plan()), first) << "the same seed must make the same choices";
}

TEST(Builder, TimingCacheSkipsTimingTheSecondTime) {
  auto cache = std::make_shared<TimingCache>();
  EngineOptions o;
  o.build.builder_seed = 5;
  o.build.timing_cache = cache;
  Prepared first = prepare(small_cnn(), o);
  ASSERT_TRUE(first.status.ok()) << first.status.to_string();
  size_t timed = 0;
  for (const PlanLayer& l : first.engine->plan()->layers) timed += l.timings.size();
  ASSERT_GT(timed, 0u);
  EXPECT_EQ(cache->misses(), timed);
  EXPECT_EQ(cache->hits(), 0u);
  EXPECT_EQ(cache->size(), timed);

  // The same layers again: every candidate's time comes from the cache, so the plan records the
  // same timings and, with the same seed, makes the same choices.
  vn::test::TempDir dir;
  ASSERT_TRUE(cache->save(dir / "cache.json").ok());
  auto loaded = TimingCache::load(dir / "cache.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  o.build.timing_cache = std::make_shared<TimingCache>(std::move(*loaded));
  Prepared second = prepare(small_cnn(), o);
  ASSERT_TRUE(second.status.ok());
  EXPECT_EQ(o.build.timing_cache->hits(), timed);
  EXPECT_EQ(o.build.timing_cache->misses(), 0u);
  EXPECT_EQ(choices(*second.engine->plan()), choices(*first.engine->plan()));
  for (size_t i = 0; i < first.engine->plan()->layers.size(); ++i) {
    const auto& a = first.engine->plan()->layers[i].timings;
    const auto& b = second.engine->plan()->layers[i].timings;
    ASSERT_EQ(a.size(), b.size());
    for (size_t t = 0; t < a.size(); ++t) EXPECT_DOUBLE_EQ(a[t].median_ms, b[t].median_ms);
  }

  // Other weights of another shape are another layer: a 16-channel conv misses the 8-channel
  // entries.
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,8,10,10] X, float[16,8,3,3] W) => (float[1,16,10,10] Y) {\n"
      "  Y = Conv<pads=[1,1,1,1]>(X, W)\n}";
  auto other_cache = std::make_shared<TimingCache>(*o.build.timing_cache);
  EngineOptions other;
  other.build.builder_seed = 5;
  other.build.timing_cache = other_cache;
  const size_t hits_before = other_cache->hits();
  Prepared third = prepare(test::make_model(text, {{"W", random_tensor({16, 8, 3, 3}, 3)}}), other);
  ASSERT_TRUE(third.status.ok()) << third.status.to_string();
  EXPECT_EQ(other_cache->hits(), hits_before);
  EXPECT_GT(other_cache->misses(), 0u);
}

TEST(Builder, MalformedTimingCachesAreIoErrors) {
  vn::test::TempDir dir;
  vn::test::write_file(dir / "a.json", "{\"format\": 1}");
  vn::test::write_file(dir / "b.json",
                   "{\"format\": \"vernier-timing-cache\", \"version\": 1, \"entries\": {\"k\": \"slow\"}}");
  vn::test::write_file(dir / "c.json", "not json");
  for (const char* name : {"a.json", "b.json", "c.json", "missing.json"}) {
    auto cache = TimingCache::load(dir / name);
    ASSERT_FALSE(cache.ok()) << name;
    EXPECT_EQ(cache.status().code(), StatusCode::kIoError) << name;
  }
}

TEST(Builder, Fp16BuildsStoreEveryActivationInHalf) {
  const Model model = small_cnn();
  Prepared p = prepare(model, deterministic(kFp16 | kFp16Strict));
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  for (const PlanLayer& l : p.engine->plan()->layers) {
    EXPECT_TRUE(l.precision == PrecisionId::kFp16 || l.precision == PrecisionId::kFp16Strict) << l.name;
  }
  const TensorMap out = run(*p.engine);
  for (float v : out.find("Y")->values<float>()) EXPECT_EQ(v, round_to_half(v));
  const TensorMap ref = test::run_reference(model, small_cnn_feeds());
  test::expect_close(*out.find("Y"), *ref.find("Y"), {1e-2, 1e-2}, "fp16 build");
}

TEST(Builder, Fp16LayersRoundTheModelsWeightsAtEveryRunOnEveryThread) {
  // fp16 layers keep no copy of unfolded weights but round the model's at each run, the conv's
  // (737,280 of them: rounded a block of output channels at a time) on two threads: the same
  // outputs, bit for bit, as a model whose weights are already fp16 values (which the layers read
  // as they are).
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,640,12,12] X, float[128,640,3,3] W, float[128,300] W2, int64[3] s) => (float[1,144,300] Y) {\n"
      "  c = Conv<pads=[1,1,1,1]>(X, W)\n  r = Reshape(c, s)\n  t = Transpose<perm=[0,2,1]>(r)\n"
      "  Y = MatMul(t, W2)\n}";
  const Tensor shape = Tensor::from_vector<int64_t>({3}, {1, 128, 144});
  Tensor w = random_tensor({128, 640, 3, 3}, 5), w2 = random_tensor({128, 300}, 6);
  Tensor w_half = w.clone(), w2_half = w2.clone();
  round_in_place(w_half.mutable_values<float>(), DType::kFloat16);
  round_in_place(w2_half.mutable_values<float>(), DType::kFloat16);
  const TensorMap feeds{{"X", random_tensor({1, 640, 12, 12}, 7)}};
  PrepareOptions two;
  two.num_threads = 2;
  const Model model = make_model(text, {{"W", w}, {"W2", w2}, {"s", shape}});
  const Model half_model = make_model(text, {{"W", w_half}, {"W2", w2_half}, {"s", shape}});
  Prepared rounded_at_run = prepare(model, deterministic(kFp16), two);
  Prepared already_half = prepare(half_model, deterministic(kFp16), two);
  ASSERT_TRUE(rounded_at_run.status.ok()) << rounded_at_run.status.to_string();
  ASSERT_TRUE(already_half.status.ok()) << already_half.status.to_string();
  const TensorMap a = run(*rounded_at_run.engine, feeds), b = run(*already_half.engine, feeds);
  ASSERT_NE(a.find("Y"), nullptr);
  ASSERT_NE(b.find("Y"), nullptr);
  const auto ya = a.find("Y")->values<float>(), yb = b.find("Y")->values<float>();
  ASSERT_EQ(ya.size(), yb.size());
  EXPECT_TRUE(std::equal(ya.begin(), ya.end(), yb.begin()));
  EXPECT_NE(std::vector<float>(w.values<float>().begin(), w.values<float>().end()),
            std::vector<float>(w_half.values<float>().begin(), w_half.values<float>().end()))
      << "the random weights must need rounding for the test to mean anything";
}

TEST(Builder, Fp16LayersThatOnlyMoveValuesKeepThemAndRoundAfterAFault) {
  // Relu, MaxPool, Neg, Concat and Transpose give float16 inputs' values back (keeps_values): the
  // engine does not round their outputs again, and they are still the reference's on the rounded
  // input, bit for bit. A fault on such a layer brings in other values: those are rounded.
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3,8,8] X) => (float[2,4,6,4] Y) {\n"
      "  r = Relu(X)\n  p = MaxPool<kernel_shape=[2,2], strides=[2,2]>(r)\n  n = Neg(p)\n"
      "  c = Concat<axis=1>(p, n)\n  Y = Transpose<perm=[0,2,1,3]>(c)\n}";
  const Model model = make_model(text);
  const Tensor x = random_tensor({2, 3, 8, 8}, 21);
  Tensor x_half = x.clone();
  round_in_place(x_half.mutable_values<float>(), DType::kFloat16);
  const TensorMap want = test::run_reference(model, {{"X", x_half}});
  Prepared p = prepare(model, deterministic(kFp16));
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  const TensorMap got = run(*p.engine, {{"X", x}});
  ASSERT_NE(got.find("Y"), nullptr);
  EXPECT_TRUE(got.find("Y")->same_as(*want.find("Y")));
  EXPECT_FALSE(x.same_as(x_half)) << "the input must need rounding for the test to mean anything";

  EngineOptions faulty = deterministic(kFp16);
  Result<FaultSpec> noise = parse_fault("layer=Relu_0,kind=noise,magnitude=0.01");
  ASSERT_TRUE(noise.ok()) << noise.status().to_string();
  faulty.build.faults.push_back(*noise);
  Prepared f = prepare(model, faulty);
  ASSERT_TRUE(f.status.ok()) << f.status.to_string();
  const TensorMap noisy = run(*f.engine, {{"X", x}});
  ASSERT_NE(noisy.find("Y"), nullptr);
  EXPECT_FALSE(noisy.find("Y")->same_as(*want.find("Y")));
  for (float v : noisy.find("Y")->values<float>()) ASSERT_EQ(v, round_to_half(v));
}

TEST(Builder, Fp16LayersWrittenOverTheirDyingInputAreRoundedWithoutTouchingTheFeeds) {
  // BatchNormalization writes over Relu's output, which nothing reads after it, and is rounded
  // there; over the caller's X (BatchNormalization first) it must write a copy. Parameters that
  // are float16 values, so that the reference computes with what the engine reads.
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 15]>\n"
      "g (float[2,3,4,4] X, float[3] s, float[3] b, float[3] m, float[3] v) => (float[2,3,4,4] Y, float[2,3,4,4] Z) "
      "{\n  r = Relu(X)\n  Y = BatchNormalization(r, s, b, m, v)\n  Z = BatchNormalization(X, s, b, m, v)\n}";
  const auto vec = [](std::vector<float> v) { return Tensor::from_vector<float>({3}, std::move(v)); };
  const Model model = make_model(text, {{"s", vec({0.5f, 1.5f, -2.0f})},
                                        {"b", vec({0.25f, -1.0f, 3.0f})},
                                        {"m", vec({0.125f, 0.0f, -0.5f})},
                                        {"v", vec({1.0f, 4.0f, 0.25f})}});
  const Tensor x = random_tensor({2, 3, 4, 4}, 31);
  const Tensor x_before = x.clone();
  Tensor x_half = x.clone();
  round_in_place(x_half.mutable_values<float>(), DType::kFloat16);
  const TensorMap want = test::run_reference(model, {{"X", x_half}});
  Prepared p = prepare(model, deterministic(kFp16));
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  const TensorMap got = run(*p.engine, {{"X", x}});
  for (const char* name : {"Y", "Z"}) {
    ASSERT_NE(got.find(name), nullptr) << name;
    Tensor rounded = want.find(name)->clone();
    round_in_place(rounded.mutable_values<float>(), DType::kFloat16);
    EXPECT_TRUE(got.find(name)->same_as(rounded)) << name;
  }
  EXPECT_TRUE(x.same_as(x_before)) << "the caller's input was written over";
}

TEST(Builder, StreamedRunsReportFoldedOutputsFirstAndOnlyOnce) {
  // Transpose(W) folds into a constant at build time. Streamed, it goes to the observer before any
  // layer runs, with the Transpose node, and is not returned again; unstreamed, it is returned.
  const std::string text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,8] X, float[6,8] W) => (float[2,6] Y) {\n"
      "  wt = Transpose(W)\n  m = MatMul(X, wt)\n  Y = Relu(m)\n}";
  const Model model = make_model(text, {{"W", random_tensor({6, 8}, 3)}});
  PrepareOptions marked;
  marked.mark_all = true;
  Prepared p = prepare(model, deterministic(), marked);
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  const TensorMap feeds{{"X", random_tensor({2, 8}, 4)}};

  std::vector<std::string> seen;
  std::vector<int64_t> nodes;
  RunOptions streamed;
  streamed.stream = true;
  streamed.observer = [&](int64_t node, const Node&, const TensorMap& produced) {
    for (const NamedTensor& t : produced) seen.push_back(t.name), nodes.push_back(node);
    return true;
  };
  Result<TensorMap> out = p.engine->run(feeds, streamed);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(seen, (std::vector<std::string>{"wt", "m", "Y"}));
  EXPECT_EQ(nodes.front(), 0);
  EXPECT_EQ(out->find("wt"), nullptr);

  const TensorMap whole = run(*p.engine, feeds);
  ASSERT_NE(whole.find("wt"), nullptr);
  EXPECT_EQ(whole.find("wt")->shape(), (Shape{8, 6}));
}

TEST(Builder, LayerPrecisionsBindUnderObeyAndPreferOnly) {
  const Model model = small_cnn();
  EngineOptions o = deterministic(kFp16 | kFp16Strict);
  o.build.layer_precisions = {{"Conv_0", PrecisionId::kFp32}};
  Prepared ignored = prepare(model, o);
  ASSERT_TRUE(ignored.status.ok());
  EXPECT_EQ(ignored.engine->plan()->layers[0].precision, PrecisionId::kFp16) << "none: requests are ignored";

  o.build.constraints = PrecisionConstraints::kObey;
  Prepared obeyed = prepare(model, o);
  ASSERT_TRUE(obeyed.status.ok()) << obeyed.status.to_string();
  EXPECT_EQ(obeyed.engine->plan()->layers[0].name, "Conv_0 + Relu_1");
  EXPECT_EQ(obeyed.engine->plan()->layers[0].precision, PrecisionId::kFp32);
  EXPECT_EQ(obeyed.engine->plan()->layers[1].precision, PrecisionId::kFp16);

  // No Softmax tactic computes in tf32: obey fails naming the layer, prefer falls back.
  o.build.layer_precisions = {{"Softmax_5", PrecisionId::kTf32}};
  Prepared impossible = prepare(model, o);
  EXPECT_EQ(impossible.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(impossible.status.message().find("layer 'Softmax_5' must run in tf32"), std::string::npos)
      << impossible.status.to_string();
  o.build.constraints = PrecisionConstraints::kPrefer;
  Prepared preferred = prepare(model, o);
  ASSERT_TRUE(preferred.status.ok()) << preferred.status.to_string();
  EXPECT_EQ(preferred.engine->plan()->layers.back().precision, PrecisionId::kFp16);

  o.build.layer_precisions = {{"no_such_layer", PrecisionId::kFp32}};
  Prepared unknown = prepare(model, o);
  EXPECT_EQ(unknown.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status.message().find("no_such_layer"), std::string::npos);
}

TEST(Builder, PlanSavesLoadsAndRunsTheSameEngine) {
  const Model model = small_cnn();
  EngineOptions o;
  o.build.builder_seed = 3;
  o.build.allowed = kFp16 | kFp16Strict;
  Prepared built = prepare(model, o);
  ASSERT_TRUE(built.status.ok()) << built.status.to_string();
  const Plan& plan = *built.engine->plan();

  Result<Plan> parsed = plan_from_json(nlohmann::ordered_json::parse(plan_to_json(plan).dump()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(plan_to_json(*parsed), plan_to_json(plan));

  EngineOptions load;
  load.plan = std::make_shared<const Plan>(std::move(*parsed));
  Prepared loaded = prepare(model, load);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status.to_string();
  EXPECT_EQ(choices(*loaded.engine->plan()), choices(plan));
  EXPECT_TRUE(run(*built.engine).find("Y")->same_as(*run(*loaded.engine).find("Y")));
}

TEST(Builder, PlanForAnotherModelOrOtherOutputsIsRefused) {
  Prepared built = prepare(small_cnn(1), deterministic());
  ASSERT_TRUE(built.status.ok());
  EngineOptions load;
  load.plan = std::make_shared<const Plan>(*built.engine->plan());

  Prepared other = prepare(small_cnn(2), load);
  EXPECT_EQ(other.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status.message().find("built for another model"), std::string::npos) << other.status.to_string();

  PrepareOptions marked;
  marked.outputs = {"c"};
  Prepared outputs = prepare(small_cnn(1), load, marked);
  EXPECT_EQ(outputs.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outputs.status.message().find("rebuild the plan"), std::string::npos) << outputs.status.to_string();
}

TEST(Builder, TacticReplayReproducesABuild) {
  const Model model = small_cnn();
  EngineOptions o;
  o.build.builder_seed = 11;
  o.build.timing_margin = 1e9;
  o.build.timing_runs = 1;
  Prepared built = prepare(model, o);
  ASSERT_TRUE(built.status.ok());
  const TacticReplay replay = tactic_replay_from_plan(*built.engine->plan());
  Result<TacticReplay> parsed = tactic_replay_from_json(tactic_replay_to_json(replay));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();

  EngineOptions again;
  again.build.builder_seed = 12;
  again.build.replay = *parsed;
  Prepared replayed = prepare(model, again);
  ASSERT_TRUE(replayed.status.ok()) << replayed.status.to_string();
  EXPECT_EQ(choices(*replayed.engine->plan()), choices(*built.engine->plan()));
  EXPECT_EQ(replayed.engine->plan()->layers[0].choice, "replayed");
  EXPECT_TRUE(run(*built.engine).find("Y")->same_as(*run(*replayed.engine).find("Y")));
}

TEST(Builder, ReplayInPolygraphyLayoutWithoutVernierFields) {
  const Model model = small_cnn();
  Prepared built = prepare(model, deterministic());
  ASSERT_TRUE(built.status.ok());
  nlohmann::ordered_json j = tactic_replay_to_json(tactic_replay_from_plan(*built.engine->plan()));
  EXPECT_EQ(j["polygraphy_class"], "TacticReplayData");
  const nlohmann::ordered_json& conv = j["replay"]["Conv_0 + Relu_1"];
  EXPECT_EQ(conv["polygraphy_class"], "Algorithm");
  EXPECT_EQ(conv["inputs"][0]["dtype"], "DataType.FLOAT");
  EXPECT_EQ(conv["inputs"][0]["strides"], (std::vector<int64_t>{800, 100, 10, 1}));
  for (auto& [name, algorithm] : j["replay"].items()) algorithm.erase("vernier");
  Result<TacticReplay> parsed = tactic_replay_from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const TacticReplay original = tactic_replay_from_plan(*built.engine->plan());
  ASSERT_EQ(parsed->entries.size(), original.entries.size());
  for (size_t i = 0; i < original.entries.size(); ++i) {
    EXPECT_EQ(parsed->entries[i].tactic, original.entries[i].tactic);
    EXPECT_EQ(parsed->entries[i].precision, original.entries[i].precision);
  }
}

TEST(Builder, ReplayThatLacksALayerIsRefused) {
  const Model model = small_cnn();
  Prepared built = prepare(model, deterministic());
  ASSERT_TRUE(built.status.ok());
  TacticReplay replay = tactic_replay_from_plan(*built.engine->plan());
  replay.entries.erase(replay.entries.begin());
  EngineOptions o;
  o.build.replay = replay;
  Prepared p = prepare(model, o);
  EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status.message().find("has no layer 'Conv_0 + Relu_1'"), std::string::npos) << p.status.to_string();
}

TEST(Builder, UnsupportedNodesAreListedBeforeBuilding) {
  const Model model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13, \"custom\" : 1]>\n"
      "g (float[2] X) => (float[2] Y) { t = custom.Frobnicate(X)  Y = Relu(t) }");
  Prepared p = prepare(model, deterministic());
  EXPECT_EQ(p.status.code(), StatusCode::kUnsupportedOp);
  EXPECT_NE(p.status.to_string().find("Frobnicate"), std::string::npos) << p.status.to_string();
}

TEST(Builder, MalformedModelsAreErrorsNotCrashes) {
  // A product of 9e10 elements is refused before any allocation.
  const Model huge = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[300000,1] A, float[1,300000] B) => (float[300000,300000] Y) { Y = MatMul(A, B) }");
  Prepared p = prepare(huge, deterministic());
  EXPECT_FALSE(p.status.ok());
  EXPECT_NE(p.status.to_string().find("MatMul"), std::string::npos) << p.status.to_string();

  // Channels that do not match the weights are reported on the Conv, at build time.
  const Model mismatch = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,3,8,8] X, float[4,5,3,3] W) => (float[1,4,6,6] Y) { Y = Conv(X, W) }",
      {{"W", random_tensor({4, 5, 3, 3}, 1)}});
  Prepared q = prepare(mismatch, deterministic());
  EXPECT_EQ(q.status.code(), StatusCode::kShapeMismatch) << q.status.to_string();
  EXPECT_NE(q.status.to_string().find("Conv"), std::string::npos);
}

/// Builds `model` (input X, intermediate t, output Y, Y's layer reading t) twice, in fp32 and
/// with fp16 allowed: plainly, where Y's layer may write over t, which dies there, and with t kept
/// as an output. Y must have the same bits both ways, and the kept t and Y must match the
/// reference within `t_tol` and `y_tol`.
void expect_writing_over_t_changes_nothing(const Model& model, const TensorMap& feeds, Tolerance t_tol,
                                           Tolerance y_tol, const std::string& op) {
  const TensorMap ref = test::run_reference(model, feeds, {"t", "Y"});
  for (const PrecisionMask allowed : {kFp32, kFp32 | kFp16}) {
    EngineOptions o;
    o.build.deterministic = true;
    o.build.allowed = allowed;
    EngineBackend plain(o), kept(o);
    ASSERT_TRUE(plain.prepare(model, {}).ok());
    PrepareOptions keep_t;
    keep_t.outputs = {"t"};
    ASSERT_TRUE(kept.prepare(model, keep_t).ok());
    Result<TensorMap> a = plain.run(feeds);
    Result<TensorMap> b = kept.run(feeds);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::span<const float> ya = a->find("Y")->values<float>(), yb = b->find("Y")->values<float>();
    for (size_t i = 0; i < ya.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(ya[i]), std::bit_cast<uint32_t>(yb[i]));
    test::expect_close(*b->find("t"), *ref.find("t"), t_tol, "the kept input of the " + op);
    test::expect_close(*a->find("Y"), *ref.find("Y"), y_tol, "the " + op + " over its input");
  }
}

// A Softmax layer writes over its input where nothing reads the input after it (the Whisper
// encoder's 54 MB attention scores). In fp16 the layer writes over its own reformatted copy.
TEST(Builder, SoftmaxOverADyingInputGivesTheSameOutputs) {
  const Model model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3,40] X) => (float[3,40] Y) { t = Mul(X, X)  Y = Softmax(t) }");
  expect_writing_over_t_changes_nothing(model, {{"X", random_tensor({3, 40}, 7, -4.0f, 4.0f)}}, {1e-2, 1e-3},
                                        {1e-3, 1e-2}, "Softmax");
}

// A layer the reference kernels run (here a BatchNormalization after the Mul) writes its output
// over an input nobody reads after it.
TEST(Builder, ReferenceLayersOverADyingInputGiveTheSameOutputs) {
  const Model model = make_model(
      "<ir_version: 8, opset_import: [\"\" : 15]>\n"
      "g (float[2,4,5] X) => (float[2,4,5] Y)\n"
      "<float[4] s = {1.5, -2, 0.25, 3}, float[4] b = {0.5, 1, -1, 2}, float[4] m = {0.1, -0.2, 0.3, 0},\n"
      " float[4] v = {1, 2, 0.5, 4}>\n"
      "{ t = Mul(X, X)  Y = BatchNormalization(t, s, b, m, v) }");
  expect_writing_over_t_changes_nothing(model, {{"X", random_tensor({2, 4, 5}, 11, -3.0f, 3.0f)}}, {1e-2, 1e-3},
                                        {1e-2, 1e-2}, "BatchNormalization");
}

}  // namespace
}  // namespace vn::engine
