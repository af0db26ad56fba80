// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "tui/actions.h"
#include "tui/canvas.h"

namespace vn::tui {

/// A screen of the application. The App owns views, gives each the area below the tab bar and
/// above the status line, routes actions to the active one and polls all of them with tick().
///
/// Plugging a view in: implement id/title/resize/draw/handle, App::add_view(std::make_unique<V>(...)).
/// Keys reach handle() as Actions already resolved in key_context(); an action the view returns
/// kIgnored for gets the App's meaning (Tab cycles screens, `back` returns to the previous screen).
/// draw() must not write outside the area given to resize().
class View {
 public:
  virtual ~View() = default;

  /// Stable identifier, also the name of the `:view <id>` command (e.g. "layers").
  virtual std::string_view id() const = 0;
  /// Shown in the tab bar, in the UI's language.
  virtual std::string title() const = 0;
  /// One line for the help's list of screens, in the UI's language; may be empty.
  virtual std::string description() const { return {}; }
  /// The actions that do something on this screen in its current state, for its help (the App
  /// adds its own: screens, help, the command line, filter for filterable views, quit).
  virtual std::vector<Action> help_actions() const { return {}; }
  /// Called before the first draw and whenever the terminal size changes.
  virtual void resize(Rect area) = 0;
  /// Draws the current state into the area of the last resize(); no terminal access.
  virtual void draw(Canvas& canvas) const = 0;
  /// Reacts to an action; returns HandlerResult flags.
  virtual unsigned handle(Action action) = 0;
  /// Polls background work about every 100 ms, whether or not the view is visible. Returns true
  /// when the view changed and must be drawn again.
  virtual bool tick(std::chrono::steady_clock::time_point now) {
    (void)now;
    return false;
  }
  /// The key map for the next key: kPrompt while the view shows a modal question.
  virtual KeyContext key_context() const { return KeyContext::kNormal; }
  /// True when the view can filter its content: then `/` opens the App's filter line and every
  /// edit calls apply_filter().
  virtual bool filterable() const { return false; }
  /// The current filter text (the filter line starts from it).
  virtual std::string filter_text() const { return {}; }
  /// Shows only (or highlights) what matches `text`; an empty text clears the filter.
  virtual void apply_filter(std::string_view text) { (void)text; }
  /// Read once after handle() returned kSwitchView: the id of the view to show.
  virtual std::string switch_target() const { return {}; }
  /// Short state for the right side of the status line (e.g. "row 3/120"); may be empty.
  virtual std::string status_text() const { return {}; }
  /// A mouse click or wheel turn inside the view's area (mouse mode only); HandlerResult flags.
  /// A wheel turn the view ignores scrolls it as Up/Down would.
  virtual unsigned handle_mouse(const Key& event) {
    (void)event;
    return kIgnored;
  }
};

}  // namespace vn::tui
