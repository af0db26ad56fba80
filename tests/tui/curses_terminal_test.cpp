// SPDX-License-Identifier: Apache-2.0
// Runs the real curses binding on a headless screen: newterm() with /dev/null for input and
// output, then reads what was drawn back out of curses' own window.
#include "tui/curses_terminal.h"

#include <gtest/gtest.h>

#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#define NCURSES_WIDECHAR 1
#define NCURSES_NOMACROS 1
#include <curses.h>

#include "tui/text.h"

namespace vn::tui {
namespace {

using namespace std::chrono_literals;

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class HeadlessCurses : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_locale_ = std::setlocale(LC_CTYPE, nullptr);
    ASSERT_NE(std::setlocale(LC_CTYPE, "C.UTF-8"), nullptr);
    out_ = std::fopen("/dev/null", "w");
    in_ = std::fopen("/dev/null", "r");
    ASSERT_NE(out_, nullptr);
    ASSERT_NE(in_, nullptr);
  }
  void TearDown() override {
    terminal_.reset();
    std::fclose(out_);
    std::fclose(in_);
    std::setlocale(LC_CTYPE, saved_locale_.c_str());
  }

  CursesOptions options(std::map<std::string, std::string> env = {{"LANG", "C.UTF-8"}, {"TERM", "xterm-256color"}}) {
    CursesOptions o;
    o.term_type = "xterm-256color";
    o.output = out_;
    o.input = in_;
    o.env = fake_env(std::move(env));
    return o;
  }

  void open(CursesOptions o) {
    std::string error;
    terminal_ = CursesTerminal::open(std::move(o), error);
    ASSERT_NE(terminal_, nullptr) << error;
  }

  // Row y of the curses screen as text, read with mvwinnwstr.
  static std::string row_text(int y, int width) {
    std::vector<wchar_t> buffer(static_cast<size_t>(width) * 2 + 1, 0);
    const int n = mvwinnwstr(stdscr, y, 0, buffer.data(), width * 2);
    std::u32string text;
    for (int i = 0; i < n && buffer[static_cast<size_t>(i)] != 0; ++i) {
      text += static_cast<char32_t>(buffer[static_cast<size_t>(i)]);
    }
    std::string utf8 = to_utf8(text);
    while (!utf8.empty() && utf8.back() == ' ') utf8.pop_back();
    return utf8;
  }

  // Row y as cells, read with mvwin_wchnstr: the first character and attributes of each cell.
  struct CellInfo {
    wchar_t ch;
    attr_t attrs;
    short pair;
  };
  static std::vector<CellInfo> row_cells(int y, int width) {
    std::vector<cchar_t> cells(static_cast<size_t>(width) + 1);
    mvwin_wchnstr(stdscr, y, 0, cells.data(), width);
    std::vector<CellInfo> out;
    for (int x = 0; x < width; ++x) {
      wchar_t wch[CCHARW_MAX + 1] = {};
      attr_t attrs = 0;
      short pair = 0;
      getcchar(&cells[static_cast<size_t>(x)], wch, &attrs, &pair, nullptr);
      out.push_back({wch[0], attrs, pair});
    }
    return out;
  }

  std::string saved_locale_;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
  std::unique_ptr<CursesTerminal> terminal_;
};

