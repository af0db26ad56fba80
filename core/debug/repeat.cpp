// SPDX-License-Identifier: Apache-2.0
#include "core/debug/repeat.h"

#include <nlohmann/json.hpp>
#include <system_error>

#include "core/ir/mapped_file.h"

namespace vn::debug {

Result<Until> Until::parse(const std::string& text) {
  Until until;
  if (text == "good") {
    until.kind = Kind::kGood;
  } else if (text == "bad") {
    until.kind = Kind::kBad;
  } else {
    size_t used = 0;
    int64_t n = 0;
    try {
      n = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;  // std::stoll throws on non-numbers and overflow; both are the error below
    }
    VN_RETURN_IF_NOT(used == text.size() && n > 0, StatusCode::kInvalidArgument,
                     "--until '{}': expected good, bad or a positive number of iterations", text);
    until.count = n;
  }
  return until;
}

bool Until::done(int64_t index, Verdict verdict) const {
  switch (kind) {
    case Kind::kCount:
      return index + 1 >= count;
    case Kind::kGood:
      return verdict == Verdict::kGood;
    case Kind::kBad:
      return verdict == Verdict::kBad;
  }
  return true;
}

double LoopSummary::pass_rate() const {
  return iterations == 0 ? 0.0 : 100.0 * static_cast<double>(passed) / static_cast<double>(iterations);
}

Result<LoopSummary> run_iterations(const LoopOptions& options,
                                   const std::function<Result<CheckResult>(int64_t index)>& check) {
  VN_CHECK(options.done != nullptr, "a loop needs a stopping rule");
  LoopSummary summary;
  for (int64_t index = 0; index < options.max_iterations; ++index) {
    if (options.cancel && options.cancel->load()) return make_error(StatusCode::kCancelled, "cancelled");
    if (options.on_start) options.on_start(index);
    if (!options.iteration_file.empty()) {
      const nlohmann::json info = {{"iteration", index}};
      VN_RETURN_IF_ERROR(file_write_atomic(options.iteration_file, info.dump() + "\n"));
    }
    Result<CheckResult> result = check(index);
    if (!options.iteration_file.empty()) {
      std::error_code ec;
      std::filesystem::remove(options.iteration_file, ec);  // a check may have removed it already
    }
    if (!result.ok()) return result.status();
    IterationOutcome outcome{index, std::move(*result), {}};
    if (options.sorter) {
      VN_ASSIGN_OR_RETURN(outcome.sorted, options.sorter->sort(index, outcome.result.verdict));
    }
    ++summary.iterations;
    switch (outcome.result.verdict) {
      case Verdict::kGood:
        ++summary.passed;
        break;
      case Verdict::kBad:
        ++summary.failed;
        break;
      case Verdict::kUnresolved:
        ++summary.unresolved;
        break;
    }
    if (options.on_finish) options.on_finish(outcome);
    if (options.done(index, outcome.result.verdict)) break;
  }
  return summary;
}

}  // namespace vn::debug
