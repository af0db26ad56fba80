// SPDX-License-Identifier: Apache-2.0
#include "tui/app.h"

#include <algorithm>

#include "tui/i18n.h"
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

std::string common_prefix(const std::vector<std::string>& words) {
  if (words.empty()) return {};
  std::string prefix = words.front();
  for (const std::string& w : words) {
    size_t n = 0;
    while (n < prefix.size() && n < w.size() && prefix[n] == w[n]) ++n;
    prefix.resize(n);
  }
  // Never end inside a UTF-8 sequence.
  while (!prefix.empty() && (static_cast<unsigned char>(prefix.back()) & 0xC0) == 0x80) prefix.pop_back();
  if (!prefix.empty() && static_cast<unsigned char>(prefix.back()) >= 0xC0) prefix.pop_back();
  return prefix;
}

}  // namespace

App::App(Terminal& terminal, AppOptions options) : terminal_(terminal), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return std::chrono::steady_clock::now(); };
  add_builtin_commands();
}

void App::add_builtin_commands() {
  add_command({"quit", "", "Quit (asks first while work runs)", [](std::string_view) {
                 return CommandResult{kHandled | kQuit, {}, false};
               }});
  add_command({"help", "", "Show or hide the help of this screen", [this](std::string_view) {
                 toggle_help();
                 return CommandResult{};
               }});
  add_command({"view", "NAME", "Open a screen by its name", [this](std::string_view name) -> CommandResult {
                 if (show_view(name)) return {};
                 if (std::find(catalog_.begin(), catalog_.end(), name) != catalog_.end()) {
                   std::string absent = absent_message_ ? absent_message_(name) : std::string();
                   if (!absent.empty()) return {kHandled | kRedraw, std::move(absent), true};
                   return {kHandled | kRedraw, trf("the {} screen is not part of this command", name), true};
                 }
                 return {kHandled | kRedraw, trf("no screen named '{}'", name), true};
               },
               [this] { return view_ids(); }});
  for (const bool bind : {true, false}) {
    add_command({bind ? "bind" : "unbind", "ACTION KEY", bind ? "Bind a key to an action" : "Remove a key from an action",
                 [this, bind](std::string_view args) -> CommandResult {
                   const std::string word = bind ? "bind" : "unbind";
                   const auto [name, key] = split_first(args);
                   if (name.empty() || key.empty()) return {kHandled | kRedraw, trf("usage: {} ACTION KEY", word), true};
                   const BindStatus status = bind ? bindings_.bind(name, key) : bindings_.unbind(name, key);
                   if (help_visible_) open_help();
                   if (!status.ok()) return {kHandled | kRedraw, status.message, true};
                   return {kHandled | kRedraw,
                           word + " " + std::string(name) + " " + std::string(key) +
                               (status.message.empty() ? "" : " (" + status.message + ")"),
                           false};
                 },
                 [] {
                   std::vector<std::string> names;
                   for (const ActionInfo& info : action_table()) names.emplace_back(info.name);
                   return names;
                 }});
  }
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
  if (help_visible_) open_help();
  return true;
}

bool App::show_view(std::string_view id) {
  for (size_t i = 0; i < views_.size(); ++i) {
    if (views_[i]->id() == id) return show_view(i);
  }
  return false;
}

std::vector<std::string> App::view_ids() const {
  std::vector<std::string> ids;
  for (const auto& v : views_) ids.emplace_back(v->id());
  return ids;
}

