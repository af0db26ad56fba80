// SPDX-License-Identifier: Apache-2.0
#include "core/debug/check.h"

#include <gtest/gtest.h>

namespace vn::debug {
namespace {

ProcessResult exited(int code, std::string out = {}, std::string err = {}) {
  ProcessResult p;
  p.exit_code = code;
  p.out = std::move(out);
  p.err = std::move(err);
  return p;
}

struct Spec {
  std::vector<std::string> argv = {"true"};
  std::vector<std::string> fail_regex = {};
  std::vector<int> fail_codes = {};
  std::vector<int> ignore_fail_codes = {};
  double timeout_s = 0;
  bool crash_is_failure = false;
};

ExternalCheck to_check(const Spec& spec) {
  ExternalCheck check;
  check.argv = spec.argv;
  check.fail_regex = spec.fail_regex;
  check.fail_codes = spec.fail_codes;
  check.ignore_fail_codes = spec.ignore_fail_codes;
  check.timeout_s = spec.timeout_s;
  check.crash_is_failure = spec.crash_is_failure;
  return check;
}

ExternalChecker make(const Spec& spec) {
  ExternalCheck check = to_check(spec);
  auto checker = ExternalChecker::create(std::move(check));
  EXPECT_TRUE(checker.ok()) << checker.status().to_string();
  return std::move(checker).value();
}

TEST(Check, ExitCodeAloneDecidesWithoutRegexOrCodes) {
  const ExternalChecker checker = make({});
  EXPECT_EQ(checker.classify(exited(0)).verdict, Verdict::kGood);
  EXPECT_EQ(checker.classify(exited(1)).verdict, Verdict::kBad);
  EXPECT_EQ(checker.classify(exited(1)).reason, "exit code 1");
}

TEST(Check, RegexAloneDecidesWithoutFailCodes) {
  // Polygraphy's rule: a non-zero exit without a match passes, exit 0 with a match fails.
  const ExternalChecker checker = make({.fail_regex = {"Difference exceeds"}});
  EXPECT_EQ(checker.classify(exited(3, "Segfault elsewhere")).verdict, Verdict::kGood);
  EXPECT_EQ(checker.classify(exited(0, "", "x\nDifference exceeds tolerance\n")).verdict, Verdict::kBad);
  EXPECT_EQ(checker.classify(exited(0, "ok\n")).verdict, Verdict::kGood);
}

TEST(Check, FailCodesNeedBothCodeAndRegex) {
  const ExternalChecker checker = make({.fail_regex = {"FAIL"}, .fail_codes = {1}});
  EXPECT_EQ(checker.classify(exited(1, "FAIL")).verdict, Verdict::kBad);
  EXPECT_EQ(checker.classify(exited(1, "fine")).verdict, Verdict::kGood);
  EXPECT_EQ(checker.classify(exited(2, "FAIL")).verdict, Verdict::kGood);
  const ExternalChecker codes_only = make({.fail_codes = {4}});
  EXPECT_EQ(codes_only.classify(exited(4)).verdict, Verdict::kBad);
  EXPECT_EQ(codes_only.classify(exited(1)).verdict, Verdict::kGood);
}

TEST(Check, IgnoredCodesPassBeforeTheRegex) {
  const ExternalChecker checker = make({.fail_regex = {"FAIL"}, .ignore_fail_codes = {5}});
  EXPECT_EQ(checker.classify(exited(5, "FAIL")).verdict, Verdict::kGood);
  EXPECT_EQ(checker.classify(exited(0, "FAIL")).verdict, Verdict::kBad);
}

TEST(Check, CrashesAndTimeoutsAreUnresolvedUnlessAskedOtherwise) {
  const ExternalChecker checker = make({});
  ProcessResult segv;
  segv.signal = 11;
  EXPECT_EQ(checker.classify(segv).verdict, Verdict::kUnresolved);
  EXPECT_NE(checker.classify(segv).reason.find("signal 11"), std::string::npos);
  ProcessResult timeout;
  timeout.timed_out = true;
  EXPECT_EQ(checker.classify(timeout).verdict, Verdict::kUnresolved);
  // A shell reports its child's SIGSEGV as 139: a crash too, unless --fail-code lists it.
  EXPECT_EQ(checker.classify(exited(139)).verdict, Verdict::kUnresolved);
  EXPECT_EQ(make({.fail_codes = {139}}).classify(exited(139)).verdict, Verdict::kBad);
  EXPECT_EQ(make({.crash_is_failure = true}).classify(segv).verdict, Verdict::kBad);
}

TEST(Check, RunsARealCommand) {
  const ExternalChecker checker =
      make({.argv = {"sh", "-c", "echo 'max error 3.5: Difference exceeds tolerance' >&2; exit 1"},
            .fail_regex = {"Difference exceeds"}});
  auto result = checker.run();
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->verdict, Verdict::kBad);
  ASSERT_TRUE(result->process.has_value());
  EXPECT_EQ(result->process->exit_code, 1);
  const ExternalChecker slow = make({.argv = {"sleep", "5"}, .timeout_s = 0.2});
  auto timed = slow.run();
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ(timed->verdict, Verdict::kUnresolved);
  EXPECT_NE(timed->reason.find("timed out"), std::string::npos);
}

TEST(Check, RegexSearchSurvivesHugeOutput) {
  // Long lines are searched in bounded pieces, so the recursive matcher cannot exhaust the stack
  // (one search over this 64 KiB line with "(a|b)*c" would).
  const ExternalChecker checker = make({.fail_regex = {"(a|b)*c"}});
  EXPECT_EQ(checker.classify(exited(0, std::string(64 << 10, 'a'))).verdict, Verdict::kGood);
  EXPECT_EQ(checker.classify(exited(0, std::string(1000, 'a') + "c")).verdict, Verdict::kBad);
  // A flood at the output cap with an everyday regex, the match straddling two pieces.
  const ExternalChecker everyday = make({.fail_regex = {"Difference exceeds"}});
  std::string flood(4 << 20, 'x');
  EXPECT_EQ(everyday.classify(exited(0, flood)).verdict, Verdict::kGood);
  flood.replace(2048 - 5, 18, "Difference exceeds");
  EXPECT_EQ(everyday.classify(exited(0, flood)).verdict, Verdict::kBad);
}

TEST(Check, BadSetupsAreErrors) {
  EXPECT_FALSE(ExternalChecker::create(ExternalCheck{}).ok());
  EXPECT_FALSE(ExternalChecker::create(to_check({.argv = {"x"}, .fail_regex = {"("}})).ok());
  EXPECT_FALSE(ExternalChecker::create(to_check({.argv = {"x"}, .fail_codes = {1}, .ignore_fail_codes = {2}})).ok());
  auto missing = make({.argv = {"/nonexistent/vernier-check"}}).run();
  EXPECT_FALSE(missing.ok());
}

TEST(Check, TakesTheRestOfTheCommandLine) {
  std::vector<std::string> args = {"debug", "reduce", "m.onnx", "--check", "vernier", "run", "--check", "-x"};
  auto command = take_check_command(args);
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(*command, (std::vector<std::string>{"vernier", "run", "--check", "-x"}));
  EXPECT_EQ(args, (std::vector<std::string>{"debug", "reduce", "m.onnx"}));
  std::vector<std::string> none = {"run", "m.onnx"};
  EXPECT_FALSE(take_check_command(none).has_value());
}

}  // namespace
}  // namespace vn::debug
