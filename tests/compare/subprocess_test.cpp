// SPDX-License-Identifier: Apache-2.0
// Child processes: exit codes, signals, time limits that kill the whole group, stragglers,
// floods of output, cancellation and quoting.
#include "core/common/subprocess.h"

#include <gtest/gtest.h>

namespace vn {
namespace {

TEST(Subprocess, CapturesBothStreamsAndTheExitCode) {
  Result<ProcessResult> r = run_shell("echo out; echo err >&2; exit 7");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->describe(), "exit code 7");
}

TEST(Subprocess, ReportsTheSignalThatKilledTheChild) {
  Result<ProcessResult> r = run_shell("kill -SEGV $$");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->signal, 11);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(Subprocess, TimeLimitKillsTheWholeGroup) {
  ProcessOptions options;
  options.timeout_s = 0.5;
  // The background sleep holds stdout open: only killing the group ends the wait.
  Result<ProcessResult> r = run_shell("sleep 30 & sleep 30", options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 10.0);
  EXPECT_EQ(r->describe(0.5), "timed out after 0.5 s");
}

TEST(Subprocess, StragglersDoNotKeepTheCallerWaiting) {
  Result<ProcessResult> r = run_shell("sleep 30 & echo done");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->out, "done\n");
  EXPECT_LT(r->seconds, 10.0);
}

TEST(Subprocess, AFloodIsReadToTheEndButKeptWithinTheCap) {
  ProcessOptions options;
  options.output_cap = 1 << 20;
  Result<ProcessResult> r = run_shell("head -c 20000000 /dev/zero | tr '\\0' x; echo END", options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->out_bytes, 20000004u);
  EXPECT_LE(r->out.size(), (size_t{1} << 20) + 100);
  EXPECT_NE(r->out.find("bytes dropped"), std::string::npos);
  EXPECT_EQ(r->out.substr(r->out.size() - 4), "END\n");
  EXPECT_EQ(r->out.substr(0, 3), "xxx");
}

TEST(Subprocess, CancellationKillsTheChild) {
  std::atomic<bool> cancel{true};
  ProcessOptions options;
  options.cancel = &cancel;
  Result<ProcessResult> r = run_shell("sleep 30", options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->describe(), "cancelled");
  EXPECT_LT(r->seconds, 10.0);
}

TEST(Subprocess, AMissingProgramIsAnError) {
  Result<ProcessResult> r = run_process({"vernier-no-such-program-xyz"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kExternalFailure);
  EXPECT_NE(r.status().message().find("vernier-no-such-program-xyz"), std::string::npos);
  EXPECT_FALSE(run_process({}).ok());
}

TEST(Subprocess, ShellQuotingSurvivesTheShell) {
  const std::string nasty = "a'b $HOME \"c\" `d` ;e\\";
  Result<ProcessResult> r = run_shell("printf %s " + shell_quote(nasty));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->out, nasty);
}

TEST(Subprocess, LastLinesKeepsTheEndOfTheOutput) {
  EXPECT_EQ(last_lines("a\nb\n\nc\nd\n", 2), "c | d");
  EXPECT_EQ(last_lines("only"), "only");
  EXPECT_EQ(last_lines(""), "");
}

}  // namespace
}  // namespace vn