TEST_F(HeadlessCurses, PresentsCjkTextAndBoxesWithThemeAttributes) {
  open(options());
  EXPECT_TRUE(terminal_->utf8());
  EXPECT_FALSE(terminal_->glyphs().ascii);
  EXPECT_EQ(terminal_->theme().name, "default");
  EXPECT_EQ(terminal_->color_count(), 256);
  terminal_->resize(40, 10);
  ASSERT_EQ(terminal_->size(), (Size{40, 10}));

  Canvas canvas(40, 10);
  canvas.set_glyphs(terminal_->glyphs());
  canvas.draw_box(Rect{0, 0, 20, 4}, ColorRole::kAccent, "层");
  canvas.put_text(1, 1, "精度 accuracy", ColorRole::kError);
  canvas.put_text(1, 2, "e\xCC\x81 ok", ColorRole::kOk);
  canvas.put_text(39, 9, "Z");  // the bottom-right cell, where curses cannot advance the cursor
  terminal_->set_cursor(Point{3, 5});
  terminal_->present(canvas);
  EXPECT_EQ(getcury(stdscr), 5);  // before the reads below, which move the cursor
  EXPECT_EQ(getcurx(stdscr), 3);

  EXPECT_EQ(row_text(0, 40), "┌─ 层 ─────────────┐");
  EXPECT_EQ(row_text(1, 40), "│精度 accuracy     │");
  EXPECT_EQ(row_text(3, 40), "└──────────────────┘");
  EXPECT_EQ(row_text(9, 40), std::string(39, ' ') + "Z");
  // mvwin_wchnstr returns one cchar_t per character: the second column of a wide one is skipped.
  const auto cells = row_cells(1, 40);
  EXPECT_EQ(cells[1].ch, L'精');
  EXPECT_EQ(cells[2].ch, L'度');
  EXPECT_EQ(cells[4].ch, L'a');
  EXPECT_EQ(cells[4].pair, static_cast<short>(static_cast<int>(ColorRole::kError) + 1));
  EXPECT_NE(cells[4].attrs & A_BOLD, 0u);
  EXPECT_EQ(cells[0].pair, static_cast<short>(static_cast<int>(ColorRole::kAccent) + 1));
  // The combining accent stays with its base character in one cell.
  std::vector<cchar_t> combined(2);
  mvwin_wchnstr(stdscr, 2, 1, combined.data(), 1);
  wchar_t wch[CCHARW_MAX + 1] = {};
  attr_t attrs = 0;
  short pair = 0;
  getcchar(&combined[0], wch, &attrs, &pair, nullptr);
  EXPECT_EQ(wch[0], L'e');
  EXPECT_EQ(wch[1], L'\u0301');

  terminal_->invalidate();
  terminal_->set_mouse_enabled(true);
  terminal_->set_mouse_enabled(false);
  terminal_->present(canvas);
  EXPECT_EQ(row_text(1, 40), "│精度 accuracy     │");
}

TEST_F(HeadlessCurses, NoColorGivesTheMonochromeThemeAndPairZero) {
  open(options({{"LANG", "C.UTF-8"}, {"NO_COLOR", "1"}}));
  EXPECT_EQ(terminal_->theme().name, "monochrome");
  terminal_->resize(10, 2);
  Canvas canvas(10, 2);
  canvas.put_text(0, 0, "sel", ColorRole::kSelection);
  terminal_->present(canvas);
  const auto cells = row_cells(0, 10);
  EXPECT_EQ(cells[0].pair, 0);
  EXPECT_NE(cells[0].attrs & A_REVERSE, 0u);
}

TEST_F(HeadlessCurses, NonUtf8LocaleFallsBackToAscii) {
  ASSERT_NE(std::setlocale(LC_CTYPE, "C"), nullptr);
  // open() takes LC_CTYPE from the environment when the program left it at "C".
  const char* saved_lc_all = std::getenv("LC_ALL");
  const std::string saved = saved_lc_all != nullptr ? saved_lc_all : "";
  ::setenv("LC_ALL", "C", 1);
  open(options({{"LANG", "C"}}));
  if (saved_lc_all != nullptr) {
    ::setenv("LC_ALL", saved.c_str(), 1);
  } else {
    ::unsetenv("LC_ALL");
  }
  EXPECT_FALSE(terminal_->utf8());
  EXPECT_TRUE(terminal_->glyphs().ascii);
  terminal_->resize(12, 2);
  Canvas canvas(12, 2);
  canvas.set_glyphs(terminal_->glyphs());
  canvas.put_text(0, 0, "精度 ok");
  terminal_->present(canvas);
  EXPECT_EQ(row_text(0, 12), "???? ok");  // each wide glyph keeps its two columns
}

TEST_F(HeadlessCurses, SignalBecomesInterruptKey) {
  open(options());
  EXPECT_EQ(terminal_->caught_signal(), 0);
  EXPECT_EQ(terminal_->read_key(0ms), std::nullopt);
  std::raise(SIGTERM);
  EXPECT_EQ(terminal_->read_key(0ms), Key::of(Key::kInterrupt));
  EXPECT_EQ(terminal_->caught_signal(), SIGTERM);
  terminal_->close();
  terminal_->close();  // idempotent
  struct sigaction current {};
  sigaction(SIGTERM, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);  // the previous handler is back
}

