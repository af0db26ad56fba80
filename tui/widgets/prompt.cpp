// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/prompt.h"

#include <algorithm>

#include "tui/text.h"

namespace vn::tui {
namespace {

// Columns between two choices on a row.
constexpr int kChoiceGap = 2;
// Preferred width of the box's inside, when the area allows it.
constexpr int kPreferredInnerWidth = 48;

}  // namespace

Prompt::Prompt(std::string question, std::vector<PromptChoice> choices, size_t default_choice)
    : question_(std::move(question)), choices_(std::move(choices)) {
  default_choice_ = choices_.empty() ? 0 : std::min(default_choice, choices_.size() - 1);
  highlighted_ = default_choice_;
}

PromptChoice Prompt::choice(const Bindings& bindings, Action action, std::string label) {
  const auto keys = bindings.keys_for(action);
  return {action, std::move(label), keys.empty() ? std::string() : key_name(keys.front())};
}

void Prompt::reset() {
  result_.reset();
  highlighted_ = default_choice_;
}

unsigned Prompt::handle(Action action) {
  if (result_) return kIgnored;
  for (size_t i = 0; i < choices_.size(); ++i) {
    if (choices_[i].action == action) {
      highlighted_ = i;
      result_ = action;
      return kHandled | kRedraw;
    }
  }
  switch (action) {
    case Action::kLeft:
    case Action::kPrevPane:
      if (choices_.empty()) return kHandled;
      highlighted_ = (highlighted_ + choices_.size() - 1) % choices_.size();
      return kHandled | kRedraw;
    case Action::kRight:
    case Action::kNextPane:
      if (choices_.empty()) return kHandled;
      highlighted_ = (highlighted_ + 1) % choices_.size();
      return kHandled | kRedraw;
    case Action::kAccept:
    case Action::kEnter:
      if (choices_.empty()) return kHandled;
      result_ = choices_[highlighted_].action;
      return kHandled | kRedraw;
    case Action::kBack:
      result_ = Action::kBack;
      return kHandled | kRedraw;
    default:
      return kIgnored;
  }
}

std::string Prompt::choice_text(size_t index) const {
  const PromptChoice& c = choices_[index];
  return c.key.empty() ? c.label : "[" + c.key + "] " + c.label;
}

std::vector<std::vector<size_t>> Prompt::pack_choices(int width) const {
  std::vector<std::vector<size_t>> rows;
  int used = 0;
  for (size_t i = 0; i < choices_.size(); ++i) {
    const int w = display_width(choice_text(i));
    if (rows.empty() || (used > 0 && used + kChoiceGap + w > width)) {
      rows.emplace_back();
      used = 0;
    }
    used += (used > 0 ? kChoiceGap : 0) + w;
    rows.back().push_back(i);
  }
  return rows;
}

void Prompt::draw_choices(Canvas& canvas, Rect area, const std::vector<std::vector<size_t>>& rows) const {
  for (size_t r = 0; r < rows.size() && static_cast<int>(r) < area.h; ++r) {
    int width = 0;
    for (size_t i : rows[r]) width += (width > 0 ? kChoiceGap : 0) + display_width(choice_text(i));
    int x = area.x + std::max(0, (area.w - width) / 2);
    const int y = area.y + static_cast<int>(r);
    for (size_t i : rows[r]) {
      const ColorRole role = focused_ && i == highlighted_ ? ColorRole::kSelection : ColorRole::kDefault;
      x += canvas.put_text(area, x, y, choice_text(i), role) + kChoiceGap;
    }
  }
}

void Prompt::draw(Canvas& canvas, Rect area) const {
  if (area.empty()) return;
  int widest_choices = 0;
  for (const auto& row : pack_choices(1 << 20)) {
    for (size_t i : row) widest_choices += (widest_choices > 0 ? kChoiceGap : 0) + display_width(choice_text(i));
  }
  const int inner_wanted =
      std::max({std::min(display_width(question_), kPreferredInnerWidth), widest_choices, 10});
  const int inner_width = std::min(inner_wanted, area.w - 4);
  if (inner_width >= 6) {
    const auto question_lines = wrap_text(question_, inner_width);
    const auto choice_rows = pack_choices(inner_width);
    const int inner_height = static_cast<int>(question_lines.size() + 1 + choice_rows.size());
    if (inner_height + 2 <= area.h) {
      const int box_w = inner_width + 4;
      const int box_h = inner_height + 2;
      const Rect box{area.x + (area.w - box_w) / 2, area.y + (area.h - box_h) / 2, box_w, box_h};
      canvas.fill(box);
      canvas.draw_box(box, ColorRole::kAccent);
      const Rect inner{box.x + 2, box.y + 1, inner_width, inner_height};
      for (size_t i = 0; i < question_lines.size(); ++i) {
        canvas.put_text(inner, inner.x, inner.y + static_cast<int>(i), question_lines[i]);
      }
      draw_choices(canvas, inner.rows(static_cast<int>(question_lines.size()) + 1, inner_height), choice_rows);
      return;
    }
  }
  // Compact layout: no border, the choices keep the bottom rows and the question gets the rest.
  canvas.fill(area);
  const auto choice_rows = pack_choices(area.w);
  const int choice_height = std::min(area.h, static_cast<int>(choice_rows.size()));
  const auto question_lines = wrap_text(question_, area.w);
  const int question_height = std::min(area.h - choice_height, static_cast<int>(question_lines.size()));
  for (int i = 0; i < question_height; ++i) {
    canvas.put_text(area, area.x, area.y + i, question_lines[static_cast<size_t>(i)]);
  }
  draw_choices(canvas, area.rows(question_height, choice_height), choice_rows);
}

}  // namespace vn::tui
