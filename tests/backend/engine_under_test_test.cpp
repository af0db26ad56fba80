// SPDX-License-Identifier: Apache-2.0
// The engine under test (core/eut): the built-in engine and runner engines behind one interface,
// the precision conversion for a runner that runs the file it is given, local errors from an
// isolated-layers model, and triage on a real engine (ONNX Runtime through the ort runner) and on
// misbehaving runners.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/common/paths.h"
#include "core/compare/layerwise.h"
#include "core/eut/engine_model.h"
#include "core/eut/engine_under_test.h"
#include "core/eut/local_errors.h"
#include "core/eut/runner_engine.h"
#include "core/flow/flowchart.h"
#include "core/flow/triage.h"
#include "core/ir/onnx_import.h"
#include "core/backend/runner_registry.h"
#include "core/ref/reference_backend.h"
#include "core/surgeon/convert_fp16.h"
#include "core/surgeon/surgeon.h"
#include "tests/backend/runner_test_util.h"
#include "tests/engine/engine_test_util.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using engine::test::random_tensor;

const char* const kInstallHint =
    "\nThe ort runner needs Node.js and onnxruntime-node 1.30: run scripts/install-deps.sh, which installs "
    "onnxruntime-node into .deps/node.";

std::string demo_model() { return std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx"; }

std::shared_ptr<eut::EngineUnderTest> ort_engine() {
  eut::RunnerEngineOptions options;
  Result<RunnerCommand> command = resolve_runner("ort", std::string(VN_SOURCE_DIR) + "/assets");
  EXPECT_TRUE(command.ok()) << command.status().to_string();
  options.runner.command = *command;
  options.spec = "ort";
  return eut::runner_engine(std::move(options));
}

std::shared_ptr<eut::EngineUnderTest> fake_engine(const std::string& mode, const std::filesystem::path& once = {}) {
  eut::RunnerEngineOptions options;
  options.runner = test::fake_runner(mode, once);
  options.spec = "fake";
  return eut::runner_engine(std::move(options));
}

TensorMap reference_outputs(const Model& model, const TensorMap& feeds, const PrepareOptions& prep = {}) {
  ref::ReferenceBackend reference;
  EXPECT_TRUE(reference.prepare(model, prep).ok());
  Result<TensorMap> out = reference.run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? *out : TensorMap();
}

TEST(EngineUnderTest, TheBuiltinEngineTellsItsPlanAndTactics) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  const std::shared_ptr<eut::EngineUnderTest> engine = eut::builtin_engine();
  Result<eut::Capabilities> caps = engine->capabilities();
  ASSERT_TRUE(caps.ok());
  EXPECT_TRUE(caps->builds_vary && caps->layers_alone && caps->tactic_replays);
  engine::BuildOptions build;
  build.deterministic = true;
  Result<std::unique_ptr<eut::Build>> built = engine->build(*model, build, PrepareOptions{});
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  EXPECT_NE((*built)->plan(), nullptr);
  EXPECT_TRUE((*built)->tactic_replay().has_value());
  EXPECT_FALSE((*built)->layers().empty());
  EXPECT_EQ((*built)->converted_model(), nullptr);
  EXPECT_TRUE(engine->command_line().empty());
}

