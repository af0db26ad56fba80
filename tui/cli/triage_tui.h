// SPDX-License-Identifier: Apache-2.0
// `vernier triage` on a terminal: the full-screen triage UI. Triage runs on a session job; the
// Flowchart screen shows where it is and asks each question (y, n, Enter) through the decide hook.
#pragma once

#include <atomic>

#include "core/flow/flowchart.h"
#include "core/flow/triage.h"

namespace vn::cli {

/// Walks `chart` with `config`. Full-screen unless `headless` or the terminal cannot show it
/// (not a terminal, TERM unset or dumb, a terminal curses cannot open: then a one-line note and
/// the headless walk). Headless, `observe` sees every step as it is answered; full-screen, the UI
/// shows the steps and asks the questions, and once the user quit and the terminal is restored,
/// `observe` sees the steps of the finished walk, so the transcript reads as a headless one.
/// Errors: triage's, kCancelled when the user cancelled or quit before the end. A signal (SIGINT,
/// SIGTERM, SIGHUP) that ended the UI is raised again after the terminal is restored. `cancel`
/// (optional) stops a headless walk, as triage_headless's does.
Result<flow::TriageResult> walk_triage(const flow::Flowchart& chart, flow::TriageConfig config,
                                       const flow::TriageObserver& observe, bool headless,
                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace vn::cli
