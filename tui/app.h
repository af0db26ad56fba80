// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tui/actions.h"
#include "tui/canvas.h"
#include "tui/terminal.h"
#include "tui/view.h"
#include "tui/widgets/line_editor.h"
#include "tui/widgets/status_line.h"
#include "tui/widgets/tab_bar.h"
#include "tui/widgets/text_pane.h"

namespace vn::tui {

/// Settings of an App.
struct AppOptions {
  /// Report mouse clicks (tabs, rows) and wheel turns (scrolling). Off by default in the toolkit
  /// because capturing the mouse takes over the terminal's own selection; programs turn it on.
  bool mouse = false;
  /// Longest wait for a key before views are polled again with tick().
  std::chrono::milliseconds poll_interval{100};
  /// `back` (q) on a screen that has nothing to go back to quits, as in tig. Esc never quits.
  bool back_quits = true;
  /// The clock passed to View::tick(); steady_clock::now when empty. Tests inject a fake one.
  std::function<std::chrono::steady_clock::time_point()> clock;
  /// Asked whenever a key or a command would quit: a non-empty answer ("Quitting cancels the
  /// triage") makes the App ask first, in the status line, with keys no question uses: a key bound
  /// to `quit` (Q) quits, any other key stays (and does nothing else). Ctrl-C always quits.
  std::function<std::string()> quit_warning;
};

/// What a `:` command did.
struct CommandResult {
  /// HandlerResult flags; kQuit leaves the application (through the quit warning, if any).
  unsigned flags = kHandled | kRedraw;
  /// Shown in the status line when not empty.
  std::string message;
  /// Shows `message` as an error (kError) rather than a confirmation (kOk).
  bool error = false;
};

/// One `:` command: its name, the form of its arguments, its help line (English; shown through
/// tr()), what it does with the rest of the line, and the candidates Tab completes its argument
/// from (none when empty).
struct Command {
  std::string name;
  std::string usage;
  std::string help;
  std::function<CommandResult(std::string_view args)> run;
  std::function<std::vector<std::string>()> complete = {};
};

/// The application shell: views as tabs, a tab bar on top, a status line at the bottom that
/// doubles as the `:` command line and the `/` filter line, a help overlay for the screen shown,
/// and the event loop.
///
/// Screen layout: row 0 the tab bar (when the terminal has at least 3 rows), the last row the
/// status line, the rows between the active view. While Tab completion offers several
/// candidates, they are listed on the row above the status line.
///
/// Key routing: a pending quit confirmation first (see AppOptions::quit_warning), then the help
/// overlay (while shown), then the line editor (while a line is open), then the active view with
/// the key resolved in its key_context(), then the App's own meaning of the action: quit, help,
/// command_line, filter (for filterable views), refresh, next/prev_pane (cycle screens),
/// screen_1..9, back (clears the view's filter, else quits: see AppOptions::back_quits). The
/// status line shows a view's filter while it is set.
///
/// Commands: one list (commands()), built in: `quit`, `help`, `view NAME`, `bind ACTION KEY`,
/// `unbind ACTION KEY`; programs add theirs with add_command(). Besides the list, a view id alone
/// shows that view and an action name alone runs that action, so every key has a command.
///
/// Single-threaded: the UI thread calls everything; background work reports through View::tick().
class App {
 public:
  /// An App drawing on `terminal`, which must outlive it.
  explicit App(Terminal& terminal, AppOptions options = {});

  /// Adds a view as the last tab and returns it; the first view added is shown first.
  View& add_view(std::unique_ptr<View> view);
  /// Number of views (tabs).
  size_t view_count() const { return views_.size(); }
  /// The view at tab `index`. Precondition: index < view_count().
  View& view(size_t index) { return *views_[index]; }
  /// The view with `id`, or nullptr.
  View* find_view(std::string_view id);
  /// The shown view, or nullptr when there is none.
  View* active_view() { return views_.empty() ? nullptr : views_[active_].get(); }
  /// Tab index of the shown view.
  size_t active_index() const { return active_; }
  /// Shows the view at tab `index`; false when out of range.
  bool show_view(size_t index);
  /// Shows the view with `id`; false when there is none.
  bool show_view(std::string_view id);
  /// Every screen id the program family knows (`:view` explains that one of them is not part of
  /// this program rather than calling it unknown); the views' own ids need not be listed.
  void set_screen_catalog(std::vector<std::string> ids) { catalog_ = std::move(ids); }
  /// What `:view ID` says of a catalogued screen the program has not added (yet), in the UI's
  /// language: "the Reduce screen appears when the reduction starts"; "" keeps the default.
  void set_absent_screen_message(std::function<std::string(std::string_view id)> message) {
    absent_message_ = std::move(message);
  }

