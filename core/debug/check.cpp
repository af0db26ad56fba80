// SPDX-License-Identifier: Apache-2.0
#include "core/debug/check.h"

#include <algorithm>
#include <fmt/format.h>

namespace vn::debug {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kGood:
      return "good";
    case Verdict::kBad:
      return "bad";
    case Verdict::kUnresolved:
      return "unresolved";
  }
  return "unresolved";
}

Result<ExternalChecker> ExternalChecker::create(ExternalCheck check) {
  VN_RETURN_IF_NOT(!check.argv.empty() && !check.argv[0].empty(), StatusCode::kInvalidArgument,
                   "--check: no command given");
  VN_RETURN_IF_NOT(check.fail_codes.empty() || check.ignore_fail_codes.empty(), StatusCode::kInvalidArgument,
                   "--fail-code and --ignore-fail-code cannot be combined");
  ExternalChecker checker;
  for (const std::string& pattern : check.fail_regex) {
    try {
      checker.regexes_.emplace_back(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return make_error(StatusCode::kInvalidArgument, "--fail-regex '{}': not a valid regex ({})", pattern, e.what());
    }
  }
  checker.check_ = std::move(check);
  return checker;
}

namespace {

// std::regex matches recursively (hundreds of bytes of stack per character for patterns like
// "(a|b)*"), so one search over megabytes of output could exhaust the stack. Searching line by line,
// in overlapping pieces of bounded length, keeps every search small; a match longer than the overlap
// or spanning lines is not expected of a check's log.
constexpr size_t kPiece = 2048;
constexpr size_t kOverlap = 512;

bool search_lines(const std::regex& regex, std::string_view text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (size_t piece = start;; piece += kPiece - kOverlap) {
      const char* first = text.data() + piece;
      const char* last = text.data() + std::min(end, piece + kPiece);
      if (std::regex_search(first, last, regex)) return true;
      if (piece + kPiece >= end) break;
    }
    start = end + 1;
  }
  return false;
}

bool contains(const std::vector<int>& codes, int code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

}  // namespace

// Polygraphy's rules (iterative_debug_args.py), with crashes and timeouts set apart:
// - a timeout, a death by signal, or an exit code 129..192 (a shell reporting its child's signal)
//   that --fail-code does not list is a crash: unresolved, or bad with crash_is_failure;
// - an exit code in --ignore-fail-code is good, whatever the output says;
// - with --fail-code: bad when the code is listed and (no regex given, or one matches);
// - without --fail-code: with regexes, a match alone decides (a non-zero exit without a match is
//   good); without regexes, any non-zero exit is bad.
CheckResult ExternalChecker::classify(const ProcessResult& process) const {
  CheckResult result;
  result.seconds = process.seconds;
  result.process = process;
  const bool shell_signal = process.exit_code > 128 && process.exit_code <= 192 &&
                            !contains(check_.fail_codes, process.exit_code);
  if (process.timed_out || process.cancelled || process.signal != 0 || shell_signal) {
    result.verdict = check_.crash_is_failure && !process.cancelled ? Verdict::kBad : Verdict::kUnresolved;
    result.reason = process.describe(check_.timeout_s);
    return result;
  }
  const int code = process.exit_code;
  if (contains(check_.ignore_fail_codes, code)) {
    result.verdict = Verdict::kGood;
    result.reason = fmt::format("exit code {} (ignored)", code);
    return result;
  }
  std::string matched;
  for (size_t i = 0; i < regexes_.size() && matched.empty(); ++i) {
    if (search_lines(regexes_[i], process.out) || search_lines(regexes_[i], process.err)) {
      matched = check_.fail_regex[i];
    }
  }
  if (!check_.fail_codes.empty()) {
    const bool listed = contains(check_.fail_codes, code);
    const bool bad = listed && (regexes_.empty() || !matched.empty());
    result.verdict = bad ? Verdict::kBad : Verdict::kGood;
    result.reason = matched.empty() ? fmt::format("exit code {}", code)
                                    : fmt::format("exit code {}, matched '{}'", code, matched);
    return result;
  }
  if (!regexes_.empty()) {
    result.verdict = matched.empty() ? Verdict::kGood : Verdict::kBad;
    result.reason = matched.empty() ? fmt::format("exit code {}, no fail regex matched", code)
                                    : fmt::format("exit code {}, matched '{}'", code, matched);
    return result;
  }
  result.verdict = code == 0 ? Verdict::kGood : Verdict::kBad;
  result.reason = fmt::format("exit code {}", code);
  return result;
}

Result<CheckResult> ExternalChecker::run(const std::atomic<bool>* cancel) const {
  ProcessOptions options;
  options.timeout_s = check_.timeout_s;
  options.cancel = cancel;
  options.cwd = check_.cwd;
  VN_ASSIGN_OR_RETURN(ProcessResult process, run_process(check_.argv, options));
  return classify(process);
}

std::optional<std::vector<std::string>> take_check_command(std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), "--check");
  if (it == args.end()) return std::nullopt;
  std::vector<std::string> command(it + 1, args.end());
  args.erase(it, args.end());
  return command;
}

}  // namespace vn::debug
