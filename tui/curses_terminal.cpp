// SPDX-License-Identifier: Apache-2.0
#include "tui/curses_terminal.h"

#include <langinfo.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// Wide-character API, and no function-like macros (clear(), move(), timeout()...) that would
// collide with C++ member names.
#define NCURSES_WIDECHAR 1
#define NCURSES_NOMACROS 1
#include <curses.h>

#include "tui/text.h"

namespace vn::tui {
namespace {

// ---- Signal handling ---------------------------------------------------------------------------
// Everything the handler touches is prepared before it is installed and is only read by it.

constexpr std::array kSignals = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_caught_signal = 0;
bool g_terminal_open = false;
bool g_handlers_installed = false;
std::array<struct sigaction, kSignals.size()> g_previous_actions{};
int g_input_fd = -1;
int g_output_fd = -1;
termios g_saved_termios{};
bool g_have_termios = false;
std::array<char, 256> g_exit_sequence{};
size_t g_exit_length = 0;

void on_termination_signal(int sig) {
  if (g_caught_signal == 0) {
    g_caught_signal = sig;
    return;
  }
  // A second signal: the loop has not reached endwin(), so restore the terminal here with
  // async-signal-safe calls only, then let the default action end the process.
  if (g_have_termios) tcsetattr(g_input_fd, TCSANOW, &g_saved_termios);
  if (g_exit_length > 0) {
    const ssize_t written = write(g_output_fd, g_exit_sequence.data(), g_exit_length);
    (void)written;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Collects the terminfo strings that leave curses mode, for the second-signal path. Called once
// curses knows the terminal; the handler sees the new length only when the bytes are in place.
void prepare_exit_sequence() {
  size_t length = 0;
  for (const char* name : {"sgr0", "cnorm", "rmkx", "rmcup"}) {
    const char* value = tigetstr(name);
    if (value == nullptr || value == reinterpret_cast<const char*>(-1)) continue;
    const size_t n = std::strlen(value);
    if (length + n > g_exit_sequence.size()) break;
    std::memcpy(g_exit_sequence.data() + length, value, n);
    length += n;
  }
  g_exit_length = length;
}

// Installed before newterm(), so that ncurses, which only claims signals still at SIG_DFL, leaves
// SIGINT and SIGTERM to us and close() can restore exactly what the program had.
void install_signal_handlers(FILE* input, FILE* output) {
  g_input_fd = fileno(input);
  g_output_fd = fileno(output);
  g_have_termios = isatty(g_input_fd) && tcgetattr(g_input_fd, &g_saved_termios) == 0;
  g_exit_length = 0;
  g_caught_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_termination_signal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: the signal must interrupt the wait for input so the loop sees it at once.
  action.sa_flags = 0;
  for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &g_previous_actions[i]);
  g_handlers_installed = true;
}

void restore_signal_handlers() {
  if (!g_handlers_installed) return;
  for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &g_previous_actions[i], nullptr);
  g_handlers_installed = false;
}

// ---- Keys --------------------------------------------------------------------------------------

struct ModifiedKeyName {
  std::string_view prefix;
  char32_t code;
};

// xterm's modified keys (Ctrl-Up is "kUP5") have no KEY_ constant; their terminfo names carry the
// key and the xterm modifier parameter (2 Shift, 3 Alt, 5 Ctrl, ... = 1 + modifier bits).
constexpr std::array kModifiedKeyNames = {
    ModifiedKeyName{"kUP", Key::kUp},     ModifiedKeyName{"kDN", Key::kDown},
    ModifiedKeyName{"kLFT", Key::kLeft},  ModifiedKeyName{"kRIT", Key::kRight},
    ModifiedKeyName{"kHOM", Key::kHome},  ModifiedKeyName{"kEND", Key::kEnd},
    ModifiedKeyName{"kDC", Key::kDelete}, ModifiedKeyName{"kIC", Key::kInsert},
    ModifiedKeyName{"kNXT", Key::kPageDown}, ModifiedKeyName{"kPRV", Key::kPageUp},
};

std::optional<Key> modified_key_from_name(const char* name) {
  if (name == nullptr) return std::nullopt;
  const std::string_view text(name);
  for (const auto& entry : kModifiedKeyNames) {
    if (text.size() != entry.prefix.size() + 1 || text.substr(0, entry.prefix.size()) != entry.prefix) continue;
    const char digit = text.back();
    if (digit < '2' || digit > '8') return std::nullopt;
    return Key::of(entry.code, static_cast<uint8_t>((digit - '1') & (kModShift | kModAlt | kModCtrl)));
  }
  return std::nullopt;
}

attr_t attributes_of(uint8_t attrs) {
  attr_t a = A_NORMAL;
  if (attrs & kAttrBold) a |= A_BOLD;
  if (attrs & kAttrReverse) a |= A_REVERSE;
  if (attrs & kAttrUnderline) a |= A_UNDERLINE;
  if (attrs & kAttrDim) a |= A_DIM;
  return a;
}

}  // namespace

std::optional<Key> key_from_curses(int code, bool function_key) {
  if (!function_key) return key_from_code_point(static_cast<char32_t>(code));
  switch (code) {
    case KEY_UP:
      return Key::of(Key::kUp);
    case KEY_DOWN:
      return Key::of(Key::kDown);
    case KEY_LEFT:
      return Key::of(Key::kLeft);
    case KEY_RIGHT:
      return Key::of(Key::kRight);
    case KEY_HOME:
      return Key::of(Key::kHome);
    case KEY_END:
      return Key::of(Key::kEnd);
    case KEY_PPAGE:
      return Key::of(Key::kPageUp);
    case KEY_NPAGE:
      return Key::of(Key::kPageDown);
    case KEY_IC:
      return Key::of(Key::kInsert);
    case KEY_DC:
      return Key::of(Key::kDelete);
    case KEY_BACKSPACE:
      return Key::of(Key::kBackspace);
    case KEY_ENTER:
      return Key::of(Key::kEnter);
    case KEY_BTAB:
      return Key::of(Key::kTab, kModShift);
    case KEY_RESIZE:
      return Key::of(Key::kResize);
    case KEY_SR:
      return Key::of(Key::kUp, kModShift);
    case KEY_SF:
      return Key::of(Key::kDown, kModShift);
    case KEY_SLEFT:
      return Key::of(Key::kLeft, kModShift);
    case KEY_SRIGHT:
      return Key::of(Key::kRight, kModShift);
    case KEY_SHOME:
      return Key::of(Key::kHome, kModShift);
    case KEY_SEND:
      return Key::of(Key::kEnd, kModShift);
    case KEY_SDC:
      return Key::of(Key::kDelete, kModShift);
    case KEY_SIC:
      return Key::of(Key::kInsert, kModShift);
    case KEY_SNEXT:
      return Key::of(Key::kPageDown, kModShift);
    case KEY_SPREVIOUS:
      return Key::of(Key::kPageUp, kModShift);
    default:
      break;
  }
  // terminfo numbers F13..F24 as Shift-F1..F12 and F25..F36 as Ctrl-F1..F12 (xterm).
  for (int group = 0; group < 3; ++group) {
    const int first = KEY_F(1 + 12 * group);
    if (code >= first && code < first + 12) {
      const uint8_t mods = group == 0 ? kModNone : (group == 1 ? kModShift : kModCtrl);
      return Key::of(Key::kF1 + static_cast<char32_t>(code - first), mods);
    }
  }
  return modified_key_from_name(keyname(code));
}

struct CursesTerminal::State {
  SCREEN* screen = nullptr;
  bool closed = false;
  bool owns_signals = false;
  int saved_stderr = -1;      // the real stderr while it is set aside
  std::string stderr_path;    // where it goes meanwhile
};

namespace {

// Points fd 2 at a new file in $TMPDIR; returns the duplicate of the real stderr (or -1, having
// changed nothing, when no file can be made).
int set_stderr_aside(std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/vernier-stderr-XXXXXX";
  const int file = mkstemp(name.data());
  if (file < 0) return -1;
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  if (saved < 0 || dup2(file, STDERR_FILENO) < 0) {
    if (saved >= 0) ::close(saved);
    ::close(file);
    unlink(name.c_str());
    return -1;
  }
  ::close(file);
  path = std::move(name);
  return saved;
}

// Points fd 2 back at `saved`, writes out what the file at `path` caught, and removes it.
void restore_stderr(int saved, const std::string& path) {
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  ::close(saved);
  if (FILE* caught = std::fopen(path.c_str(), "rb")) {
    std::array<char, 4096> chunk;
    for (size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), caught)) > 0;) std::fwrite(chunk.data(), 1, n, stderr);
    std::fclose(caught);
    std::fflush(stderr);
  }
  unlink(path.c_str());
}

}  // namespace

