// SPDX-License-Identifier: Apache-2.0
#include "tui/app.h"

#include <algorithm>

#include "tui/text.h"

namespace vn::tui {
namespace {

// Rows scrolled per wheel notch.
constexpr int kWheelRows = 3;

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits "word rest of line" at the first run of spaces.
std::pair<std::string_view, std::string_view> split_first(std::string_view s) {
  s = trim(s);
  const size_t space = s.find(' ');
  if (space == std::string_view::npos) return {s, {}};
  return {s.substr(0, space), trim(s.substr(space))};
}

}  // namespace

App::App(Terminal& terminal, AppOptions options) : terminal_(terminal), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return std::chrono::steady_clock::now(); };
}

View& App::add_view(std::unique_ptr<View> view) {
  views_.push_back(std::move(view));
  if (started_) views_.back()->resize(view_area_);
  dirty_ = true;
  return *views_.back();
}

View* App::find_view(std::string_view id) {
  for (const auto& v : views_) {
    if (v->id() == id) return v.get();
  }
  return nullptr;
}

bool App::show_view(size_t index) {
  if (index >= views_.size()) return false;
  if (index != active_) dirty_ = true;
  active_ = index;
  return true;
}

bool App::show_view(std::string_view id) {
  for (size_t i = 0; i < views_.size(); ++i) {
    if (views_[i]->id() == id) return show_view(i);
  }
  return false;
}

void App::show_message(std::string text, ColorRole role) {
  status_.set_message(std::move(text), role);
  dirty_ = true;
}

std::string App::line_text() const { return line_mode_ == LineMode::kNone ? std::string() : editor().text(); }

void App::layout() {
  size_ = terminal_.size();
  const int w = std::max(0, size_.width);
  const int h = std::max(0, size_.height);
  const int tab_rows = h >= 3 ? 1 : 0;
  const int status_rows = h >= 1 ? 1 : 0;
  tab_area_ = {0, 0, w, tab_rows};
  status_area_ = {0, h - status_rows, w, status_rows};
  view_area_ = {0, tab_rows, w, std::max(0, h - tab_rows - status_rows)};
  for (const auto& v : views_) v->resize(view_area_);
  const Rect help_area = view_area_.h >= 3 && view_area_.w >= 3 ? view_area_.inset(1) : view_area_;
  help_pane_.resize(help_area);
}

void App::present() {
  Canvas canvas(size_.width, size_.height);
  canvas.set_glyphs(terminal_.glyphs());
  View* view = active_view();
  // The view draws first so that the tab bar and status line cover anything it drew outside its area.
  if (view != nullptr) view->draw(canvas);
  if (help_visible_) {
    canvas.fill(view_area_);
    if (help_pane_.area() != view_area_) canvas.draw_box(view_area_, ColorRole::kAccent, "Help: Esc closes");
    help_pane_.draw(canvas);
  }
  std::vector<std::string> titles;
  for (const auto& v : views_) titles.push_back(v->title());
  tab_bar_.set_tabs(std::move(titles));
  tab_bar_.set_active(active_);
  tab_bar_.draw(canvas, tab_area_);

  std::optional<Point> cursor;
  if (line_mode_ != LineMode::kNone) {
    const std::string_view prefix = line_mode_ == LineMode::kCommand ? ":" : "/";
    editor().draw(canvas, status_area_, prefix);
    if (!status_area_.empty()) cursor = Point{editor().cursor_x(status_area_, prefix), status_area_.y};
  } else {
    const auto help_keys = bindings_.keys_for(Action::kHelp);
    const std::string hint = help_keys.empty() ? std::string() : key_name(help_keys.front()) + " help";
    const std::string state = view != nullptr ? view->status_text() : std::string();
    status_.set_right(state.empty() ? hint : hint.empty() ? state : state + "  " + hint);
    status_.draw(canvas, status_area_);
  }
  terminal_.set_cursor(cursor);
  terminal_.present(canvas);
  ++frames_;
  dirty_ = false;
}