void App::add_command(Command command) {
  for (Command& c : commands_) {
    if (c.name == command.name) {
      c = std::move(command);
      return;
    }
  }
  commands_.push_back(std::move(command));
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
    if (help_pane_.area() != view_area_) canvas.draw_box(view_area_, ColorRole::kAccent, tr("Help: Esc closes"));
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
    // The candidates of the last Tab, on the row above, the one on the line highlighted.
    if (completion_.candidates.size() > 1 && view_area_.h > 0) {
      const Rect row = view_area_.rows(view_area_.h - 1, 1);
      canvas.fill(row, " ", ColorRole::kDim);
      int x = row.x;
      const size_t shown = (completion_.next + completion_.candidates.size() - 1) % completion_.candidates.size();
      for (size_t i = 0; i < completion_.candidates.size() && x < row.x + row.w; ++i) {
        x += canvas.put_text(row, x, row.y, completion_.candidates[i],
                             i == shown && editor().text() == completion_.stem + completion_.candidates[i]
                                 ? ColorRole::kSelection
                                 : ColorRole::kDefault) +
             2;
      }
    }
  } else {
    const auto help_keys = bindings_.keys_for(Action::kHelp);
    const std::string hint =
        help_keys.empty() ? std::string() : key_name(help_keys.front()) + " " + std::string(tr("help"));
    const std::string state = view != nullptr ? view->status_text() : std::string();
    status_.set_right(state.empty() ? hint : hint.empty() ? state : state + "  " + hint);
    const std::string filter = view != nullptr && view->filterable() ? view->filter_text() : std::string();
    status_.set_left(filter.empty() ? std::string() : trf("/{}  (Esc clears)", filter));
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
  if (quit_pending_) {
    // The confirmation's own keys: quit's, which no question uses. Any other key only stays.
    quit_pending_ = false;
    if (!key.is_mouse() && bindings_.lookup(key, KeyContext::kNormal) == Action::kQuit) quit_ = true;
    return true;
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
  if (action != Action::kComplete) completion_ = {};
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
  if (action == Action::kComplete) {
    if (line_mode_ == LineMode::kCommand) complete_line();
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

void App::complete_line() {
  // Tab again cycles through the candidates of the first Tab.
  if (completion_.candidates.size() > 1) {
    command_editor_.set_text(completion_.stem + completion_.candidates[completion_.next]);
    completion_.next = (completion_.next + 1) % completion_.candidates.size();
    return;
  }
  const std::string text = command_editor_.text();
  const size_t space = text.find(' ');
  std::vector<std::string> pool;
  std::string stem;
  std::string word;
  if (space == std::string::npos) {
    for (const Command& c : commands_) pool.push_back(c.name);
    word = text;
  } else {
    const std::string name = text.substr(0, space);
    const auto it = std::find_if(commands_.begin(), commands_.end(), [&](const Command& c) { return c.name == name; });
    if (it == commands_.end() || !it->complete) return;
    pool = it->complete();
    size_t arg = space;
    while (arg < text.size() && text[arg] == ' ') ++arg;
    stem = text.substr(0, arg);
    word = text.substr(arg);
  }
  std::vector<std::string> matches;
  for (std::string& p : pool) {
    if (p.starts_with(word) && std::find(matches.begin(), matches.end(), p) == matches.end()) matches.push_back(std::move(p));
  }
  if (matches.empty()) return;
  if (matches.size() == 1) {
    // A command name is followed by its argument; an argument ends the line.
    command_editor_.set_text(stem + matches.front() + (space == std::string::npos ? " " : ""));
    return;
  }
  const std::string prefix = common_prefix(matches);
  command_editor_.set_text(stem + prefix);
  completion_ = {stem, std::move(matches), 0};
  // A prefix that grew the line stops here; one that did not starts the cycle at the first candidate.
  if (prefix == word) complete_line();
}

bool App::dispatch_help_key(const Key& key) {
  const Action action = bindings_.lookup(key, KeyContext::kNormal);
  switch (action) {
    case Action::kHelp:
    case Action::kBack:
      help_visible_ = false;
      return true;
    case Action::kQuit:
      quit_asking_first();
      return true;
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
  if (result & kQuit) quit_asking_first();
  if ((result & kSwitchView) && active_view() != nullptr) {
    const std::string target = active_view()->switch_target();
    if (!show_view(std::string_view(target))) show_message(trf("no screen named '{}'", target), ColorRole::kError);
    redraw = true;
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

void App::quit_asking_first() {
  const std::string warning = options_.quit_warning ? options_.quit_warning() : std::string();
  if (warning.empty()) {
    quit_ = true;
    return;
  }
  const auto keys = bindings_.keys_for(Action::kQuit);
  quit_pending_ = true;
  show_message(trf("{}: {} quits, Ctrl-C too; any other key stays", warning,
                   keys.empty() ? std::string("Ctrl-C") : key_name(keys.front())),
               ColorRole::kWarning);
}

bool App::app_action(Action action, const Key* key) {
  if (const auto screen = screen_index(action)) return show_view(static_cast<size_t>(*screen));
  switch (action) {
    case Action::kQuit:
      quit_asking_first();
      return true;
    case Action::kHelp:
      toggle_help();
      return true;
    case Action::kCommandLine:
      open_line(LineMode::kCommand);
      return true;
    case Action::kFilter:
      if (active_view() == nullptr || !active_view()->filterable()) {
        show_message(std::string(tr("this screen has no filter")), ColorRole::kWarning);
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
      // Back from a filter first: Esc clears it, as it would close the filter line.
      if (View* view = active_view(); view != nullptr && view->filterable() && !view->filter_text().empty()) {
        view->apply_filter("");
        return true;
      }
      if (key != nullptr && key->code == Key::kEscape) return false;
      if (options_.back_quits) quit_asking_first();
      return true;
    default:
      return false;
  }
}

void App::open_line(LineMode mode) {
  line_mode_ = mode;
  completion_ = {};
  if (mode == LineMode::kFilter) {
    filter_before_ = active_view()->filter_text();
    filter_editor_.set_text(filter_before_);
  } else {
    command_editor_.clear();
  }
}

void App::close_line() {
  line_mode_ = LineMode::kNone;
  completion_ = {};
}

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
  const View* view = views_.empty() ? nullptr : views_[active_].get();
  std::vector<HelpLine> help = view != nullptr ? screen_help(*view) : global_help();
  for (HelpLine& line : help) lines.push_back({std::move(line.text), line.role});
  help_pane_.set_wrap(false);
  help_pane_.set_lines(std::move(lines));
  help_visible_ = true;
}

void App::execute_command(std::string_view command) {
  const auto [word, rest] = split_first(command);
  if (word.empty()) return;
  dirty_ = true;
  if (word == "q") {
    quit_asking_first();
    return;
  }
  for (const Command& c : commands_) {
    if (c.name != word) continue;
    CommandResult result = c.run(rest);
    if (!result.message.empty()) {
      show_message(std::move(result.message), result.error ? ColorRole::kError : ColorRole::kOk);
    }
    if (result.flags & kQuit) quit_asking_first();
    return;
  }
  if (rest.empty()) {
    if (const ActionInfo* info = find_action(word)) {
      dispatch_action(info->action, nullptr);
      return;
    }
    if (show_view(word)) return;
  }
  show_message(trf("unknown command: {}", word), ColorRole::kError);
}

}  // namespace vn::tui