CursesTerminal::CursesTerminal() : state_(std::make_unique<State>()) {}

CursesTerminal::~CursesTerminal() { close(); }

std::unique_ptr<CursesTerminal> CursesTerminal::open(CursesOptions options, std::string& error) {
  if (g_terminal_open) {
    error = "a curses terminal is already open";
    return nullptr;
  }
  // ncursesw can write UTF-8 only when the C library's locale encodes it; a program that never
  // called setlocale() is still in "C", so take the user's locale from the environment.
  const char* current = std::setlocale(LC_CTYPE, nullptr);
  if (current != nullptr && (std::strcmp(current, "C") == 0 || std::strcmp(current, "POSIX") == 0)) {
    std::setlocale(LC_CTYPE, "");
  }
  FILE* output = options.output != nullptr ? options.output : stdout;
  FILE* input = options.input != nullptr ? options.input : stdin;
  const bool owns_signals = options.handle_signals && !g_handlers_installed;
  if (owns_signals) install_signal_handlers(input, output);
  SCREEN* screen = newterm(options.term_type, output, input);
  if (screen == nullptr) {
    if (owns_signals) restore_signal_handlers();
    const auto term =
        options.term_type != nullptr ? std::optional<std::string>(options.term_type) : options.env("TERM");
    error = "cannot start the terminal UI for TERM=" + term.value_or("(unset)");
    return nullptr;
  }
  set_term(screen);
  std::unique_ptr<CursesTerminal> terminal(new CursesTerminal());
  terminal->state_->screen = screen;
  g_terminal_open = true;

  cbreak();
  noecho();
  nonl();
  intrflush(stdscr, FALSE);
  keypad(stdscr, TRUE);
  set_escdelay(25);
  // Every frame whole: with typeahead checking, ncurses abandons an update while input is pending,
  // and the App, which draws only when something changed, could leave it half-drawn.
  typeahead(-1);
  curs_set(0);

  terminal->utf8_ = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  terminal->colors_ = has_colors() ? std::max(0, tigetnum("colors")) : 0;
  terminal->theme_ = options.theme ? *options.theme : choose_theme(options.env, terminal->colors_);
  if (options.glyphs != nullptr) {
    terminal->glyphs_ = options.glyphs;
  } else {
    terminal->glyphs_ = terminal->utf8_ ? &choose_glyphs(options.env) : &ascii_glyphs();
  }
  terminal->apply_theme();
  if (owns_signals) {
    prepare_exit_sequence();
    terminal->state_->owns_signals = true;
  }
  if (options.capture_stderr.value_or(isatty(STDERR_FILENO) == 1)) {
    terminal->state_->saved_stderr = set_stderr_aside(terminal->state_->stderr_path);
  }
  return terminal;
}

