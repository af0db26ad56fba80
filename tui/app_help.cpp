// SPDX-License-Identifier: Apache-2.0
// The App's help: generated from the action table, the views' own actions and the `:` commands.
#include <algorithm>

#include "tui/app.h"
#include "tui/i18n.h"
#include "tui/text.h"

namespace vn::tui {
namespace {

// Columns of a command's name and arguments in the help.
constexpr int kCommandWidth = 20;

}  // namespace

std::vector<HelpLine> App::global_help() const {
  std::vector<HelpLine> lines;
  lines.push_back({std::string(tr("Everywhere")), ColorRole::kHeader});
  std::vector<Action> actions = {Action::kHelp, Action::kCommandLine, Action::kBack};
  if (views_.size() > 1) actions.insert(actions.end(), {Action::kNextPane, Action::kPrevPane});
  for (size_t i = 0; i < views_.size() && i < 9; ++i) {
    actions.push_back(static_cast<Action>(static_cast<int>(Action::kScreen1) + static_cast<int>(i)));
  }
  actions.insert(actions.end(), {Action::kRefresh, Action::kQuit});
  for (Action a : actions) {
    HelpLine line = action_help_line(bindings_, a);
    if (const auto screen = screen_index(a)) line.text += " (" + views_[static_cast<size_t>(*screen)]->title() + ")";
    lines.push_back(std::move(line));
  }
  lines.push_back({});
  lines.push_back({std::string(tr("In the : and / lines")), ColorRole::kHeader});
  for (const ActionInfo& info : action_table()) {
    if (info.context == KeyContext::kEdit) lines.push_back(action_help_line(bindings_, info.action));
  }
  return lines;
}

std::vector<HelpLine> App::screens_and_commands_help() const {
  std::vector<HelpLine> lines;
  lines.push_back({std::string(tr("Screens")), ColorRole::kHeader});
  for (size_t i = 0; i < views_.size(); ++i) {
    const View& v = *views_[i];
    // Number and title as in the tab bar, then the id `:view` takes.
    lines.push_back({"  " + fit_to_width(std::to_string(i + 1) + " " + v.title(), kCommandWidth - 8, Align::kLeft, "~") + " " +
                         fit_to_width(v.id(), 9) + " " + v.description(),
                     ColorRole::kDefault});
  }
  lines.push_back({});
  lines.push_back({std::string(tr("Commands (:)")), ColorRole::kHeader});
  for (const Command& c : commands_) {
    const std::string form = ":" + c.name + (c.usage.empty() ? "" : " " + c.usage);
    lines.push_back({"  " + fit_to_width(form, kCommandWidth - 1) + " " + std::string(tr(c.help)), ColorRole::kDefault});
  }
  lines.push_back({"  " + fit_to_width(":ACTION", kCommandWidth - 1) + " " + std::string(tr("Run any action of the key tables")),
                   ColorRole::kDefault});
  return lines;
}

std::vector<HelpLine> App::screen_help(const View& view) const {
  std::vector<HelpLine> lines;
  lines.push_back({trf("{}: keys on this screen", view.title()), ColorRole::kHeader});
  std::vector<Action> actions = view.help_actions();
  if (view.filterable() && std::find(actions.begin(), actions.end(), Action::kFilter) == actions.end()) {
    actions.push_back(Action::kFilter);
  }
  for (Action a : actions) lines.push_back(action_help_line(bindings_, a));
  lines.push_back({});
  for (HelpLine& line : global_help()) lines.push_back(std::move(line));
  lines.push_back({});
  for (HelpLine& line : screens_and_commands_help()) lines.push_back(std::move(line));
  return lines;
}

std::vector<HelpLine> App::help_document() const {
  std::vector<HelpLine> lines = screens_and_commands_help();
  for (const auto& v : views_) {
    std::vector<Action> actions = v->help_actions();
    if (v->filterable() && std::find(actions.begin(), actions.end(), Action::kFilter) == actions.end()) {
      actions.push_back(Action::kFilter);
    }
    if (actions.empty()) continue;
    lines.push_back({});
    lines.push_back({trf("{}: keys on this screen", v->title()), ColorRole::kHeader});
    for (Action a : actions) lines.push_back(action_help_line(bindings_, a));
  }
  lines.push_back({});
  for (HelpLine& line : global_help()) lines.push_back(std::move(line));
  return lines;
}

}  // namespace vn::tui
