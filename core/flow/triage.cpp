// SPDX-License-Identifier: Apache-2.0
#include "core/flow/triage.h"

#include <chrono>

#include <fmt/format.h>

#include "core/flow/walk.h"

namespace vn::flow {
namespace {

// The path so far as a numbered Markdown list, for the bundle's report.
std::string path_markdown(const std::vector<TriageStep>& path, const Flowchart& chart) {
  std::string text;
  for (size_t i = 0; i < path.size(); ++i) {
    const FlowNode* node = chart.find(path[i].node);
    std::string answer;
    if (path[i].answer && node) answer = fmt::format(" — {}", *path[i].answer ? node->yes.label : node->no.label);
    text += fmt::format("{}. **{}**{}\n   {} ({:.2f} s, {} engine build(s), {} check(s))\n", i + 1,
                        node ? node->title : path[i].node, answer, path[i].summary, path[i].seconds, path[i].builds,
                        path[i].checks);
  }
  return text;
}

}  // namespace

Result<TriageResult> triage_headless(const Flowchart& chart, TriageConfig config, const TriageObserver& observe,
                                     const std::atomic<bool>* cancel) {
  VN_RETURN_IF_NOT(!config.synthetic_feeds.empty(), StatusCode::kInvalidArgument, "triage: no synthetic feeds");
  std::error_code ec;
  std::filesystem::create_directories(config.workdir, ec);
  VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot create the work folder: {}", config.workdir.string(),
                   ec.message());
  Walk w(config, cancel);
  w.engine = config.engine ? config.engine : eut::builtin_engine();
  VN_ASSIGN_OR_RETURN(w.capabilities, w.engine->capabilities());
  TriageResult result;
  VN_ASSIGN_OR_RETURN(result.engine, w.engine->describe());
  TriageSession* session = config.session;
  std::string saved_model_hash;
  const FlowNode* node = chart.find(chart.start);
  if (session) {
    VN_ASSIGN_OR_RETURN(node, open_session(w, *session, chart, result, observe, saved_model_hash));
    if (!node && session->ended()) {
      result.undos = session->undos();
      return result;
    }
  }
  publish_walk(w);
  // Takes back the last answered question and the steps after it (TriageConfig::decide); returns
  // the question to ask again, or null when there is none to go back to.
  auto undo_last = [&](const FlowNode& at) -> Result<const FlowNode*> {
    if (!session || session->path().size() != result.path.size()) return nullptr;
    std::optional<size_t> back;
    for (size_t i = result.path.size(); i-- > 0 && !back;) {
      const FlowNode* n = chart.find(result.path[i].node);
      if (n && n->kind == NodeKind::kQuestion && result.path[i].answer) back = i;
    }
    if (!back || session->step_walk(*back).is_null()) return nullptr;
    TriageUndo undo{at.id, {result.path.begin() + static_cast<std::ptrdiff_t>(*back), result.path.end()}};
    session->undo_to(*back);
    VN_RETURN_IF_ERROR(restore_walk(w, session->walk(), *session, saved_model_hash));
    publish_walk(w);  // the screens show the walk as it was at that question
    VN_RETURN_IF_ERROR(session->save());
    result.path.resize(*back);
    if (w.config.on_undo) w.config.on_undo(undo);
    return chart.find(session->next());
  };
  // Every node but double_check's loop back is visited at most once (an undo takes its steps off
  // the path); the guard bounds a chart edited into a longer cycle.
  while (node && result.path.size() < 4 * chart.nodes.size()) {
    if (cancel && cancel->load()) return Status(StatusCode::kCancelled, "triage cancelled");
    if (node->kind == NodeKind::kEnd) {
      result.outcome = node->outcome;
      TriageStep step{node->id, std::nullopt, node->title, nlohmann::ordered_json::object()};
      if (w.failing) {
        w.failing->compare = w.config.compare;
        w.failing->threads = w.config.threads;
        w.failing->engine = w.engine;
        w.failing->culprit = w.culprit;
        w.failing->triage_path = path_markdown(result.path, chart);
        result.bundle = w.config.workdir / "bundle";
        VN_RETURN_IF_ERROR(write_bundle(result.bundle, *w.failing));
        step.summary = fmt::format("bug-report bundle written to {}", result.bundle.string());
      }
      result.path.push_back(step);
      if (session) {
        VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
        session->record_step(step, "", std::move(walk));
        session->end(result.outcome, w.culprit, result.bundle.string());
        VN_RETURN_IF_ERROR(session->save());
      }
      if (observe) observe(step, *node);
      break;
    }
    // A reduction this step had in progress when the session stopped continues from its recorded
    // iterations, with what it had cost.
    double seconds_before = 0;
    int64_t checks_before = w.checks, builds_before = w.builds;
    w.reduce_replay = debug::DebugReplay();
    if (session && session->reduce() && session->reduce()->node == node->id) {
      const SessionReduce& reduce = *session->reduce();
      w.reduce_replay = reduce.replay();
      seconds_before = reduce.seconds;
      checks_before -= reduce.checks;
      builds_before -= reduce.builds;
    }
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    w.reduce_observer = [&](const debug::ReduceIteration& it, const debug::ReduceProgress&) -> Status {
      if (!session || it.replayed) return Status::OK();
      session->record_iteration(node->id, it, elapsed(), w.builds - builds_before, w.checks - checks_before);
      return session->save();
    };
    TriageStep step;
    // A step probed before: the question awaiting its answer when the session stopped or an undo
    // went back to it (only the decision is asked again), or a step an undo took back that the walk
    // reaches again as it was (taken from its record, with what it handed on).
    bool recorded = session && session->pending() && session->pending()->node == node->id;
    bool redone = false;
    if (!recorded && session) {
      if (std::optional<SessionRedo> redo = session->take_redo(node->id)) {
        VN_RETURN_IF_ERROR(restore_walk(w, redo->walk, *session, saved_model_hash));
        recorded = redone = true;
      }
    }
    if (recorded) {
      step = *session->pending();
      step.redone = redone;
    } else {
      Result<Answered> probed = run_probe(w, *node);
      w.reduce_observer = nullptr;
      VN_ASSIGN_OR_RETURN(Answered answered, std::move(probed));
      step = TriageStep{node->id, answered.answer, answered.summary, std::move(answered.evidence)};
      step.seconds = elapsed();
      step.checks = w.checks - checks_before;
      step.builds = w.builds - builds_before;
    }
    w.reduce_observer = nullptr;
    const bool ask = node->kind == NodeKind::kQuestion && w.outcome.empty() && w.config.decide;
    if (ask) {
      if (session) {
        if (!recorded) {
          VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
          session->set_pending(step, std::move(walk));
        }
        VN_RETURN_IF_ERROR(session->save());
      }
      Decision decision = w.config.decide(*node, step);
      const FlowNode* back = nullptr;
      // With nothing to go back to, an undo asks the same question again.
      while (decision == Decision::kUndo && !(cancel && cancel->load())) {
        VN_ASSIGN_OR_RETURN(back, undo_last(*node));
        if (back) break;
        decision = w.config.decide(*node, step);
      }
      // Cancelled while the question waited: it was not answered, and stays pending.
      if (cancel && cancel->load()) return Status(StatusCode::kCancelled, "triage cancelled");
      if (back) {
        node = back;
        continue;
      }
      const bool chosen = decision == Decision::kYes;
      step.overridden = chosen != step.answer.value_or(chosen);
      step.answer = chosen;
    }
    step.resumed = false;
    const FlowNode* next = nullptr;
    if (w.outcome.empty()) {
      next = chart.find(node->kind == NodeKind::kStep ? node->next : (*step.answer ? node->yes.next : node->no.next));
    }
    result.path.push_back(step);
    if (session) {
      VN_ASSIGN_OR_RETURN(nlohmann::ordered_json walk, walk_json(w, *session, saved_model_hash));
      session->record_step(step, next ? next->id : "", std::move(walk));
      if (!w.outcome.empty()) session->end(w.outcome, w.culprit, "");
      VN_RETURN_IF_ERROR(session->save());
    }
    if (observe) observe(step, *node);
    if (!w.outcome.empty()) {
      result.outcome = w.outcome;
      break;
    }
    node = next;
  }
  result.culprit = w.culprit;
  if (session) result.undos = session->undos();
  return result;
}

nlohmann::ordered_json triage_report(const TriageResult& result, const Flowchart& chart) {
  nlohmann::ordered_json report;
  report["outcome"] = result.outcome;
  report["culprit"] = result.culprit;
  report["engine"] = result.engine;
  report["bundle"] = result.bundle.string();
  for (const TriageStep& step : result.path) {
    const FlowNode* node = chart.find(step.node);
    nlohmann::ordered_json entry;
    entry["node"] = step.node;
    entry["title"] = node ? node->title : "";
    if (step.answer) entry["answer"] = *step.answer ? "yes" : "no";
    if (step.overridden) entry["overridden"] = true;
    if (step.redone) entry["redone"] = true;
    entry["summary"] = step.summary;
    entry["seconds"] = step.seconds;
    entry["engine_builds"] = step.builds;
    entry["checks"] = step.checks;
    entry["evidence"] = step.evidence;
    report["path"].push_back(std::move(entry));
  }
  if (!result.undos.empty()) report["undos"] = result.undos;
  return report;
}

}  // namespace vn::flow
