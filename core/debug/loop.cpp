// SPDX-License-Identifier: Apache-2.0
#include "core/debug/loop.h"

#include <nlohmann/json.hpp>
#include <system_error>

#include "core/ir/mapped_file.h"

namespace vn::debug {

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
