// SPDX-License-Identifier: Apache-2.0
// Runners that misbehave once (crash, exit, hang, garbage, floods, wrong or misplaced tensors,
// a wrong id): each is one clear kExternalFailure quoting the runner's stderr, and the next
// request restarts the runner and succeeds.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/backend/runner_test_util.h"

namespace vn {
namespace {

using engine::test::random_tensor;

struct Fake {
  explicit Fake(const std::string& mode, double run_timeout = 30, double load_timeout = 30) {
    RunnerOptions options = test::fake_runner(mode, dir / "misbehaved");
    options.run_timeout_s = run_timeout;
    options.load_timeout_s = load_timeout;
    client = std::make_shared<RunnerClient>(options);
    backend = std::make_unique<RunnerBackend>(client, RunnerBackendOptions{});
  }
  Status prepare() {
    PrepareOptions prep;
    prep.mark_all = true;
    return backend->prepare(model, prep);
  }
  Result<TensorMap> run(const RunOptions& options = {}) { return backend->run(feeds, options); }
  // The second run after a failure: a fresh runner, the right values.
  void expect_recovered(int starts = 2) {
    Result<TensorMap> out = run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 4u);
    EXPECT_LE(test::excess_error((*out)[0].tensor, engine::test::run_reference(model, feeds)[0].tensor, 1e-6), 1e-6);
    EXPECT_EQ(client->starts(), starts);
  }

  test::TempDir dir;
  Model model = test::small_runner_model();
  TensorMap feeds{{"x", random_tensor({2, 16}, 7)}};
  std::shared_ptr<RunnerClient> client;
  std::unique_ptr<RunnerBackend> backend;
};

void expect_failure(const Status& s, const std::string& what, const std::string& mode) {
  EXPECT_EQ(s.code(), StatusCode::kExternalFailure) << s.to_string();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  // One line, quoting the runner's log.
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("said: fake: ready (mode " + mode + ") | fake: misbehaving with " + mode), std::string::npos) << s.message();
}

struct Misbehaviour {
  const char* mode;
  const char* message;
};

TEST(RunnerMisbehaviour, EachFailureIsClearAndTheNextRunRestartsTheRunner) {
  const Misbehaviour cases[] = {
      {"crash_run", "run: closed its stdout before replying (killed by signal 11 (SIGSEGV))"},
      {"exit_run", "run: closed its stdout before replying (exit code 3)"},
      {"garbage_run", "run: replied with a line that is not a JSON object: this is not json"},
      {"flood_stdout_run", "run: replied with a line longer than 16777216 bytes"},
      {"bad_id_run", "run: replied with id 424242 to request"},
      {"missing_tensor_run", "run: did not return output 'c'"},
      {"wrong_dtype_run", "run: returned output 'y' as float64 but its load reply declared float32"},
      {"wrong_shape_run", "run: returned output 'y' with shape"},
      {"outside_path_run", "is outside the private folder"},
      {"symlink_run", "is outside the private folder"},
  };
  for (const Misbehaviour& c : cases) {
    SCOPED_TRACE(c.mode);
    Fake f(c.mode);
    ASSERT_TRUE(f.prepare().ok());
    Result<TensorMap> out = f.run();
    ASSERT_FALSE(out.ok());
    expect_failure(out.status(), c.message, c.mode);
    EXPECT_NE(out.status().message().find("runner 'fake' run"), std::string::npos) << out.status().message();
    f.expect_recovered();
  }
}

TEST(RunnerMisbehaviour, ACrashAtLoadIsReportedAndTheNextLoadSucceeds) {
  Fake f("crash_load");
  Status s = f.prepare();
  expect_failure(s, "runner 'fake' load: closed its stdout before replying (killed by signal 11 (SIGSEGV))",
                 "crash_load");
  ASSERT_TRUE(f.prepare().ok());
  f.expect_recovered();
}

TEST(RunnerMisbehaviour, ALoadReplyWithoutAnAskedTensorIsRefused) {
  Fake f("hide_output_load");
  expect_failure(f.prepare(), "runner 'fake' load: does not return graph output 'c'", "hide_output_load");
  ASSERT_TRUE(f.prepare().ok());
  f.expect_recovered();
}

TEST(RunnerMisbehaviour, HangsAreKilledAtTheTimeLimits) {
  {
    Fake f("hang_run", /*run_timeout=*/0.5);
    ASSERT_TRUE(f.prepare().ok());
    const auto start = std::chrono::steady_clock::now();
    Result<TensorMap> out = f.run();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(out.ok());
    expect_failure(out.status(), "run: no reply within 0.5 s (--runner-timeout)", "hang_run");
    EXPECT_LT(seconds, 10.0);
    f.expect_recovered();
  }
  {
    Fake f("hang_load", 30, /*load_timeout=*/0.5);
    expect_failure(f.prepare(), "load: no reply within 0.5 s (--runner-load-timeout)", "hang_load");
    ASSERT_TRUE(f.prepare().ok());
    f.expect_recovered();
  }
}

TEST(RunnerMisbehaviour, AnErrorReplyFailsTheRequestOnly) {
  Fake f("error_run");
  ASSERT_TRUE(f.prepare().ok());
  Result<TensorMap> out = f.run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kExternalFailure);
  EXPECT_NE(out.status().message().find("runner 'fake' run failed: fake: no kernel for this layer"), std::string::npos)
      << out.status().message();
  f.expect_recovered(/*starts=*/1);
}

TEST(RunnerMisbehaviour, AStderrFloodIsDrainedAndOnlyItsEndKept) {
  Fake f("flood_stderr_run");
  ASSERT_TRUE(f.prepare().ok());
  for (int i = 0; i < 2; ++i) {
    Result<TensorMap> out = f.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
  }
  EXPECT_LE(f.client->stderr_tail().size(), f.client->options().stderr_cap);
  EXPECT_NE(f.client->stderr_tail().find("fake: last words of the flood"), std::string::npos);
  EXPECT_EQ(f.client->starts(), 1);
}

TEST(RunnerMisbehaviour, ARunnerOfAnotherProtocolIsRefusedAtHello) {
  Fake f("protocol2");
  Status s = f.prepare();
  EXPECT_EQ(s.code(), StatusCode::kExternalFailure);
  EXPECT_NE(s.message().find("hello failed: protocol 1 requested; this runner speaks 2"), std::string::npos)
      << s.message();
}

TEST(RunnerMisbehaviour, CancellingARunKillsTheRunnerAndTheNextRunRestartsIt) {
  Fake f("hang_run");
  ASSERT_TRUE(f.prepare().ok());
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  RunOptions options;
  options.cancel = &cancel;
  Result<TensorMap> out = f.run(options);
  canceller.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
  f.expect_recovered();
}

TEST(RunnerMisbehaviour, AProgramThatCannotStartSaysSo) {
  RunnerOptions options = test::fake_runner("ok");
  options.command.argv = {"/nonexistent/runner"};
  options.command.spec = "/nonexistent/runner";
  RunnerBackend backend(std::make_shared<RunnerClient>(options), {});
  Model model = test::small_runner_model();
  Status s = backend.prepare(model, {});
  EXPECT_EQ(s.code(), StatusCode::kExternalFailure);
  EXPECT_NE(s.message().find("cannot start '/nonexistent/runner'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace vn