  /// The key bindings (defaults from actions.inc); changes apply from the next key.
  Bindings& bindings() { return bindings_; }
  const Bindings& bindings() const { return bindings_; }
  /// Adds a `:` command (replacing one of the same name).
  void add_command(Command command);
  /// The `:` commands, built-in first, in the order they were added.
  const std::vector<Command>& commands() const { return commands_; }
  /// Runs `command` as if typed after `:` (without adding it to the history), e.g. from a script.
  void execute_command(std::string_view command);
  /// Shows a message in the status line until the next key.
  void show_message(std::string text, ColorRole role = ColorRole::kOk);
  /// The status line (its message is the outcome of the last command).
  const StatusLine& status_line() const { return status_; }

  /// Shows or hides the help overlay of the screen shown.
  void toggle_help();
  /// True while the help overlay is shown.
  bool help_visible() const { return help_visible_; }
  /// The help of `view`: the keys acting on it, the keys acting everywhere, the screens and the
  /// `:` commands, in the UI's language.
  std::vector<HelpLine> screen_help(const View& view) const;
  /// The whole help: the screens, the commands, then the keys of every screen and those acting
  /// everywhere and in the : and / lines.
  std::vector<HelpLine> help_document() const;
  /// True while the `:` command line is open.
  bool command_line_open() const { return line_mode_ == LineMode::kCommand; }
  /// True while the `/` filter line is open.
  bool filter_line_open() const { return line_mode_ == LineMode::kFilter; }
  /// True while a quit waits for its confirmation.
  bool quit_pending() const { return quit_pending_; }
  /// The text of the open command or filter line ("" when none is open).
  std::string line_text() const;
  /// The candidates Tab offered last while they are listed (empty otherwise).
  const std::vector<std::string>& completions() const { return completion_.candidates; }
  /// The `:` lines entered so far.
  const History& command_history() const { return command_history_; }

  /// Runs the event loop: wait up to poll_interval for a key, dispatch it, tick every view, draw
  /// when something changed (and on the first call). Returns after quit, a termination signal, or
  /// `max_iterations` waits (negative: no limit); the return value is the number of waits.
  long run(long max_iterations = -1);
  /// Makes run() return after the current iteration, without asking.
  void request_quit() { quit_ = true; }
  /// True once quit was asked for (by a key, a command, a view or request_quit()).
  bool quit_requested() const { return quit_; }
  /// True when run() ended because of SIGINT, SIGTERM or SIGHUP (Key::kInterrupt).
  bool interrupted() const { return interrupted_; }
  /// Number of frames presented so far (tests check that idle loops do not redraw).
  long frames() const { return frames_; }

 private:
  enum class LineMode { kNone, kCommand, kFilter };
  struct Completion {
    std::string stem;  // the line up to the word being completed
    std::vector<std::string> candidates;
    size_t next = 0;
  };

  void add_builtin_commands();
  void layout();
  void present();
  bool dispatch_key(const Key& key);
  bool dispatch_line_key(const Key& key);
  bool dispatch_help_key(const Key& key);
  bool dispatch_mouse(const Key& key);
  bool dispatch_action(Action action, const Key* key);
  bool apply_view_result(unsigned result);
  bool app_action(Action action, const Key* key);
  void quit_asking_first();
  void complete_line();
  void open_line(LineMode mode);
  void close_line();
  void open_help();
  std::vector<std::string> view_ids() const;
  std::vector<HelpLine> global_help() const;
  std::vector<HelpLine> screens_and_commands_help() const;
  LineEditor& editor() { return line_mode_ == LineMode::kFilter ? filter_editor_ : command_editor_; }
  const LineEditor& editor() const { return line_mode_ == LineMode::kFilter ? filter_editor_ : command_editor_; }

  Terminal& terminal_;
  AppOptions options_;
  Bindings bindings_;
  std::vector<std::unique_ptr<View>> views_;
  size_t active_ = 0;
  std::vector<Command> commands_;
  std::vector<std::string> catalog_;
  std::function<std::string(std::string_view id)> absent_message_;

  Size size_;
  Rect tab_area_;
  Rect view_area_;
  Rect status_area_;
  TabBar tab_bar_;
  StatusLine status_;

  bool help_visible_ = false;
  TextPane help_pane_;

  LineMode line_mode_ = LineMode::kNone;
  History command_history_;
  History filter_history_;
  LineEditor command_editor_{&command_history_};
  LineEditor filter_editor_{&filter_history_};
  // The view's filter when the filter line opened, restored by cancel.
  std::string filter_before_;
  Completion completion_;

  bool started_ = false;
  bool dirty_ = true;
  bool quit_ = false;
  bool quit_pending_ = false;
  bool interrupted_ = false;
  long frames_ = 0;
};

}  // namespace vn::tui
