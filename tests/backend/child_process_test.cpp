// SPDX-License-Identifier: Apache-2.0
// The persistent child process under runners: lines both ways, time limits, a child that dies,
// floods or never ends a line, environment, cancellation, and the whole group killed.
#include "core/common/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace vn {
namespace {

std::unique_ptr<ChildProcess> shell(const std::string& script, ChildOptions options = {}) {
  Result<std::unique_ptr<ChildProcess>> child = ChildProcess::spawn({"/bin/sh", "-c", script}, options);
  EXPECT_TRUE(child.ok()) << child.status().to_string();
  return child.ok() ? std::move(*child) : nullptr;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether `pid` names a live process (not one gone or a zombie).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

TEST(ChildProcess, ExchangesLinesAndKeepsTheLog) {
  auto child = shell("echo hello; echo 'a log line' >&2; read x; echo \"got $x\"; read y || exit 0");
  std::string line;
  ASSERT_EQ(child->read_line(line, 10), LineStatus::kLine);
  EXPECT_EQ(line, "hello");
  ASSERT_TRUE(child->write_line("abc", 10).ok());
  ASSERT_EQ(child->read_line(line, 10), LineStatus::kLine);
  EXPECT_EQ(line, "got abc");
  EXPECT_NE(child->stderr_tail().find("a log line"), std::string::npos);
  child->close_stdin();
  EXPECT_TRUE(child->wait_exit(10));
  EXPECT_EQ(child->ending().describe(), "exit code 0");
}

TEST(ChildProcess, ASilentChildTimesOut) {
  auto child = shell("sleep 30");
  std::string line;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(child->read_line(line, 0.3), LineStatus::kTimeout);
  EXPECT_GE(seconds_since(start), 0.3);
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(ChildProcess, ADeadChildSaysHowItEndedAndItsLastWords) {
  auto child = shell("echo 'dying now' >&2; exit 3");
  std::string line;
  EXPECT_EQ(child->read_line(line, 10), LineStatus::kClosed);
  ASSERT_TRUE(child->wait_exit(5));
  EXPECT_EQ(child->ending().describe(), "exit code 3");
  EXPECT_NE(child->stderr_tail().find("dying now"), std::string::npos);

  auto crashed = shell("kill -SEGV $$");
  EXPECT_EQ(crashed->read_line(line, 10), LineStatus::kClosed);
  ASSERT_TRUE(crashed->wait_exit(5));
  EXPECT_EQ(crashed->ending().describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(ChildProcess, AnEndlessLineIsCutAtTheCap) {
  ChildOptions options;
  options.max_line_bytes = 1024;
  auto child = shell("head -c 100000 /dev/zero | tr '\\0' x; sleep 30", options);
  std::string line;
  EXPECT_EQ(child->read_line(line, 10), LineStatus::kTooLong);
}

TEST(ChildProcess, AStderrFloodNeverBlocksAndOnlyItsTailIsKept) {
  ChildOptions options;
  options.stderr_cap = 4096;
  // 50 MB of log before the line: the child blocks on a full pipe unless stderr is drained.
  auto child = shell("head -c 50000000 /dev/zero | tr '\\0' e >&2; echo 'last words' >&2; echo done", options);
  std::string line;
  ASSERT_EQ(child->read_line(line, 60), LineStatus::kLine);
  EXPECT_EQ(line, "done");
  child->close_stdin();
  child->wait_exit(5);
  EXPECT_LE(child->stderr_tail().size(), 4096u);
  EXPECT_NE(child->stderr_tail().find("last words"), std::string::npos);
}

TEST(ChildProcess, WritingToADeadChildIsAnErrorNotSigpipe) {
  auto child = shell("exit 0");
  ASSERT_TRUE(child->wait_exit(5));
  // A request big enough to need more than one write: each meets the closed pipe.
  Status s = child->write_line(std::string(1 << 20, 'r'), 5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kExternalFailure);
  EXPECT_NE(s.message().find("closed its stdin"), std::string::npos) << s.message();
}

TEST(ChildProcess, TheEnvironmentIsPassedAndCancellationStopsTheWait) {
  ChildOptions options;
  options.env = {{"VN_RUNNER_TEST", "forty two"}, {"HOME", "/nowhere"}};
  auto child = shell("echo \"$VN_RUNNER_TEST $HOME\"; sleep 30", options);
  std::string line;
  ASSERT_EQ(child->read_line(line, 10), LineStatus::kLine);
  EXPECT_EQ(line, "forty two /nowhere");
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(child->read_line(line, 0, &cancel), LineStatus::kCancelled);
  canceller.join();
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(ChildProcess, KillingTheGroupEndsTheChildrenItStarted) {
  auto child = shell("sleep 100 & echo $!; wait");
  std::string line;
  ASSERT_EQ(child->read_line(line, 10), LineStatus::kLine);
  const pid_t grandchild = std::stoi(line);
  EXPECT_TRUE(alive(grandchild));
  child->kill_group();
  EXPECT_TRUE(child->reaped());
  const auto start = std::chrono::steady_clock::now();
  while (alive(grandchild) && seconds_since(start) < 5.0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(grandchild));
}

TEST(ChildProcess, AMissingProgramCannotStart) {
  Result<std::unique_ptr<ChildProcess>> child = ChildProcess::spawn({"/nonexistent/vernier-runner"}, {});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), StatusCode::kExternalFailure);
  EXPECT_NE(child.status().message().find("cannot start"), std::string::npos);
}

}  // namespace
}  // namespace vn