void CursesTerminal::apply_theme() {
  use_color_ = theme_.uses_color && has_colors();
  if (!use_color_) return;
  start_color();
  const bool terminal_defaults = use_default_colors() == OK;
  for (size_t i = 0; i < kColorRoleCount; ++i) {
    const RoleStyle& style = theme_.roles[i];
    const int fg = style.fg == Color::kDefault ? (terminal_defaults ? -1 : COLOR_WHITE) : static_cast<int>(style.fg);
    const int bg = style.bg == Color::kDefault ? (terminal_defaults ? -1 : COLOR_BLACK) : static_cast<int>(style.bg);
    init_pair(static_cast<short>(i + 1), static_cast<short>(fg), static_cast<short>(bg));
  }
}

void CursesTerminal::close() {
  if (state_->closed) return;
  state_->closed = true;
  endwin();
  delscreen(state_->screen);
  state_->screen = nullptr;
  if (state_->saved_stderr >= 0) {
    restore_stderr(state_->saved_stderr, state_->stderr_path);
    state_->saved_stderr = -1;
  }
  if (state_->owns_signals) restore_signal_handlers();
  g_terminal_open = false;
}

int CursesTerminal::caught_signal() const { return state_->owns_signals ? static_cast<int>(g_caught_signal) : 0; }

void CursesTerminal::resize(int width, int height) { resizeterm(std::max(1, height), std::max(1, width)); }

Size CursesTerminal::size() const {
  int rows = 0;
  int cols = 0;
  getmaxyx(stdscr, rows, cols);
  return {cols, rows};
}