TEST(EngineUnderTest, OrtRunsTheModelAsGivenOrConvertedToFloat16) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  const std::shared_ptr<eut::EngineUnderTest> engine = ort_engine();
  Result<eut::Capabilities> caps = engine->capabilities();
  ASSERT_TRUE(caps.ok()) << caps.status().to_string() << kInstallHint;
  EXPECT_FALSE(caps->builds_vary);
  EXPECT_TRUE(caps->intermediate_tensors);
  EXPECT_FALSE(caps->layers_alone);
  EXPECT_FALSE(caps->lowers_precision) << "ONNX Runtime runs the file it is given: Vernier converts it";
  const TensorMap feeds{{"image", random_tensor({1, 3, 32, 32}, 3)}};
  const TensorMap ref = reference_outputs(*model, feeds);

  Result<std::unique_ptr<eut::Build>> fp32 = engine->build(*model, engine::BuildOptions{}, PrepareOptions{});
  ASSERT_TRUE(fp32.ok()) << fp32.status().to_string();
  EXPECT_EQ((*fp32)->converted_model(), nullptr);
  Result<TensorMap> out = (*fp32)->backend().run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_LE(test::excess_error(*out->find("probs"), *ref.find("probs"), 1e-5), 1e-6);

  engine::BuildOptions half;
  half.allowed = engine::kFp32 | engine::kFp16;
  Result<std::unique_ptr<eut::Build>> fp16 = engine->build(*model, half, PrepareOptions{});
  ASSERT_TRUE(fp16.ok()) << fp16.status().to_string();
  ASSERT_NE((*fp16)->converted_model(), nullptr);
  bool float16_weights = false;
  for (const Initializer& init : (*fp16)->converted_model()->graph.initializers) {
    float16_weights |= init.tensor.dtype() == DType::kFloat16;
  }
  EXPECT_TRUE(float16_weights);
  out = (*fp16)->backend().run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double err = test::excess_error(*out->find("probs"), *ref.find("probs"), 1e-2);
  EXPECT_GT(test::excess_error(*out->find("probs"), *ref.find("probs"), 0), 1e-6) << "float16 rounds";
  EXPECT_LE(err, 1e-2);
  EXPECT_EQ(engine->command_line(), (std::vector<std::string>{"--engine-runner", "ort"}));
}

TEST(EngineUnderTest, OrtRefusesWhatItCannotHonour) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  const std::shared_ptr<eut::EngineUnderTest> engine = ort_engine();
  engine::BuildOptions bf16;
  bf16.allowed = engine::kFp32 | engine::kBf16;
  Result<std::unique_ptr<eut::Build>> built = engine->build(*model, bf16, PrepareOptions{});
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("--bf16: runner 'ort' runs the ONNX file it is given"), std::string::npos)
      << built.status().message() << kInstallHint;
  engine::BuildOptions faulty;
  Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv1,kind=scale");
  ASSERT_TRUE(fault.ok());
  faulty.faults.push_back(*fault);
  built = engine->build(*model, faulty, PrepareOptions{});
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("--inject-fault breaks Vernier's built-in engine"), std::string::npos);
}

TEST(EngineUnderTest, LocalErrorsOfARunnerComeFromOneIsolatedLayersRun) {
  Result<Model> model = load_model(demo_model());
  ASSERT_TRUE(model.ok());
  const std::shared_ptr<eut::EngineUnderTest> engine = ort_engine();
  const TensorMap feeds{{"image", random_tensor({1, 3, 32, 32}, 5)}};
  for (const bool half : {false, true}) {
    engine::BuildOptions build;
    if (half) build.allowed = engine::kFp32 | engine::kFp16;
    PrepareOptions prep;
    prep.mark_all = true;
    ref::ReferenceBackend reference;
    ASSERT_TRUE(reference.prepare(*model, prep).ok());
    Result<std::unique_ptr<eut::Build>> built = engine->build(*model, build, prep);
    ASSERT_TRUE(built.ok()) << built.status().to_string() << kInstallHint;
    LayerwiseOptions lw;
    lw.config.atol[""] = 1e-2;
    lw.config.rtol[""] = 1e-2;
    lw.layer_graph = &model->graph;
    Result<LayerwiseComparison> cmp = compare_layerwise(reference, (*built)->backend(), feeds, lw);
    ASSERT_TRUE(cmp.ok()) << cmp.status().to_string();
    eut::IsolatedLocalErrors local;
    local.build = build;
    local.compare = lw.config;
    ASSERT_TRUE(eut::add_isolated_local_errors(*cmp, *model, feeds, *engine, local).ok());
    EXPECT_TRUE(cmp->local_errors);
    ASSERT_EQ(cmp->layers.size(), model->graph.nodes.size());
    double worst = 0;
    for (const LayerComparison& l : cmp->layers) {
      ASSERT_EQ(l.local.size(), l.layer.outputs.size()) << l.layer.name << ": " << l.local_skipped;
      for (const TensorComparison& t : l.local) worst = std::max(worst, t.abs_max);
    }
    // In float32 every layer computes from exact inputs what the reference does; in float16 the
    // rounding shows, in every layer alone.
    if (half) {
      EXPECT_GT(worst, 1e-5);
    } else {
      EXPECT_LT(worst, 1e-5);
    }
  }
}

