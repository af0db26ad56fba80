// SPDX-License-Identifier: Apache-2.0
// Engine runners that behave: the fake runner (on the shared Python protocol module) through
// RunnerBackend, one process serving several models, bfloat16 exchange, the named-runner list and
// the README's example runner.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <set>

#include <Eigen/Core>

#include "core/backend/runner_registry.h"
#include "core/ir/onnx_export.h"
#include "tests/backend/runner_test_util.h"

namespace vn {
namespace {

using engine::test::random_tensor;
using engine::test::run_reference;

TEST(RunnerBackend, ReturnsWhatTheReferenceComputesTensorByTensor) {
  Model model = test::small_runner_model();
  const TensorMap feeds{{"x", random_tensor({2, 16}, 11)}};
  RunnerBackend backend(std::make_shared<RunnerClient>(test::fake_runner("ok")), {});
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(backend.prepare(model, prep).ok());
  EXPECT_EQ(backend.hello().runner, "fake");
  EXPECT_TRUE(backend.capabilities().intermediate_tensors);
  EXPECT_FALSE(backend.capabilities().lowers_precision);
  ASSERT_EQ(backend.loaded().layers.size(), 4u);
  EXPECT_EQ(backend.loaded().layers[1].type, "Sigmoid");
  ASSERT_EQ(backend.loaded().artifacts.size(), 1u);
  EXPECT_TRUE(std::filesystem::is_regular_file(backend.loaded().artifacts[0]));

  std::vector<std::pair<int64_t, std::string>> observed;
  RunOptions run;
  run.observer = [&](int64_t index, const Node&, const TensorMap& outputs) {
    for (const NamedTensor& t : outputs) observed.emplace_back(index, t.name);
    return true;
  };
  for (int repeat = 0; repeat < 3; ++repeat) {
    observed.clear();
    Result<TensorMap> out = backend.run(feeds, run);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const TensorMap expected = run_reference(model, feeds, {"a", "b", "c"});
    ASSERT_EQ(out->size(), 4u);
    EXPECT_EQ((*out)[0].name, "y");
    for (const NamedTensor& t : expected) {
      ASSERT_NE(out->find(t.name), nullptr) << t.name;
      EXPECT_LE(test::excess_error(*out->find(t.name), t.tensor, 1e-6), 1e-6) << t.name;
    }
    const std::vector<std::pair<int64_t, std::string>> in_node_order = {{0, "a"}, {1, "b"}, {2, "c"}, {3, "y"}};
    EXPECT_EQ(observed, in_node_order);
  }
  EXPECT_EQ(backend.client().starts(), 1);
}

TEST(RunnerBackend, OneRunnerProcessServesSeveralModels) {
  test::TempDir dir;
  RunnerOptions options = test::fake_runner("ok");
  options.command.env.emplace_back("FAKE_LOG", (dir / "starts.log").string());
  auto client = std::make_shared<RunnerClient>(options);
  Model first = test::small_runner_model();
  Model second = engine::test::make_model(R"(<ir_version: 8, opset_import: ["" : 13]>
second (float[3] x, float[3] w) => (float[3] y) {
  t = Tanh(x)
  y = Sub(t, w)
}
)",
                                          {{"w", random_tensor({3}, 5)}});
  const TensorMap feeds_first{{"x", random_tensor({2, 16}, 1)}}, feeds_second{{"x", random_tensor({3}, 2)}};
  auto a = std::make_unique<RunnerBackend>(client, RunnerBackendOptions{});
  RunnerBackend b(client, {});
  ASSERT_TRUE(a->prepare(first, {}).ok());
  ASSERT_TRUE(b.prepare(second, {}).ok());
  // Each run loads its backend's model again when the other one was loaded since.
  for (int round = 0; round < 2; ++round) {
    Result<TensorMap> ya = a->run(feeds_first);
    Result<TensorMap> yb = b.run(feeds_second);
    ASSERT_TRUE(ya.ok() && yb.ok());
    EXPECT_LE(test::excess_error((*ya)[0].tensor, run_reference(first, feeds_first)[0].tensor, 1e-6), 1e-6);
    EXPECT_LE(test::excess_error((*yb)[0].tensor, run_reference(second, feeds_second)[0].tensor, 1e-6), 1e-6);
  }
  EXPECT_EQ(client->starts(), 1);
  EXPECT_EQ(test::read_file(dir / "starts.log").find("start", 1), std::string::npos) << "one process only";
  const size_t models = std::distance(std::filesystem::directory_iterator(client->private_dir() / "models"),
                                      std::filesystem::directory_iterator());
  a.reset();
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(client->private_dir() / "models"),
                          std::filesystem::directory_iterator()),
            static_cast<long>(models) - 1)
      << "a backend removes the model file it wrote";
}

