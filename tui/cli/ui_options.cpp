// SPDX-License-Identifier: Apache-2.0
#include "tui/cli/ui_options.h"

#include <cstdlib>

#include "core/flow/flowchart.h"
#include "tui/i18n.h"

namespace vn::cli {

UiOptions& ui_options() {
  static UiOptions options;
  return options;
}

void add_no_mouse_flag(CLI::App& cmd) {
  cmd.add_flag("--no-mouse", ui_options().no_mouse,
               "Full screen: leave the mouse to the terminal (its own selection) instead of clicks and the wheel");
}

void add_ui_flags(CLI::App& cmd) {
  add_no_mouse_flag(cmd);
  cmd.add_option("--lang", ui_options().lang, "Language of the screens: en or zh (default: from LANG)");
}

Status set_ui_language(const std::string& requested) {
  const char* env = std::getenv("LANG");
  VN_ASSIGN_OR_RETURN(const std::string code, flow::choose_language(requested, env != nullptr ? env : ""));
  tui::set_language(tui::language_from_code(code).value_or(tui::Language::kEnglish));
  return Status::OK();
}

tui::AppOptions app_options(std::function<std::string()> quit_warning) {
  tui::AppOptions options;
  options.mouse = !ui_options().no_mouse;
  options.quit_warning = std::move(quit_warning);
  return options;
}

}  // namespace vn::cli
