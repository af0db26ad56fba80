// SPDX-License-Identifier: Apache-2.0
// The Flowchart screen of `vernier triage`: where the walk is in the chart, the path so far with
// what each step cost, the evidence the current question's probe gathered, the proposed answer and
// the y/n/Enter prompt; at the end the outcome, the culprit and the bug-report bundle.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/flow/flowchart.h"
#include "core/flow/triage.h"
#include "tui/view.h"
#include "tui/widgets/prompt.h"

namespace vn::views {

/// Where a triage stands.
enum class TriagePhase : uint8_t {
  kProbing,    ///< the probe of `current` runs
  kAsking,     ///< `current` is a question whose proposed answer waits for the user
  kDone,       ///< the walk ended (outcome, culprit, bundle)
  kFailed,     ///< a probe failed (`error`)
  kCancelled,  ///< the user cancelled
};

/// What the Flowchart screen shows: plain data, filled by the triage's observer and decide hook.
struct FlowchartModel {
  std::shared_ptr<const flow::Flowchart> chart;
  std::vector<flow::TriageStep> path;  ///< the nodes answered so far, in order
  std::string current;                 ///< the node probed or asked now, or the end reached
  TriagePhase phase = TriagePhase::kProbing;
  std::optional<flow::TriageStep> proposed;  ///< the probe's answer waiting for the user (kAsking)
  std::chrono::steady_clock::time_point started{};  ///< when the current probe started
  std::string outcome;  ///< kDone: "localized", "no_bug", "no_failure", "not_localized"
  std::string culprit;
  std::string bundle;   ///< the bug-report bundle's folder, when one was written
  std::string error;    ///< kFailed, kCancelled: what happened
  /// The steps the last undo took off the path, oldest first (the first is the question asked
  /// again); empty once the question is answered.
  std::vector<flow::TriageStep> undone;
  /// Counts the questions put (kAsking), so that a question asked again opens its prompt anew.
  int64_t asked = 0;
};

/// What an evidence line cites: a layer (opened as its row on the Layers screen) or a node (on the
/// Graph screen).
struct EvidenceLink {
  enum class Kind : uint8_t { kLayer, kNode };
  Kind kind = Kind::kLayer;
  std::string name;
  bool operator==(const EvidenceLink&) const = default;
};

/// The link of `line`, one of evidence_lines(evidence, ...), when it cites something:
/// first_culprit and layer name a layer, subgraph and minimal (a reducer's description) a node,
/// the first they list.
std::optional<EvidenceLink> evidence_link(const nlohmann::ordered_json& evidence, std::string_view line);
/// What a culprit names first: "layer 'conv2'" and "tactic T of layer 'fc'" a layer,
/// "nodes 'conv2', 'relu2'" a node.
std::optional<EvidenceLink> culprit_link(std::string_view culprit);
/// "build 3 of 5", "layer 120 of 683", "check 7 of at most 12", "check 1" (no bound known); ""
/// for a stage that is not counted. The unit at hand is done + 1, the last one once all are done.
std::string progress_counts(const flow::ProbeProgress& progress);

/// Readable "key: value" lines of a probe's evidence: scalars as they are, objects one level
/// deep ("synthetic.verdict: bad"), arrays of scalars joined, arrays of objects counted, except
/// that an array of checks ({"check": {"verdict"}}) lists its verdicts. At most `max_lines`.
std::vector<std::string> evidence_lines(const nlohmann::ordered_json& evidence, size_t max_lines);

/// The Flowchart screen. Wide areas (70 columns and more) show the chart on the left, every node
/// marked as visited (with its answer), current or not reached; its column is as wide as the
/// titles need, up to two fifths of the screen, and longer titles wrap rather than being cut.
/// Narrower areas leave the chart out. The right side shows the current node: its question (or its
/// text while a step runs), the evidence, the proposed answer and the prompt, then the path so far
/// with seconds, engine builds and checks per step. The screen's words are in the UI's language
/// (tui::tr), the chart's in its own.
///
/// While a probe runs it shows what the probe does and how far it got (the progress source's
/// counts, a bar and the estimate), and the status line the time spent so far, ticking.
///
/// Evidence lines that cite a layer or a node (evidence_link, and the culprit at the end) are
/// links: up/down select one (at the end the culprit is selected first), Enter opens it through
/// the open callback, which names the screen to show.
///
/// Keys: while a question waits, y answers yes, n answers no, Enter accepts the highlighted choice
/// (the proposal, first) unless a link is selected; left, right, y and n give the keys back to
/// the question; u undoes the last answer when the path has an answered question and the screen
/// has an undo callback (the choice "[u] undo" is offered then). x asks to cancel the triage, with
/// its own key: x again cancels, any other key goes on and does nothing else. Esc and q never
/// answer: they go to the App (q quits, asking first while the triage runs). Keys the screen does
/// not use go on to the App. After an undo the question asked again says which answers were taken
/// back.
class FlowchartView final : public tui::View {
 public:
  /// Receives the user's answer to the open question, once per question.
  using AnswerFn = std::function<void(bool yes)>;
  /// Returns a newer model when the triage moved on (called from tick()), nullopt otherwise.
  using PollFn = std::function<std::optional<FlowchartModel>()>;
  /// Cancels the triage (after the user confirmed).
  using CancelFn = std::function<void()>;
  /// Returns newer progress of the running probe (called from tick()), nullopt otherwise.
  using ProgressFn = std::function<std::optional<flow::ProbeProgress>()>;
  /// Opens what a link cites; returns the id of the screen to show, "" when it cannot.
  using OpenFn = std::function<std::string(const EvidenceLink& link)>;
  /// Takes back the last answer (u, at an open question); called once per question.
  using UndoFn = std::function<void()>;