TEST_F(HeadlessCurses, StderrIsSetAsideWhileTheScreenIsUpAndWrittenOutAtClose) {
  // The test's own stderr goes to a file, so that what reaches it can be read back; TMPDIR is a
  // fresh directory, so that the file stderr is set aside in can be seen, then seen gone.
  char dir_template[] = "/tmp/vn_stderr_test_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  ASSERT_NE(dir, nullptr);
  const std::string own = std::string(dir) + "/own";
  const int file = ::open(own.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(file, 0);
  std::fflush(stderr);
  const int real = dup(STDERR_FILENO);
  ASSERT_GE(dup2(file, STDERR_FILENO), 0);
  const char* saved_tmpdir = std::getenv("TMPDIR");
  const std::string previous = saved_tmpdir != nullptr ? saved_tmpdir : "";
  setenv("TMPDIR", dir, 1);
  const auto read_own = [&] {
    std::ifstream in(own);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto set_aside_files = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().filename().string().rfind("vernier-stderr-", 0) == 0;
    return n;
  };

  CursesOptions o = options();
  o.capture_stderr = true;
  open(o);
  std::fprintf(stderr, "a warning from a library\n");
  std::fflush(stderr);
  EXPECT_EQ(read_own(), "");
  EXPECT_EQ(set_aside_files(), 1);
  terminal_->close();
  EXPECT_EQ(read_own(), "a warning from a library\n");
  EXPECT_EQ(set_aside_files(), 0);

  std::fflush(stderr);
  dup2(real, STDERR_FILENO);
  ::close(real);
  ::close(file);
  if (saved_tmpdir != nullptr) {
    setenv("TMPDIR", previous.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  std::filesystem::remove_all(dir);
}

TEST_F(HeadlessCurses, OnlyOneTerminalAtATimeAndUnknownTermFails) {
  open(options());
  std::string error;
  EXPECT_EQ(CursesTerminal::open(options(), error), nullptr);
  EXPECT_EQ(error, "a curses terminal is already open");
  terminal_.reset();
  CursesOptions bad = options();
  bad.term_type = "no-such-terminal-type";
  EXPECT_EQ(CursesTerminal::open(std::move(bad), error), nullptr);
  EXPECT_EQ(error, "cannot start the terminal UI for TERM=no-such-terminal-type");
  open(options());  // usable again after the failures
}

TEST_F(HeadlessCurses, KeyCodesFromCurses) {
  open(options());
  EXPECT_EQ(key_from_curses(KEY_UP, true), Key::of(Key::kUp));
  EXPECT_EQ(key_from_curses(KEY_NPAGE, true), Key::of(Key::kPageDown));
  EXPECT_EQ(key_from_curses(KEY_BACKSPACE, true), Key::of(Key::kBackspace));
  EXPECT_EQ(key_from_curses(KEY_BTAB, true), Key::of(Key::kTab, kModShift));
  EXPECT_EQ(key_from_curses(KEY_F(1), true), Key::of(Key::kF1));
  EXPECT_EQ(key_from_curses(KEY_F(14), true), Key::of(Key::kF2, kModShift));
  EXPECT_EQ(key_from_curses(KEY_F(36), true), Key::of(Key::kF12, kModCtrl));
  EXPECT_EQ(key_from_curses(KEY_RESIZE, true), Key::of(Key::kResize));
  EXPECT_EQ(key_from_curses(KEY_SRIGHT, true), Key::of(Key::kRight, kModShift));
  EXPECT_EQ(key_from_curses(KEY_MOUSE, true), std::nullopt);
  EXPECT_EQ(key_from_curses('q', false), Key::of('q'));
  EXPECT_EQ(key_from_curses(0x17, false), Key::ctrl('w'));
  EXPECT_EQ(key_from_curses(0x7F, false), Key::of(Key::kBackspace));
  // xterm's Ctrl-Up has no KEY_ constant; ncurses gives it a code named after its terminfo entry.
  const char* sequence = tigetstr("kUP5");
  ASSERT_NE(sequence, nullptr);
  ASSERT_NE(sequence, reinterpret_cast<const char*>(-1));
  const int code = key_defined(sequence);
  ASSERT_GT(code, 0);
  EXPECT_EQ(key_from_curses(code, true), Key::of(Key::kUp, kModCtrl));
}

}  // namespace
}  // namespace vn::tui
