// SPDX-License-Identifier: Apache-2.0
// `vernier debug reduce` on the command line: the three modes with the built-in check, resuming
// from a replay, usage errors, and the interactive prompt driven through a pseudo-terminal with
// scripted good/bad answers (undo and end of input included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>

#include "core/debug/replay.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;

const std::string kDemo = vn::test::demo_model();
const std::string kVernier = std::string(VN_BINARY_DIR) + "/tui/vernier";
const std::vector<std::string> kBuiltin = {"--builtin-check", "--deterministic", "--no-progress", "--inject-fault",
                                           "layer=conv2,kind=scale,factor=1.5"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The "N of M node(s) kept: ..." line of a finished reduction.
std::string kept_line(const std::string& out) {
  std::smatch m;
  const std::regex re(R"(node\(s\) kept: (.*))");
  return std::regex_search(out, m, re) ? m[1].str() : "";
}

TEST(CliReduce, EveryModeIsolatesTheFaultyNode) {
  for (const std::string mode : {"bisect", "linear", "ddmin"}) {
    TempDir dir;
    const auto r = run_vernier(with({"debug", "reduce", kDemo, "-o", "min.onnx", "--mode", mode}, kBuiltin), dir.path());
    ASSERT_EQ(r.exit_code, 0) << mode << "\n" << r.out << r.err;
    EXPECT_THAT(kept_line(r.out), HasSubstr("1 node(s): conv2 (Conv)")) << mode << "\n" << r.out;
    // The result is a valid model (inspect loads it through the ONNX checker) holding conv2 alone.
    const auto inspect = run_vernier({"inspect", "model", "min.onnx"}, dir.path());
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_THAT(inspect.out, HasSubstr("---- 1 Node(s) ----"));
    EXPECT_THAT(inspect.out, HasSubstr("conv2 [Op: Conv]"));
    EXPECT_TRUE(std::filesystem::exists(dir / "vernier_debug_replay.json"));
    EXPECT_FALSE(std::filesystem::exists(dir / "vernier_debug_replay_skip_current.json"));
  }
}

TEST(CliReduce, ResumesFromItsReplayWithoutCheckingAgain) {
  TempDir dir;
  const auto first = run_vernier(with({"debug", "reduce", kDemo, "-o", "a.onnx", "--mode", "bisect"}, kBuiltin), dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto replay = debug::DebugReplay::load(dir / "vernier_debug_replay.json");
  ASSERT_TRUE(replay.ok());
  EXPECT_GT(replay->size(), 0u);
  const auto again = run_vernier(with({"debug", "reduce", kDemo, "-o", "b.onnx", "--mode", "bisect",
                                       "--load-debug-replay", "vernier_debug_replay.json"},
                                      kBuiltin),
                                 dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("Finished 0 check(s)"));
  EXPECT_EQ(kept_line(again.out), kept_line(first.out));
  EXPECT_EQ(test::read_file(dir / "a.onnx"), test::read_file(dir / "b.onnx"));
}

TEST(CliReduce, ExternalCheckWithFailCode) {
  TempDir dir;
  const auto r = run_vernier({"debug", "reduce", kDemo, "-o", "min.onnx", "--mode", "ddmin", "--no-progress",
                              "--fail-code", "1", "--check", kVernier, "run", "vernier_debug.onnx", "--ref", "--engine",
                              "--deterministic", "--load-inputs", "vernier_debug_inputs.json", "--inject-fault",
                              "layer=relu1,kind=offset,magnitude=0.5,missing=ignore"},
                             dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(kept_line(r.out), HasSubstr("1 node(s): relu1 (Relu)")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "vernier_debug.onnx"));  // removed after every iteration
}

TEST(CliReduce, UsageErrorsExitTwoWithOneLine) {
  TempDir dir;
  auto expect_error = [&](const std::vector<std::string>& a, const std::string& text) {
    const auto r = run_vernier(a, dir.path());
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(text));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_error({"debug", "reduce", kDemo, "-o", "m.onnx", "--mode", "quick", "--builtin-check"}, "--mode 'quick'");
  expect_error({"debug", "reduce", kDemo, "--builtin-check"}, "-o/--output");
  expect_error({"run", kDemo, "--ref", "--check", "true"}, "--check is not an option of 'run'");
  expect_error({"debug", "reduce", kDemo, "-o", "m.onnx", "--fail-regex", "(", "--check", "true"}, "--fail-regex '('");
  // Without the fault nothing fails: the check is wrong, not the model.
  expect_error({"debug", "reduce", kDemo, "-o", "m.onnx", "--builtin-check", "--deterministic", "--no-progress"},
               "no candidate failed");
  test::write_file(dir / "vernier_debug.onnx", "mine");
  expect_error({"debug", "reduce", kDemo, "-o", "m.onnx", "--check", "true"}, "already exists");
  EXPECT_EQ(test::read_file(dir / "vernier_debug.onnx"), "mine");
}

// Runs `vernier args...` on a pseudo-terminal in `cwd`. Every time the good/bad prompt appears,
// `answer` gets the candidate line printed before it and returns what to type ("" closes input).
struct PtyRun {
  int exit_code = -1;
  std::string output;
  int prompts = 0;
};

PtyRun run_on_pty(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                  const std::function<std::string(const std::string& candidate, int prompt)>& answer) {
  PtyRun run;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kVernier.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    setenv("TERM", "xterm", 1);
    execv(kVernier.c_str(), argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t scanned = 0;
  bool closed = false;
  for (;;) {
    pollfd pfd{master, POLLIN, 0};
    if (poll(&pfd, 1, 200) > 0) {
      char buffer[4096];
      const ssize_t n = read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // EIO: the child closed the terminal
      run.output.append(buffer, static_cast<size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      break;
    }
    const size_t prompt = run.output.find("Does it fail?", scanned);
    if (prompt == std::string::npos || closed) continue;
    scanned = prompt + 1;
    const size_t line = run.output.rfind("Candidate ", prompt);
    const std::string candidate = line == std::string::npos ? "" : run.output.substr(line, prompt - line);
    const std::string reply = answer(candidate, run.prompts++);
    if (reply.empty()) {
      const char eot = 4;  // Ctrl-D: end of input
      EXPECT_EQ(write(master, &eot, 1), 1);
      closed = true;
    } else {
      const std::string typed = reply + "\r";
      EXPECT_EQ(write(master, typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// The user's judgement: a candidate fails when it holds the node with the planted fault.
std::string judge(const std::string& candidate) { return candidate.find("conv2 (Conv)") != std::string::npos ? "bad" : "good"; }

TEST(CliReduce, InteractiveAnswersReachTheAutomaticResult) {
  for (const std::string mode : {"bisect", "ddmin"}) {
    TempDir dir;
    const auto automatic =
        run_vernier(with({"debug", "reduce", kDemo, "-o", "auto.onnx", "--mode", mode}, kBuiltin), dir.path());
    ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
    // One wrong answer, undone, on the way.
    bool erred = false, undone = false;
    const PtyRun run = run_on_pty({"debug", "reduce", kDemo, "-o", "asked.onnx", "--mode", mode, "--no-progress"},
                                  dir.path(), [&](const std::string& candidate, int prompt) -> std::string {
                                    if (prompt == 1 && !erred) {
                                      erred = true;
                                      return judge(candidate) == "bad" ? "good" : "bad";
                                    }
                                    if (erred && !undone) {
                                      undone = true;
                                      return "u";
                                    }
                                    return judge(candidate);
                                  });
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(undone);
    EXPECT_THAT(run.output, HasSubstr("Undid iteration"));
    EXPECT_EQ(kept_line(run.output).substr(0, kept_line(automatic.out).size()), kept_line(automatic.out)) << run.output;
    EXPECT_EQ(test::read_file(dir / "asked.onnx"), test::read_file(dir / "auto.onnx"));
  }
}

TEST(CliReduce, EndOfInputSavesTheAnswersForAResume) {
  TempDir dir;
  const std::vector<std::string> cmd = {"debug", "reduce", kDemo, "-o", "asked.onnx", "--mode", "ddmin", "--no-progress"};
  const PtyRun first = run_on_pty(cmd, dir.path(), [&](const std::string& candidate, int prompt) -> std::string {
    return prompt < 2 ? judge(candidate) : "";
  });
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("resume with --load-debug-replay"));
  EXPECT_FALSE(std::filesystem::exists(dir / "asked.onnx"));
  auto saved = debug::DebugReplay::load(dir / "vernier_debug_replay.json");
  ASSERT_TRUE(saved.ok());
  EXPECT_EQ(saved->size(), 2u);
  const PtyRun second = run_on_pty(with(cmd, {"--load-debug-replay", "vernier_debug_replay.json"}), dir.path(),
                                   [&](const std::string& candidate, int) { return judge(candidate); });
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(kept_line(second.output), HasSubstr("1 node(s): conv2 (Conv)")) << second.output;
  EXPECT_EQ(first.prompts, 3);  // two answers, then end of input at the third prompt
  // The two saved answers drive the search again without being asked.
  size_t replayed = 0;
  for (size_t at = second.output.find("from replay"); at != std::string::npos; at = second.output.find("from replay", at + 1)) ++replayed;
  EXPECT_EQ(replayed, 2u) << second.output;
}

}  // namespace
}  // namespace vn
