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

// "1 of 2 output comparison(s) fail; 'y': max abs error 3.2, ..." for the first failing output,
// or "2 output comparison(s) within tolerance; the closest to failing, 'y': ..." when all pass;
// then the first thing the tolerance cannot tell.
std::string describe(const std::vector<OutputNumbers>& outputs) {
  size_t failed = 0;
  for (const OutputNumbers& o : outputs) failed += o.passed ? 0 : 1;
  const OutputNumbers* worst = worst_output(outputs);
  std::string text = failed > 0 ? fmt::format("{} of {} output comparison(s) fail; '{}': {}", failed, outputs.size(),
                                              worst->name, numbers_text(*worst))
                                : fmt::format("{} output comparison(s) within tolerance", outputs.size());
  if (failed == 0 && worst != nullptr)
    text += fmt::format("; the closest to failing, '{}': {}", worst->name, numbers_text(*worst));
  for (const OutputNumbers& o : outputs) {
    if (o.reach.note.empty()) continue;
    text += "; " + o.reach.note;
    break;
  }
  return text;
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
  detail.outputs = output_numbers(detail.comparisons, *ref_outputs, check.compare, check.origin,
                                  engine::loosest_allowed(build.allowed));
  detail.result.reason = describe(detail.outputs);
  detail.result.seconds = seconds_since(start);
  return detail;
}

}  // namespace vn::debug