// Triage of a model on an engine under test, headless, in a fresh work folder.
Result<flow::TriageResult> triage(const std::shared_ptr<eut::EngineUnderTest>& engine, const Model& model,
                                  const test::TempDir& dir) {
  Result<flow::Flowchart> chart = flow::load_flowchart(std::string(VN_SOURCE_DIR) + "/assets/flowchart/en.json");
  EXPECT_TRUE(chart.ok());
  flow::TriageConfig config;
  config.model = model;
  config.synthetic_feeds = {{{"x", random_tensor({2, 16}, 7)}}};
  config.engine = engine;
  config.threads = 1;
  config.workdir = dir.path() / "work";
  return flow::triage_headless(*chart, std::move(config), {});
}

TEST(EngineUnderTest, TriageOnARunnerThatCrashesEndsWithItsReason) {
  test::TempDir dir;
  Result<flow::TriageResult> result = triage(fake_engine("crash_run"), test::small_runner_model(), dir);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kExternalFailure);
  EXPECT_NE(result.status().message().find("triage cannot go on: the engine cannot run it"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("fake: misbehaving with crash_run"), std::string::npos)
      << "the runner's stderr is quoted: " << result.status().message();
}

TEST(EngineUnderTest, ARunnerThatCrashedServesTheNextBuildAfterARestart) {
  // One engine serves a whole triage: a check that meets a crash fails with the reason, and the
  // next one gets a restarted runner, with nothing lost.
  test::TempDir dir;
  const std::shared_ptr<eut::EngineUnderTest> engine = fake_engine("crash_run", dir.path() / "crashed_once");
  const Model model = test::small_runner_model();
  const TensorMap feeds{{"x", random_tensor({2, 16}, 7)}};
  Result<std::unique_ptr<eut::Build>> first = engine->build(model, engine::BuildOptions{}, PrepareOptions{});
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  Result<TensorMap> out = (*first)->backend().run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("SIGSEGV"), std::string::npos) << out.status().message();
  Result<std::unique_ptr<eut::Build>> second = engine->build(model, engine::BuildOptions{}, PrepareOptions{});
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  out = (*second)->backend().run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_LE(test::excess_error(*out->find("y"), *reference_outputs(model, feeds).find("y"), 1e-6), 1e-6);
}

TEST(EngineUnderTest, TriageOnARunnerThatHangsEndsWithTheTimeout) {
  test::TempDir dir;
  eut::RunnerEngineOptions options;
  options.runner = test::fake_runner("hang_run");
  options.runner.run_timeout_s = 2;
  options.spec = "fake";
  Result<flow::TriageResult> result = triage(eut::runner_engine(std::move(options)), test::small_runner_model(), dir);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no reply within 2 s"), std::string::npos)
      << result.status().message();
}

// ---- --engine-model: the user's converted model, part for part ----

