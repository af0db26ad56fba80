// SPDX-License-Identifier: Apache-2.0
// `debug reduce` sessions called directly (no process): the demo model with a fault planted in
// conv2, reduced with the built-in check, with an external command, and by a scripted user
// answering the good/bad questions (a wrong answer undone, a quit, a resume from the replay).
#include "core/debug/reduce_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/data/synthetic.h"
#include "core/engine/fault.h"
#include "core/ir/onnx_import.h"
#include "tests/util/process.h"

namespace vn::debug {
namespace {

const std::string kDemo = vn::test::demo_model();

ReduceSession open_demo() {
  Result<Model> model = load_model(kDemo);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  Result<std::vector<TensorMap>> feeds = data::generate_feeds(model->graph, {});
  EXPECT_TRUE(feeds.ok()) << feeds.status().to_string();
  Result<ReduceSession> session = ReduceSession::open(std::move(*model), std::move(*feeds), 1);
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  return std::move(session).value();
}

// The built-in check of an engine whose conv2 scales its outputs by 1.5.
BuiltinCheck faulty_conv2() {
  BuiltinCheck check;
  check.engine.build.deterministic = true;
  Result<engine::FaultSpec> fault = engine::parse_fault("layer=conv2,kind=scale,factor=1.5");
  EXPECT_TRUE(fault.ok()) << fault.status().to_string();
  check.engine.build.faults.push_back(*fault);
  return check;
}

// A config writing everything into `dir`.
ReduceSessionConfig config_in(const test::TempDir& dir, ReduceMode mode) {
  ReduceSessionConfig config;
  config.options.mode = mode;
  config.iter_artifact = dir / "candidate.onnx";
  config.artifacts_dir = dir / "sorted";
  config.save_replay = dir / "replay.json";
  config.output = dir / "min.onnx";
  config.min_good = dir / "good.onnx";
  return config;
}

// The node names of the model at `path`.
std::vector<std::string> nodes_of(const std::filesystem::path& path) {
  Result<Model> model = load_model(path);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  std::vector<std::string> names;
  if (model.ok()) {
    for (const Node& n : model->graph.nodes) names.push_back(n.name);
  }
  return names;
}

TEST(ReduceSession, TheBuiltinCheckEndsAtThePlantedFault) {
  for (ReduceMode mode : {ReduceMode::kBisect, ReduceMode::kDdmin}) {
    test::TempDir dir;
    ReduceSession session = open_demo();
    ReduceSessionConfig config = config_in(dir, mode);
    config.builtin = faulty_conv2();
    int64_t reported = 0;
    ReduceHooks hooks;
    hooks.on_iteration = [&](const ReduceIteration& it, const ReduceProgress& progress) {
      ++reported;
      EXPECT_FALSE(it.replayed);
      EXPECT_EQ(progress.total_nodes, 10);
      // The replay holds every verdict reported so far, and the skip-current file is gone.
      Result<DebugReplay> saved = DebugReplay::load(config.save_replay);
      ASSERT_TRUE(saved.ok()) << saved.status().to_string();
      EXPECT_EQ(saved->size(), static_cast<size_t>(reported));
      EXPECT_FALSE(std::filesystem::exists(skip_current_path(config.save_replay)));
    };
    Result<ReduceSessionResult> result = session.run(config, hooks);
    ASSERT_TRUE(result.ok()) << result.status().to_string();
    EXPECT_FALSE(result->quit);
    EXPECT_EQ(result->minimal, "1 node(s): conv2 (Conv) | inputs: pool1 | outputs: conv2") << reduce_mode_name(mode);
    EXPECT_EQ(result->total_nodes, 10);
    EXPECT_EQ(result->reduce.checks, reported);
    EXPECT_EQ(result->answers, reported);
    EXPECT_TRUE(result->saved_output && result->saved_min_good) << result->saved.to_string();
    EXPECT_EQ(nodes_of(config.output), std::vector<std::string>{"conv2"});
    // The passing model close in size does not hold the faulty node.
    const std::vector<std::string> good = nodes_of(config.min_good);
    EXPECT_FALSE(good.empty());
    EXPECT_EQ(std::count(good.begin(), good.end(), "conv2"), 0);
    // Without artifacts to sort, the built-in check writes no candidate.
    EXPECT_FALSE(std::filesystem::exists(config.iter_artifact));
    EXPECT_FALSE(result->might_reduce_further);
  }
}

TEST(ReduceSession, ARunResumedFromItsReplayChecksNothingAgain) {
  test::TempDir dir;
  ReduceSessionConfig config = config_in(dir, ReduceMode::kDdmin);
  config.builtin = faulty_conv2();
  ReduceSession first = open_demo();
  Result<ReduceSessionResult> done = first.run(config, {});
  ASSERT_TRUE(done.ok()) << done.status().to_string();

  ReduceSession again = open_demo();
  ASSERT_TRUE(again.load_replay(config.save_replay).ok());
  EXPECT_EQ(again.loaded(), done->answers);
  int64_t replayed = 0;
  ReduceHooks hooks;
  hooks.on_iteration = [&](const ReduceIteration& it, const ReduceProgress&) { replayed += it.replayed ? 1 : 0; };
  config.output = dir / "again.onnx";
  Result<ReduceSessionResult> resumed = again.run(config, hooks);
  ASSERT_TRUE(resumed.ok()) << resumed.status().to_string();
  EXPECT_EQ(resumed->reduce.checks, 0);
  EXPECT_EQ(replayed, done->answers);
  EXPECT_EQ(resumed->minimal, done->minimal);
  EXPECT_EQ(test::read_file(dir / "again.onnx"), test::read_file(dir / "min.onnx"));
}

TEST(ReduceSession, NothingFailingIsAnErrorAndWritesNoModel) {
  test::TempDir dir;
  ReduceSession session = open_demo();
  ReduceSessionConfig config = config_in(dir, ReduceMode::kBisect);
  config.builtin.emplace();
  config.builtin->engine.build.deterministic = true;
  Result<ReduceSessionResult> result = session.run(config, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("no candidate failed"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(config.output));
}

TEST(ReduceSession, AnExternalCheckReadsEachCandidateAndItsInputs) {
  test::TempDir dir;
  ReduceSession session = open_demo();
  ReduceSessionConfig config = config_in(dir, ReduceMode::kDdmin);
  // Fails the candidates holding conv2: the check looks for the node's name in the model file,
  // and needs the candidate's feeds beside it.
  ExternalCheck check;
  check.argv = {"/bin/sh", "-c", "test -s candidate_inputs.json && ! grep -q conv2 candidate.onnx"};
  check.cwd = dir.path();
  Result<ExternalChecker> checker = ExternalChecker::create(check);
  ASSERT_TRUE(checker.ok());
  config.external = *checker;
  int64_t outputs = 0;
  ReduceHooks hooks;
  hooks.on_check_output = [&](const CheckResult& r) {
    ++outputs;
    EXPECT_TRUE(r.process.has_value());
  };
  Result<ReduceSessionResult> result = session.run(config, hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(outputs, result->reduce.checks);
  EXPECT_EQ(nodes_of(config.output), std::vector<std::string>{"conv2"});
  EXPECT_FALSE(std::filesystem::exists(config.iter_artifact));
  EXPECT_FALSE(std::filesystem::exists(inputs_artifact(config.iter_artifact)));
}

// The user's judgement: a candidate fails when it holds the node with the planted fault.
ReduceAnswer judge(const ReduceQuestion& q) {
  return std::count(q.labels.begin(), q.labels.end(), "conv2 (Conv)") > 0 ? ReduceAnswer::kBad : ReduceAnswer::kGood;
}

TEST(ReduceSession, ScriptedAnswersWithAnUndoReachTheBuiltinResult) {
  test::TempDir dir;
  ReduceSessionConfig automatic = config_in(dir, ReduceMode::kDdmin);
  automatic.builtin = faulty_conv2();
  automatic.output = dir / "auto.onnx";
  automatic.save_replay = dir / "auto_replay.json";
  ReduceSession reference = open_demo();
  Result<ReduceSessionResult> expected = reference.run(automatic, {});
  ASSERT_TRUE(expected.ok()) << expected.status().to_string();

  ReduceSession session = open_demo();
  ReduceSessionConfig config = config_in(dir, ReduceMode::kDdmin);
  int questions = 0;
  std::vector<std::string> undone;
  int search_starts = 0;
  ReduceHooks hooks;
  hooks.ask = [&](const ReduceQuestion& q) {
    // The candidate and its feeds are on disk while the question is asked.
    EXPECT_TRUE(std::filesystem::exists(config.iter_artifact));
    EXPECT_TRUE(std::filesystem::exists(inputs_artifact(config.iter_artifact)));
    EXPECT_EQ(q.labels.size(), q.candidate.nodes.size());
    EXPECT_EQ(q.cancel, nullptr);
    ++questions;
    if (questions == 2) return judge(q) == ReduceAnswer::kBad ? ReduceAnswer::kGood : ReduceAnswer::kBad;  // wrong
    if (questions == 3) return ReduceAnswer::kUndo;
    return judge(q);
  };
  hooks.on_undo = [&](const std::string& key) { undone.push_back(key); };
  hooks.on_search_start = [&] { ++search_starts; };
  Result<ReduceSessionResult> result = session.run(config, hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(undone, std::vector<std::string>{"_N1_ddmin"});
  EXPECT_EQ(search_starts, 2);
  EXPECT_EQ(result->minimal, expected->minimal);
  EXPECT_EQ(test::read_file(config.output), test::read_file(dir / "auto.onnx"));
  EXPECT_FALSE(std::filesystem::exists(config.iter_artifact));
}

TEST(ReduceSession, UndosGoBackOneAnswerAtATimeToTheFirst) {
  test::TempDir dir;
  ReduceSessionConfig automatic = config_in(dir, ReduceMode::kDdmin);
  automatic.builtin = faulty_conv2();
  automatic.output = dir / "auto.onnx";
  automatic.save_replay = dir / "auto_replay.json";
  ReduceSession reference = open_demo();
  ASSERT_TRUE(reference.run(automatic, {}).ok());

  // Three answers, then three undos in a row (each taking back the answer before the question
  // shown), then the answers again to the end.
  ReduceSession session = open_demo();
  ReduceSessionConfig config = config_in(dir, ReduceMode::kDdmin);
  config.output = dir / "min.onnx";
  std::vector<int64_t> numbers;  // the answers kept when each question came
  std::vector<std::string> answered_keys, undone;
  int questions = 0;
  ReduceHooks hooks;
  hooks.ask = [&](const ReduceQuestion& q) {
    numbers.push_back(q.checks);
    ++questions;
    if (questions >= 4 && questions <= 6) return ReduceAnswer::kUndo;
    return judge(q);
  };
  hooks.on_iteration = [&](const ReduceIteration& it, const ReduceProgress&) {
    if (!it.replayed && answered_keys.size() < 3) answered_keys.push_back(it.key);
  };
  hooks.on_undo = [&](const std::string& key) { undone.push_back(key); };
  Result<ReduceSessionResult> result = session.run(config, hooks);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  ASSERT_EQ(answered_keys.size(), 3u);
  EXPECT_EQ(undone, (std::vector<std::string>{answered_keys[2], answered_keys[1], answered_keys[0]}));
  ASSERT_GE(numbers.size(), 8u);
  EXPECT_EQ(std::vector<int64_t>(numbers.begin(), numbers.begin() + 8), (std::vector<int64_t>{0, 1, 2, 3, 2, 1, 0, 1}));
  EXPECT_EQ(test::read_file(config.output), test::read_file(dir / "auto.onnx"));
}

TEST(ReduceSession, QuitKeepsTheAnswersForAResume) {
  test::TempDir dir;
  ReduceSessionConfig config = config_in(dir, ReduceMode::kDdmin);
  int questions = 0;
  ReduceHooks hooks;
  hooks.ask = [&](const ReduceQuestion& q) { return ++questions < 3 ? judge(q) : ReduceAnswer::kQuit; };
  ReduceSession first = open_demo();
  Result<ReduceSessionResult> stopped = first.run(config, hooks);
  ASSERT_TRUE(stopped.ok()) << stopped.status().to_string();
  EXPECT_TRUE(stopped->quit);
  EXPECT_EQ(stopped->answers, 2);
  EXPECT_FALSE(std::filesystem::exists(config.output));
  EXPECT_FALSE(std::filesystem::exists(config.iter_artifact));

  ReduceSession second = open_demo();
  ASSERT_TRUE(second.load_replay(config.save_replay).ok());
  questions = 0;
  hooks.ask = [&](const ReduceQuestion& q) {
    ++questions;
    EXPECT_EQ(q.checks, 2 + questions - 1);  // the two answers kept come first
    return judge(q);
  };
  Result<ReduceSessionResult> finished = second.run(config, hooks);
  ASSERT_TRUE(finished.ok()) << finished.status().to_string();
  EXPECT_FALSE(finished->quit);
  EXPECT_EQ(nodes_of(config.output), std::vector<std::string>{"conv2"});
  EXPECT_EQ(finished->answers, 2 + questions);
}

}  // namespace
}  // namespace vn::debug