std::optional<Key> CursesTerminal::read_escape_sequence() {
  // keypad() already waited the Esc delay for sequences terminfo knows; what follows now is a
  // sequence it does not know (Alt-x, xterm's CSI u) or a lone Esc.
  std::string bytes = "\x1b";
  std::optional<Key> function_key;
  wtimeout(stdscr, 0);
  for (int i = 0; i < 32; ++i) {
    wint_t ch = 0;
    const int rc = wget_wch(stdscr, &ch);
    if (rc == ERR) break;
    if (rc == KEY_CODE_YES) {
      function_key = key_from_curses(static_cast<int>(ch), true);
      break;
    }
    bytes += to_utf8(static_cast<char32_t>(ch));
  }
  std::vector<Key> keys = decode_keys(bytes);
  if (function_key) keys.push_back(*function_key);
  if (keys.empty()) return std::nullopt;
  pending_.insert(pending_.end(), keys.begin() + 1, keys.end());
  return keys.front();
}

std::optional<Key> CursesTerminal::read_key(std::chrono::milliseconds timeout) {
  if (g_caught_signal != 0 && state_->owns_signals) return Key::of(Key::kInterrupt);
  if (!pending_.empty()) {
    const Key key = pending_.front();
    pending_.pop_front();
    return key;
  }
  wtimeout(stdscr, static_cast<int>(std::clamp<long long>(timeout.count(), -1, 1 << 30)));
  wint_t ch = 0;
  const int rc = wget_wch(stdscr, &ch);
  if (g_caught_signal != 0 && state_->owns_signals) return Key::of(Key::kInterrupt);
  if (rc == ERR) return std::nullopt;
  if (rc == KEY_CODE_YES) {
    if (ch == KEY_MOUSE) {
      MEVENT event{};
      if (getmouse(&event) != OK) return std::nullopt;
      if (event.bstate & BUTTON4_PRESSED) return Key::mouse(Key::kWheelUp, event.x, event.y);
      if (event.bstate & BUTTON5_PRESSED) return Key::mouse(Key::kWheelDown, event.x, event.y);
      if (event.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return Key::mouse(Key::kMouseClick, event.x, event.y);
      return std::nullopt;
    }
    return key_from_curses(static_cast<int>(ch), true);
  }
  if (ch == 0x1B) return read_escape_sequence();
  return key_from_code_point(static_cast<char32_t>(ch));
}

void CursesTerminal::present(const Canvas& canvas) {
  int rows = 0;
  int cols = 0;
  getmaxyx(stdscr, rows, cols);
  const int height = std::min(rows, canvas.height());
  const int width = std::min(cols, canvas.width());
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const Cell& cell = canvas.at(x, y);
      if (cell.glyph.empty()) continue;
      const std::u32string code_points = to_u32(cell.glyph);
      const int glyph_width = code_point_width(code_points.front());
      std::array<wchar_t, CCHARW_MAX + 1> wide{};
      const bool encodable = utf8_ || std::all_of(code_points.begin(), code_points.end(),
                                                  [](char32_t c) { return c < 0x80; });
      if (glyph_width == 2 && x + 1 >= cols) {
        wide[0] = L' ';
      } else if (!encodable) {
        wide[0] = L'?';
      } else {
        for (size_t i = 0; i < code_points.size() && i < CCHARW_MAX; ++i) {
          wide[i] = static_cast<wchar_t>(code_points[i]);
        }
      }
      const RoleStyle& style = theme_.style(cell.role);
      const short pair = use_color_ ? static_cast<short>(static_cast<size_t>(cell.role) + 1) : 0;
      cchar_t cc{};
      setcchar(&cc, wide.data(), attributes_of(style.attrs), pair, nullptr);
      mvwadd_wch(stdscr, y, x, &cc);
      // A wide glyph replaced by '?' still owns two columns.
      if (!encodable && glyph_width == 2 && x + 1 < cols) mvwadd_wch(stdscr, y, x + 1, &cc);
    }
  }
  if (cursor_ && cursor_->x >= 0 && cursor_->x < cols && cursor_->y >= 0 && cursor_->y < rows) {
    curs_set(1);
    wmove(stdscr, cursor_->y, cursor_->x);
  } else {
    curs_set(0);
  }
  wnoutrefresh(stdscr);
  doupdate();
}

void CursesTerminal::invalidate() { clearok(curscr, TRUE); }

void CursesTerminal::set_mouse_enabled(bool enabled) {
  mousemask(enabled ? (BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED) : 0, nullptr);
  mouseinterval(0);
}

}  // namespace vn::tui
