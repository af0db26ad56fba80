// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tui/actions.h"
#include "tui/canvas.h"

namespace vn::tui {

/// One answer of a Prompt: the action that picks it, its label and the key hint shown before it.
struct PromptChoice {
  Action action = Action::kNone;
  std::string label;
  /// Shown as "[key] label"; empty shows the label alone.
  std::string key;
};

/// A modal question with a row of choices, e.g. the good/bad/skip/undo prompt of a bisection or a
/// yes/no confirmation. The owner shows it while result() is empty and reports
/// KeyContext::kPrompt, so that prompt keys (g, b, s, u, y, n) resolve to prompt actions.
///
/// Handles: a choice's own action picks it; left/right and next/prev pane move the highlight;
/// accept (Enter) picks the highlighted choice; back (Esc, q) dismisses the prompt, which
/// result() reports as Action::kBack.
class Prompt {
 public:
  /// A prompt with no question and no choice.
  Prompt() = default;
  /// A prompt for `question` with `choices`; `default_choice` is highlighted first (clamped).
  Prompt(std::string question, std::vector<PromptChoice> choices, size_t default_choice = 0);

  /// A choice for `action` whose key hint is the first key bound to it.
  static PromptChoice choice(const Bindings& bindings, Action action, std::string label);

  /// Applies an action; returns HandlerResult flags (kIgnored for unrelated actions, and for
  /// everything once answered).
  unsigned handle(Action action);
  /// The action of the chosen answer, Action::kBack when dismissed, nullopt while unanswered.
  const std::optional<Action>& result() const { return result_; }
  /// Forgets the answer and highlights the default choice again.
  void reset();
  /// An unfocused prompt (its owner moved the keys elsewhere, e.g. to a list above it) draws no
  /// highlighted choice; it still handles actions. Focused when made.
  void set_focused(bool focused) { focused_ = focused; }
  bool focused() const { return focused_; }

  /// The question, the choices and the index of the highlighted choice.
  const std::string& question() const { return question_; }
  const std::vector<PromptChoice>& choices() const { return choices_; }
  size_t highlighted() const { return highlighted_; }

  /// Draws the prompt as a bordered box centred in `area` (blanking what is under it); without
  /// room for the border it uses the whole area, the question on top, the choices below; with one
  /// row only, the choices. Choices wrap onto further rows when they do not fit on one.
  void draw(Canvas& canvas, Rect area) const;

 private:
  std::vector<std::vector<size_t>> pack_choices(int width) const;
  std::string choice_text(size_t index) const;
  void draw_choices(Canvas& canvas, Rect area, const std::vector<std::vector<size_t>>& rows) const;

  std::string question_;
  std::vector<PromptChoice> choices_;
  size_t default_choice_ = 0;
  size_t highlighted_ = 0;
  std::optional<Action> result_;
  bool focused_ = true;
};

}  // namespace vn::tui