TEST(EngineUnderTest, AnEngineModelRunsTheSamePartOfTheUsersModel) {
  // The user converted fp16_range.onnx to float16 themselves; a part of the original (its last
  // layer, as the extract step builds it) runs as the same part of theirs, fed float32 through a
  // Cast. (The built-in engine has no float16 kernels for a model stored in float16: it refuses it.)
  Result<Model> model = load_model(std::string(VN_SOURCE_DIR) + "/assets/scenarios/fp16_range.onnx");
  ASSERT_TRUE(model.ok());
  Result<surgeon::Fp16Result> fp16 = surgeon::convert_to_fp16(*model, {});
  ASSERT_TRUE(fp16.ok()) << fp16.status().to_string();
  auto converted = std::make_shared<const Model>(std::move(fp16->model));
  Result<surgeon::Rewrite> part = surgeon::extract(*model, {{"logits", std::nullopt, std::nullopt}},
                                        {{"scores", std::nullopt, std::nullopt}}, nullptr);
  ASSERT_TRUE(part.ok()) << part.status().to_string();
  const TensorMap feeds{{"logits", random_tensor({1, 4}, 3)}};
  const TensorMap expected = reference_outputs(part->model, feeds);
  {
    auto engine = eut::engine_model_engine(ort_engine(), converted, "mine_fp16.onnx");
    // --fp16 only sets the tolerance: the user's model runs as it is, not converted again.
    engine::BuildOptions build;
    build.allowed = engine::kFp32 | engine::kFp16;
    Result<std::unique_ptr<eut::Build>> built = engine->build(part->model, build, PrepareOptions{});
    ASSERT_TRUE(built.ok()) << built.status().to_string() << kInstallHint;
    const Model* ran = (*built)->converted_model();
    ASSERT_NE(ran, nullptr);
    ASSERT_EQ(ran->graph.inputs.size(), 1u);
    EXPECT_EQ(ran->graph.inputs[0].dtype, DType::kFloat32);
    EXPECT_EQ(ran->graph.nodes.front().op_type, "Cast") << "the float16 'logits' of the user's model is cast to";
    Result<TensorMap> out = (*built)->backend().run(feeds);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    // The gain of 1e5 is 65504 in the user's float16 model: the scores are a third too small.
    const Tensor* scores = out->find("scores");
    ASSERT_NE(scores, nullptr);
    const Tensor& ref = *expected.find("scores");
    for (int64_t i = 0; i < ref.numel(); ++i) {
      EXPECT_NEAR(scores->data<float>()[i] / ref.data<float>()[i], 65504.0 / 1e5, 1e-3) << i;
    }
  }
  // A model Vernier rewrote with names of its own has no counterpart in the user's model.
  auto engine = eut::engine_model_engine(eut::builtin_engine(), converted, "mine_fp16.onnx");
  Model renamed = part->model;
  renamed.graph.inputs[0].name = "logits__in";
  renamed.graph.nodes[0].inputs[0] = "logits__in";
  Result<std::unique_ptr<eut::Build>> refused = engine->build(renamed, engine::BuildOptions{}, PrepareOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("mine_fp16.onnx has no tensor 'logits__in'"), std::string::npos)
      << refused.status().message();
}

// ---- Each probe on a runner: an inaccurate engine, and one that misbehaves at one probe ----

// The small model with its Mul named 'mul', and a fake engine whose 'mul' is 1.5x off, in `mode`,
// with the extra environment `env`.
std::shared_ptr<eut::EngineUnderTest> inaccurate_engine(const std::string& mode,
                                                        std::vector<std::pair<std::string, std::string>> env = {}) {
  eut::RunnerEngineOptions options;
  options.runner = test::fake_runner(mode);
  options.runner.command.env.emplace_back("FAKE_SCALE_NODE", "mul");
  for (auto& e : env) options.runner.command.env.push_back(std::move(e));
  options.spec = "fake";
  return eut::runner_engine(std::move(options));
}

Model named_small_model() {
  Model model = test::small_runner_model();
  model.graph.nodes[2].name = "mul";
  return model;
}

std::string path_of(const flow::TriageResult& r) {
  std::string out;
  for (const flow::TriageStep& s : r.path) {
    out += (out.empty() ? "" : " > ") + s.node + (s.answer ? (*s.answer ? ":yes" : ":no") : "");
  }
  return out;
}

const flow::TriageStep* step_of(const flow::TriageResult& r, const std::string& node) {
  for (const flow::TriageStep& s : r.path) {
    if (s.node == node) return &s;
  }
  return nullptr;
}

