// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "tui/view.h"
#include "tui/widgets/prompt.h"
#include "views/screens/models.h"

namespace vn::views {

/// The Reduce screen of `debug reduce`: the model's node range as a bar with the current
/// candidate's nodes filled, the checks done and left, the iteration history with verdicts and
/// the candidate's nodes. In interactive mode (ReduceModel::asking) it shows the good/bad prompt:
/// g good, b bad, s skip, u undo, q quit; each answer goes to the answer callback once.
class ReduceView final : public tui::View {
 public:
  /// Receives kGood, kBad, kSkip or kUndo.
  using AnswerFn = std::function<void(tui::Action answer)>;

  /// Returns a newer model when the reduction moved on (called from tick()), nullopt otherwise.
  using PollFn = std::function<std::optional<ReduceModel>()>;

  explicit ReduceView(AnswerFn on_answer = {}, PollFn poll = {})
      : on_answer_(std::move(on_answer)), poll_(std::move(poll)) {}

  /// Shows `model`; a new question (asking) opens the prompt afresh.
  void set_model(ReduceModel model);
  const ReduceModel& model() const { return model_; }

  std::string_view id() const override { return "reduce"; }
  std::string title() const override;
  std::string description() const override;
  std::vector<tui::Action> help_actions() const override;
  void resize(tui::Rect area) override { area_ = area; }
  void draw(tui::Canvas& canvas) const override;
  unsigned handle(tui::Action action) override;
  bool tick(std::chrono::steady_clock::time_point now) override;
  tui::KeyContext key_context() const override {
    return prompt_open() ? tui::KeyContext::kPrompt : tui::KeyContext::kNormal;
  }
  std::string status_text() const override;

 private:
  bool prompt_open() const { return model_.asking && !answered_; }

  AnswerFn on_answer_;
  PollFn poll_;
  ReduceModel model_;
  tui::Prompt prompt_;
  bool answered_ = false;
  tui::Rect area_;
};

}  // namespace vn::views