long App::run(long max_iterations) {
  if (!started_) {
    started_ = true;
    terminal_.set_mouse_enabled(options_.mouse);
    layout();
    dirty_ = true;
  }
  if (dirty_ && !quit_) present();
  long iterations = 0;
  while (!quit_ && (max_iterations < 0 || iterations < max_iterations)) {
    ++iterations;
    if (const auto key = terminal_.read_key(options_.poll_interval)) {
      if (dispatch_key(*key)) dirty_ = true;
    }
    if (quit_) break;
    const auto now = options_.clock();
    for (const auto& v : views_) {
      if (v->tick(now)) dirty_ = true;
    }
    if (dirty_) present();
  }
  return iterations;
}

bool App::dispatch_key(const Key& key) {
  if (key.code == Key::kInterrupt) {
    interrupted_ = true;
    quit_ = true;
    return false;
  }
  if (key.code == Key::kResize) {
    layout();
    terminal_.invalidate();
    return true;
  }
  bool redraw = false;
  if (!status_.message().empty()) {
    status_.clear_message();
    redraw = true;
  }
  if (key.is_mouse()) return dispatch_mouse(key) || redraw;
  if (line_mode_ != LineMode::kNone) return dispatch_line_key(key) || redraw;
  if (help_visible_) return dispatch_help_key(key) || redraw;
  View* view = active_view();
  const KeyContext context = view != nullptr ? view->key_context() : KeyContext::kNormal;
  const Action action = bindings_.lookup(key, context);
  if (action == Action::kNone) return redraw;
  return dispatch_action(action, &key) || redraw;
}

bool App::dispatch_line_key(const Key& key) {
  const Action action = bindings_.lookup(key, KeyContext::kEdit);
  if (action == Action::kSubmit) {
    const std::string text = editor().text();
    const LineMode mode = line_mode_;
    close_line();
    if (mode == LineMode::kCommand) {
      command_history_.add(text);
      execute_command(text);
    } else {
      filter_history_.add(text);
    }
    return true;
  }
  if (action == Action::kCancel) {
    if (line_mode_ == LineMode::kFilter && active_view() != nullptr) active_view()->apply_filter(filter_before_);
    close_line();
    return true;
  }
  bool changed = false;
  if (action != Action::kNone) {
    changed = editor().handle(action) != kIgnored;
  } else if (key.is_printable()) {
    editor().insert(to_utf8(key.code));
    changed = true;
  }
  if (changed && line_mode_ == LineMode::kFilter && active_view() != nullptr) {
    active_view()->apply_filter(editor().text());
  }
  return changed;
}

bool App::dispatch_help_key(const Key& key) {
  const Action action = bindings_.lookup(key, KeyContext::kNormal);
  switch (action) {
    case Action::kHelp:
    case Action::kBack:
      help_visible_ = false;
      return true;
    case Action::kQuit:
      quit_ = true;
      return false;
    default:
      return (help_pane_.handle(action) & kRedraw) != 0;
  }
}

bool App::dispatch_mouse(const Key& key) {
  if (key.code == Key::kMouseClick && tab_area_.contains(key.x, key.y)) {
    const auto tab = tab_bar_.tab_at(tab_area_, key.x);
    return tab && show_view(*tab);
  }
  if (!view_area_.contains(key.x, key.y)) return false;
  if (help_visible_) {
    if (key.code == Key::kMouseClick) return false;
    bool redraw = false;
    for (int i = 0; i < kWheelRows; ++i) {
      redraw |= (help_pane_.handle(key.code == Key::kWheelUp ? Action::kUp : Action::kDown) & kRedraw) != 0;
    }
    return redraw;
  }
  View* view = active_view();
  if (view == nullptr) return false;
  const unsigned result = view->handle_mouse(key);
  if (result != kIgnored || key.code == Key::kMouseClick) return apply_view_result(result);
  bool redraw = false;
  for (int i = 0; i < kWheelRows; ++i) {
    redraw |= apply_view_result(view->handle(key.code == Key::kWheelUp ? Action::kUp : Action::kDown));
  }
  return redraw;
}