TEST(EngineUnderTest, TriageOnAnInaccurateRunnerNamesTheLayerThroughEveryProbe) {
  test::TempDir dir;
  Result<flow::TriageResult> r = triage(inaccurate_engine("ok"), named_small_model(), dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(path_of(*r), "sanitize > real_data:no > intermittent:no > layerwise:yes > extract:yes > minimal");
  EXPECT_EQ(r->culprit, "layer 'mul'");
  // The runner says its builds do not vary: the intermittency question is answered from that.
  const flow::TriageStep* intermittent = step_of(*r, "intermittent");
  ASSERT_NE(intermittent, nullptr);
  EXPECT_EQ(intermittent->builds, 0);
  EXPECT_EQ(intermittent->evidence.value("skipped", ""), "builds do not vary");
  // Local errors came from the runner's isolated-layers run, with no layer skipped.
  const flow::TriageStep* layerwise = step_of(*r, "layerwise");
  ASSERT_NE(layerwise, nullptr);
  EXPECT_EQ(layerwise->evidence.value("local_errors", ""), "from one run of an isolated-layers model");
  EXPECT_FALSE(layerwise->evidence.contains("local_errors_skipped")) << layerwise->evidence.dump();
}

TEST(EngineUnderTest, TriageOnARunnerWithoutIntermediateTensorsSkipsTheLayerwiseStepAndReduces) {
  test::TempDir dir;
  Result<flow::TriageResult> r = triage(inaccurate_engine("no_intermediate"), named_small_model(), dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(path_of(*r), "sanitize > real_data:no > intermittent:no > layerwise:no > reduce:yes > minimal");
  const flow::TriageStep* layerwise = step_of(*r, "layerwise");
  ASSERT_NE(layerwise, nullptr);
  EXPECT_EQ(layerwise->evidence.value("skipped", ""), "no intermediate tensors");
  EXPECT_NE(layerwise->summary.find("cannot return intermediate tensors"), std::string::npos) << layerwise->summary;
  EXPECT_NE(r->culprit.find("'mul'"), std::string::npos) << r->culprit;
}

TEST(EngineUnderTest, TriageWhoseIsolatedLayersRunFailsRanksByAccumulatedErrorsAndSaysWhy) {
  // The runner serves every check but crashes, or drops a tensor, on the isolated-layers model:
  // the layer-wise step still names the first failing layer, from the accumulated errors, and its
  // evidence says why no layer has a local error.
  for (const std::string mode : {"crash_run", "missing_tensor_run"}) {
    SCOPED_TRACE(mode);
    test::TempDir dir;
    Result<flow::TriageResult> r =
        triage(inaccurate_engine(mode, {{"FAKE_ONLY_ISOLATED", "1"}}), named_small_model(), dir);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(path_of(*r), "sanitize > real_data:no > intermittent:no > layerwise:yes > extract:yes > minimal");
    EXPECT_EQ(r->culprit, "layer 'mul'");
    const flow::TriageStep* layerwise = step_of(*r, "layerwise");
    ASSERT_NE(layerwise, nullptr);
    ASSERT_TRUE(layerwise->evidence.contains("local_errors_skipped")) << layerwise->evidence.dump();
    EXPECT_EQ(layerwise->evidence["local_errors_skipped"]["layers"], 4);
    EXPECT_NE(layerwise->evidence["local_errors_skipped"]["reason"].get<std::string>().find(
                  "the engine cannot run the isolated layers"),
              std::string::npos);
  }
}

TEST(EngineUnderTest, TriageRebuildsThroughARunnerWhoseBuildsVary) {
  // A runner that says its builds vary is rebuilt by the intermittency probe, each build checked;
  // one that fails in every build is not intermittent.
  test::TempDir dir;
  Result<flow::TriageResult> r =
      triage(inaccurate_engine("ok", {{"FAKE_BUILDS_VARY", "1"}}), named_small_model(), dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(path_of(*r), "sanitize > real_data:no > intermittent:no > layerwise:yes > extract:yes > minimal");
  const flow::TriageStep* intermittent = step_of(*r, "intermittent");
  ASSERT_NE(intermittent, nullptr);
  EXPECT_EQ(intermittent->builds, 5) << intermittent->evidence.dump();
  EXPECT_EQ(intermittent->checks, 5);
}

TEST(EngineUnderTest, TriageWhoseExtractedLayerCrashesTheRunnerSaysSoAndReduces) {
  // The runner crashes on the extracted layer (a model with the graph input 'b'): the extract step
  // says the layer cannot run alone, quoting the crash, and the walk goes on to the reduction.
  test::TempDir dir;
  Result<flow::TriageResult> r =
      triage(inaccurate_engine("crash_run", {{"FAKE_ONLY_INPUT", "b"}}), named_small_model(), dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(path_of(*r).rfind("sanitize > real_data:no > intermittent:no > layerwise:yes > extract:no > reduce:", 0),
            0u)
      << path_of(*r);
  const flow::TriageStep* extract = step_of(*r, "extract");
  ASSERT_NE(extract, nullptr);
  EXPECT_NE(extract->summary.find("'mul' extracted with its inputs from the reference cannot run alone on the engine"),
            std::string::npos)
      << extract->summary;
  EXPECT_NE(extract->summary.find("SIGSEGV"), std::string::npos) << extract->summary;
}

}  // namespace
}  // namespace vn
