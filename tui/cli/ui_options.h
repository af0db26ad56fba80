// SPDX-License-Identifier: Apache-2.0
// What every full-screen command shares: the mouse (on unless --no-mouse), the UI's language
// (--lang, else LANG) and the App settings built from them.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/common/status.h"
#include "tui/app.h"
#include "tui/cli/commands.h"

namespace vn::cli {

/// The settings the full-screen flags set; one per process.
struct UiOptions {
  bool no_mouse = false;
  std::string lang;  ///< "en", "zh", or "" for LANG's
};
UiOptions& ui_options();

/// Sets the UI's language from `requested` ("en", "zh") or, when empty, from LANG (zh_* is
/// Chinese). kInvalidArgument for another language.
Status set_ui_language(const std::string& requested);

/// The App settings of a full-screen command: the mouse unless --no-mouse, and `quit_warning`.
tui::AppOptions app_options(std::function<std::string()> quit_warning = {});

}  // namespace vn::cli
