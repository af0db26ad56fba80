// SPDX-License-Identifier: Apache-2.0
#include "core/debug/builtin_check.h"

#include <chrono>

#include <fmt/format.h>

#include "core/ref/reference_backend.h"

namespace vn::debug {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "'y' max abs error 3.2 (atol 1e-05, rtol 1e-05)" for the first failing output, with a count.
std::string describe_failures(const std::vector<ResultsComparison>& comparisons) {
  size_t failed = 0, total = 0;
  const TensorComparison* first = nullptr;
  for (const ResultsComparison& c : comparisons) {
    for (const TensorComparison& t : c.tensors) {
      ++total;
      if (t.passed) continue;
      ++failed;
      if (!first) first = &t;
    }
  }
  if (!first) return fmt::format("{} output comparison(s) within tolerance", total);
  const std::string what = !first->mismatch.empty()
                               ? first->mismatch
                               : fmt::format("max abs error {:.5g}, max rel error {:.5g} (atol {:.5g}, rtol {:.5g})",
                                             first->abs_max, first->rel_max, first->tolerance.atol,
                                             first->tolerance.rtol);
  return fmt::format("{} of {} output comparison(s) fail; '{}': {}", failed, total, first->name, what);
}

}  // namespace

Result<std::vector<TensorMap>> reference_outputs(const Model& model, const std::vector<TensorMap>& feeds,
                                                 int threads, const std::atomic<bool>* cancel) {
  ref::ReferenceBackend reference;
  PrepareOptions prep;
  prep.num_threads = threads;
  VN_RETURN_IF_ERROR(reference.prepare(model, prep));
  RunOptions run;
  run.cancel = cancel;
  std::vector<TensorMap> outputs;
  outputs.reserve(feeds.size());
  for (const TensorMap& feed : feeds) {
    VN_ASSIGN_OR_RETURN(TensorMap out, reference.run(feed, run));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

Result<BuiltinCheckDetail> run_builtin_check(const Model& model, const std::vector<TensorMap>& feeds,
                                             const BuiltinCheck& check, const std::vector<TensorMap>* ref_outputs,
                                             const std::atomic<bool>* cancel) {
  const auto start = std::chrono::steady_clock::now();
  BuiltinCheckDetail detail;
  auto unresolved = [&](const Status& status, std::string_view what) -> Result<BuiltinCheckDetail> {
    if (status.code() == StatusCode::kCancelled) return status;
    detail.result.verdict = Verdict::kUnresolved;
    detail.result.reason = fmt::format("{}: {}", what, status.to_string());
    detail.result.seconds = seconds_since(start);
    return detail;
  };

  std::vector<TensorMap> computed;
  if (!ref_outputs) {
    Result<std::vector<TensorMap>> ref = reference_outputs(model, feeds, check.threads, cancel);
    if (!ref.ok()) return unresolved(ref.status(), "the reference cannot run it");
    computed = std::move(*ref);
    ref_outputs = &computed;
  }

  engine::BuildOptions build = check.engine.build;
  for (engine::FaultSpec& fault : build.faults) fault.ignore_if_absent = true;
  PrepareOptions prep;
  prep.num_threads = check.threads;
  const std::shared_ptr<eut::EngineUnderTest> under_test = check.under_test ? check.under_test : eut::builtin_engine();
  Result<std::unique_ptr<eut::Build>> built = under_test->build(model, build, prep);
  if (!built.ok()) return unresolved(built.status(), "the engine cannot build it");
  detail.plan = (*built)->plan();
  detail.tactic_replay = (*built)->tactic_replay();
  Backend* engine = &(*built)->backend();
  detail.built = true;
  RunOptions run;
  run.cancel = cancel;
  bool passed = true;
  for (size_t i = 0; i < feeds.size(); ++i) {
    Result<TensorMap> out = engine->run(feeds[i], run);
    if (!out.ok()) return unresolved(out.status(), "the engine cannot run it");
    detail.comparisons.push_back(compare_results(*out, (*ref_outputs)[i], check.compare));
    passed = passed && detail.comparisons.back().passed();
  }
  detail.result.verdict = passed ? Verdict::kGood : Verdict::kBad;
  detail.result.reason = describe_failures(detail.comparisons);
  detail.result.seconds = seconds_since(start);
  return detail;
}

}  // namespace vn::debug
