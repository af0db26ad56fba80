// SPDX-License-Identifier: Apache-2.0
#include "core/flow/triage_run.h"

#include <chrono>
#include <system_error>

#include <fmt/format.h>

#include "core/engine/plan.h"
#include "core/ir/mapped_file.h"

namespace vn::flow {

Result<std::filesystem::path> triage_workdir(const std::filesystem::path& requested, bool may_hold_triage) {
  std::error_code ec;
  std::filesystem::path workdir = requested;
  for (int i = 1; workdir.empty(); ++i) {
    std::filesystem::path dir = i == 1 ? "vernier_triage" : fmt::format("vernier_triage_{}", i);
    if (!std::filesystem::exists(dir, ec)) workdir = dir;
  }
  VN_RETURN_IF_NOT(
      may_hold_triage || (!TriageSession::exists(workdir) && !std::filesystem::exists(workdir / "report.json", ec)),
      StatusCode::kInvalidArgument,
      "{} holds an earlier triage; continue it with --resume {}, or choose another --workdir or pass "
      "--force to start over",
      workdir.string(), workdir.string());
  return workdir;
}

Result<TriageRunResult> run_triage_session(const Flowchart& chart, TriageRunConfig config,
                                           const TriageRunHooks& hooks) {
  const std::filesystem::path workdir = config.triage.workdir;
  if (!config.resumed) {
    std::error_code ec;
    std::filesystem::remove(workdir / "report.json", ec);
    VN_ASSIGN_OR_RETURN(config.resumed, TriageSession::create(workdir, std::move(config.command),
                                                              engine::model_hash(config.triage.model)));
  }
  TriageSession& session = *config.resumed;
  config.triage.session = &session;
  if (hooks.on_start) hooks.on_start(session);

  const auto start = std::chrono::steady_clock::now();
  Result<TriageResult> walked = hooks.walk
                                    ? hooks.walk(chart, std::move(config.triage), hooks.observe)
                                    : triage_headless(chart, std::move(config.triage), hooks.observe, hooks.cancel);
  if (!walked.ok()) return walked.status();
  TriageRunResult out;
  out.result = std::move(*walked);
  out.report = workdir / "report.json";
  VN_RETURN_IF_ERROR(file_write_atomic(out.report, triage_report(out.result, chart).dump(2) + "\n"));
  for (const TriageStep& step : out.result.path) {
    out.path += fmt::format("{}{}{}", out.path.empty() ? "" : " > ", step.node,
                            step.answer ? (*step.answer ? " (yes)" : " (no)") : "");
    out.builds += step.builds;
    out.checks += step.checks;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.runs = session.run();
  out.resumed = session.resumed();
  out.failing = out.result.outcome == "localized" || out.result.outcome == "not_localized";
  return out;
}

}  // namespace vn::flow