  explicit FlowchartView(AnswerFn on_answer = {}, PollFn poll = {}, CancelFn on_cancel = {})
      : on_answer_(std::move(on_answer)), poll_(std::move(poll)), on_cancel_(std::move(on_cancel)) {}

  /// Shows `model`; a new question opens the prompt afresh with the proposal highlighted.
  void set_model(FlowchartModel model);
  /// Offers undo at the questions that follow an answered one.
  void set_undo(UndoFn on_undo) { on_undo_ = std::move(on_undo); }
  const FlowchartModel& model() const { return model_; }
  void set_progress_source(ProgressFn progress) { progress_source_ = std::move(progress); }
  void set_open(OpenFn open) { open_ = std::move(open); }
  /// The links of what is shown, and the selected one.
  const std::vector<EvidenceLink>& links() const { return links_; }
  std::optional<size_t> selected_link() const { return link_; }

  std::string_view id() const override { return "flowchart"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  void resize(tui::Rect area) override { area_ = area; }
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override;
  bool tick(std::chrono::steady_clock::time_point now) override;
  tui::KeyContext key_context() const override;
  std::string status_text() const override;
  std::string switch_target() const override { return target_; }

 private:
  bool prompt_open() const { return model_.phase == TriagePhase::kAsking && !answered_; }
  /// Whether u can take an answer back: a question on the path was answered.
  bool undoable() const;
  bool finished() const {
    return model_.phase == TriagePhase::kDone || model_.phase == TriagePhase::kFailed ||
           model_.phase == TriagePhase::kCancelled;
  }
  void draw_chart(tui::Canvas& canvas, tui::Rect area) const;
  void draw_current(tui::Canvas& canvas, tui::Rect area) const;
  void draw_path(tui::Canvas& canvas, tui::Rect area) const;
  int draw_progress(tui::Canvas& canvas, tui::Rect area, int y, int bottom) const;
  unsigned handle_link(tui::Action action);
  // The evidence lines shown for the open question, with the link each cites.
  std::vector<std::pair<std::string, std::optional<EvidenceLink>>> evidence_shown() const;
  std::optional<size_t> link_index(const EvidenceLink& link) const;

  AnswerFn on_answer_;
  PollFn poll_;
  CancelFn on_cancel_;
  UndoFn on_undo_;
  FlowchartModel model_;
  tui::Prompt prompt_;
  bool answered_ = false;
  bool confirm_cancel_ = false;
  ProgressFn progress_source_;
  OpenFn open_;
  std::optional<flow::ProbeProgress> progress_;
  std::vector<EvidenceLink> links_;
  std::optional<size_t> link_;
  std::string target_;
  std::chrono::steady_clock::time_point now_{};
  tui::Rect area_;
};

}  // namespace vn::views