TEST(RunnerBackend, TheRunnerStopsAndItsFolderGoesWithTheClient) {
  test::TempDir dir;
  RunnerOptions options = test::fake_runner("ok");
  options.command.env.emplace_back("FAKE_LOG", (dir / "starts.log").string());
  std::filesystem::path private_dir;
  {
    Model model = test::small_runner_model();
    RunnerBackend backend(std::make_shared<RunnerClient>(options), {});
    ASSERT_TRUE(backend.prepare(model, {}).ok());
    private_dir = backend.client().private_dir();
    EXPECT_EQ(std::filesystem::status(private_dir).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
  }
  EXPECT_FALSE(std::filesystem::exists(private_dir));
  const std::string log = test::read_file(dir / "starts.log");
  const pid_t pid = std::stoi(log.substr(log.find(' ') + 1));
  EXPECT_NE(kill(pid, 0), 0) << "the runner process " << pid << " outlived its client";
}

TEST(RunnerBackend, WithoutIntermediateTensorsOnlyGraphOutputsComeBack) {
  Model model = test::small_runner_model();
  RunnerBackend backend(std::make_shared<RunnerClient>(test::fake_runner("no_intermediate")), {});
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(backend.prepare(model, prep).ok());
  EXPECT_EQ(backend.output_names().size(), 4u);
  Result<TensorMap> out = backend.run({{"x", random_tensor({2, 16}, 3)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u) << "a, b and c are left out, as tensors the engine cannot return";
  EXPECT_EQ((*out)[0].name, "y");
}

TEST(RunnerBackend, BuildFlagsTheRunnerCannotHonourAreRefused) {
  Model model = test::small_runner_model();
  RunnerBackendOptions fp16;
  fp16.build.fp16 = true;
  RunnerBackend lowering(std::make_shared<RunnerClient>(test::fake_runner("ok")), fp16);
  Status s = lowering.prepare(model, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("cannot honour --fp16"), std::string::npos) << s.message();

  RunnerBackendOptions pinned;
  pinned.build.layer_precisions = {{"c", "fp32"}};
  RunnerBackend per_layer(std::make_shared<RunnerClient>(test::fake_runner("ok")), pinned);
  s = per_layer.prepare(model, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--layer-precisions"), std::string::npos) << s.message();
}

TEST(RunnerBackend, Bfloat16TravelsAsItsBits) {
  Model model = engine::test::make_model(R"(<ir_version: 8, opset_import: ["" : 13]>
bf (bfloat16[5] x) => (bfloat16[5] y) {
  y = Identity(x)
}
)");
  Tensor x(DType::kBFloat16, {5});
  const float values[] = {1.0f, -2.5f, 3.0e38f, 1.0e-40f, 0.333f};
  for (int i = 0; i < 5; ++i) x.mutable_data<Eigen::bfloat16>()[i] = Eigen::bfloat16(values[i]);
  RunnerBackend backend(std::make_shared<RunnerClient>(test::fake_runner("ok")), {});
  ASSERT_TRUE(backend.prepare(model, {}).ok());
  Result<TensorMap> out = backend.run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_TRUE((*out)[0].tensor.same_as(x));
}

// The README's minimal runner, copied from between its markers into `dir`.
std::filesystem::path write_readme_runner(const test::TempDir& dir) {
  const std::string readme = test::read_file(std::string(VN_SOURCE_DIR) + "/README.md");
  const std::string begin = "<!-- runner-example:begin -->\n```python\n", end = "```\n<!-- runner-example:end -->";
  const size_t from = readme.find(begin), to = readme.find(end);
  EXPECT_NE(from, std::string::npos);
  EXPECT_NE(to, std::string::npos);
  if (from == std::string::npos || to == std::string::npos) return {};
  test::write_file(dir / "my_runner.py", readme.substr(from + begin.size(), to - from - begin.size()));
  return dir / "my_runner.py";
}

TEST(RunnerBackend, TheReadmeExampleRunnerWorks) {
  test::TempDir dir;
  const std::filesystem::path script = write_readme_runner(dir);
  ASSERT_FALSE(script.empty());
  RunnerOptions options = test::fake_runner("ok");
  options.command.argv = {VN_PYTHON, script.string()};
  RunnerBackend backend(std::make_shared<RunnerClient>(options), {});
  Model model = test::small_runner_model();
  PrepareOptions prep;
  prep.mark_all = true;
  ASSERT_TRUE(backend.prepare(model, prep).ok());
  const TensorMap feeds{{"x", random_tensor({2, 16}, 9)}};
  Result<TensorMap> out = backend.run(feeds);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const TensorMap expected = run_reference(model, feeds, {"a", "b", "c"});
  ASSERT_EQ(out->size(), expected.size());
  for (const NamedTensor& t : expected) {
    ASSERT_NE(out->find(t.name), nullptr) << t.name;
    EXPECT_LE(test::excess_error(*out->find(t.name), t.tensor, 1e-6), 1e-6) << t.name;
  }
}

TEST(RunnerBackend, VernierRunTakesACommandLineRunner) {
  test::TempDir dir;
  const std::filesystem::path script = write_readme_runner(dir);
  ASSERT_FALSE(script.empty());
  ASSERT_TRUE(save_model(test::small_runner_model(), dir / "small.onnx").ok());
  const std::string runner = std::string(VN_PYTHON) + " " + script.string();
  test::ProcessResult r = test::run_vernier(
      {"run", (dir / "small.onnx").string(), "--ref", "--engine-runner", runner, "--mark-all", "--runner-timeout", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Built the model on numpy "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numpy-runner-N1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 tensor(s) compared by name, 0 failed"), std::string::npos) << r.out;

  r = test::run_vernier({"run", (dir / "small.onnx").string(), "--ref", "--engine-runner", runner, "--runner-option",
                         "novalue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--runner-option 'novalue': expected KEY=VALUE"), std::string::npos) << r.err;
}

TEST(RunnerRegistry, NamedRunnersAreListedAndShipped) {
  const std::filesystem::path assets = std::string(VN_SOURCE_DIR) + "/assets";
  std::set<std::string> names;
  for (const NamedRunner& r : named_runners()) {
    names.insert(std::string(r.name));
    EXPECT_FALSE(r.summary.empty()) << r.name;
    Result<RunnerCommand> command = resolve_runner(std::string(r.name), assets);
    ASSERT_TRUE(command.ok()) << command.status().to_string();
    EXPECT_EQ(command->name, r.name);
    ASSERT_EQ(command->argv.size(), 2u);
    EXPECT_EQ(command->argv[0], r.interpreter);
    EXPECT_EQ(command->argv[1], (assets / "runners" / std::string(r.script)).string());
    EXPECT_TRUE(std::filesystem::is_regular_file(command->argv[1])) << command->argv[1];
  }
  EXPECT_EQ(names, (std::set<std::string>{"ort", "ort-python", "trt"}));

  Result<RunnerCommand> ort = resolve_runner("ort", assets);
  ASSERT_EQ(ort->env.size(), 1u);
  EXPECT_EQ(ort->env[0].first, "NODE_PATH");
  EXPECT_EQ(ort->env[0].second.rfind(std::string(VN_SOURCE_DIR) + "/.deps/node/node_modules", 0), 0u)
      << ort->env[0].second;
}

TEST(RunnerRegistry, AnythingElseIsACommandLineAndTyposAreCaught) {
  const std::filesystem::path assets = std::string(VN_SOURCE_DIR) + "/assets";
  Result<RunnerCommand> command = resolve_runner("python3 my_runner.py --fast", assets);
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(command->name, "runner");
  EXPECT_EQ(command->argv, (std::vector<std::string>{"/bin/sh", "-c", "python3 my_runner.py --fast"}));

  Result<RunnerCommand> typo = resolve_runner("onnxruntime", assets);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("ort, ort-python, trt"), std::string::npos) << typo.status().message();
  EXPECT_FALSE(resolve_runner("  ", assets).ok());

  Result<RunnerCommand> missing = resolve_runner("ort", "/nonexistent/assets");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("VERNIER_ASSETS"), std::string::npos);
}

}  // namespace
}  // namespace vn