bool App::apply_view_result(unsigned result) {
  bool redraw = (result & kRedraw) != 0;
  if (result & kQuit) quit_ = true;
  if ((result & kSwitchView) && active_view() != nullptr) {
    const std::string target = active_view()->switch_target();
    if (show_view(std::string_view(target))) {
      redraw = true;
    } else {
      show_message("no screen named '" + target + "'", ColorRole::kError);
      redraw = true;
    }
  }
  return redraw;
}

bool App::dispatch_action(Action action, const Key* key) {
  if (View* view = active_view()) {
    const unsigned result = view->handle(action);
    if (result != kIgnored) return apply_view_result(result);
  }
  return app_action(action, key);
}

bool App::app_action(Action action, const Key* key) {
  if (const auto screen = screen_index(action)) return show_view(static_cast<size_t>(*screen));
  switch (action) {
    case Action::kQuit:
      quit_ = true;
      return false;
    case Action::kHelp:
      toggle_help();
      return true;
    case Action::kCommandLine:
      open_line(LineMode::kCommand);
      return true;
    case Action::kFilter:
      if (active_view() == nullptr || !active_view()->filterable()) {
        show_message("this screen has no filter", ColorRole::kWarning);
        return true;
      }
      open_line(LineMode::kFilter);
      return true;
    case Action::kRefresh:
      terminal_.invalidate();
      return true;
    case Action::kNextPane:
    case Action::kPrevPane:
      if (views_.size() < 2) return false;
      return show_view(action == Action::kNextPane ? (active_ + 1) % views_.size()
                                                   : (active_ + views_.size() - 1) % views_.size());
    case Action::kBack:
      if (key != nullptr && key->code == Key::kEscape) return false;
      if (options_.back_quits) quit_ = true;
      return false;
    default:
      return false;
  }
}

void App::open_line(LineMode mode) {
  line_mode_ = mode;
  if (mode == LineMode::kFilter) {
    filter_before_ = active_view()->filter_text();
    filter_editor_.set_text(filter_before_);
  } else {
    command_editor_.clear();
  }
}

void App::close_line() { line_mode_ = LineMode::kNone; }

void App::toggle_help() {
  if (help_visible_) {
    help_visible_ = false;
  } else {
    open_help();
  }
  dirty_ = true;
}

void App::open_help() {
  std::vector<TextLine> lines;
  for (HelpLine& line : help_lines(bindings_)) lines.push_back({std::move(line.text), line.role});
  help_pane_.set_wrap(false);
  help_pane_.set_lines(std::move(lines));
  help_visible_ = true;
}

void App::execute_command(std::string_view command) {
  const auto [word, rest] = split_first(command);
  if (word.empty()) return;
  dirty_ = true;
  if (word == "q" || word == "quit") {
    quit_ = true;
    return;
  }
  if (word == "help") {
    toggle_help();
    return;
  }
  if (word == "view") {
    if (!show_view(rest)) show_message("no screen named '" + std::string(rest) + "'", ColorRole::kError);
    return;
  }
  if (word == "bind" || word == "unbind") {
    const auto [name, key] = split_first(rest);
    if (name.empty() || key.empty()) {
      show_message("usage: " + std::string(word) + " ACTION KEY", ColorRole::kError);
      return;
    }
    const BindStatus status = word == "bind" ? bindings_.bind(name, key) : bindings_.unbind(name, key);
    if (!status.ok()) {
      show_message(status.message, ColorRole::kError);
    } else {
      show_message(std::string(word) + " " + std::string(name) + " " + std::string(key) +
                       (status.message.empty() ? "" : " (" + status.message + ")"),
                   ColorRole::kOk);
    }
    if (help_visible_) open_help();
    return;
  }
  if (rest.empty()) {
    if (const ActionInfo* info = find_action(word)) {
      dispatch_action(info->action, nullptr);
      return;
    }
    if (show_view(word)) return;
  }
  if (command_handler_) {
    CommandResult result = command_handler_(trim(command));
    if (result.flags != kIgnored) {
      if (result.flags & kQuit) quit_ = true;
      if (!result.message.empty()) {
        show_message(std::move(result.message), result.error ? ColorRole::kError : ColorRole::kOk);
      }
      return;
    }
  }
  show_message("unknown command: " + std::string(word), ColorRole::kError);
}

}  // namespace vn::tui
