// SPDX-License-Identifier: Apache-2.0
#include "tui/app.h"
#include "tui/i18n.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "golden.h"
#include "tui/script_terminal.h"
#include "tui/widgets/progress.h"
#include "tui/widgets/prompt.h"
#include "tui/widgets/table.h"

namespace vn::tui {
namespace {

using namespace std::chrono_literals;

// A screen with a filterable table; Enter opens a good/bad prompt as a drill-in.
class LayersView : public View {
 public:
  LayersView() : table_({{"Layer", 0}, {"Max abs", 10, Align::kRight}}) {
    std::vector<TableRow> rows;
    for (int i = 0; i < 50; ++i) rows.push_back({{"node" + std::to_string(i), std::to_string(i % 7)}});
    table_.set_rows(std::move(rows));
  }
  std::string_view id() const override { return "layers"; }
  std::string title() const override { return "Layers"; }
  void resize(Rect area) override {
    area_ = area;
    table_.resize(area);
  }
  void draw(Canvas& canvas) const override {
    table_.draw(canvas);
    if (prompt_) prompt_->draw(canvas, area_);
  }
  unsigned handle(Action action) override {
    if (prompt_) {
      const unsigned result = prompt_->handle(action);
      if (prompt_->result()) {
        answers.push_back(*prompt_->result());
        prompt_.reset();
      }
      return result;
    }
    if (action == Action::kEnter) {
      prompt_.emplace("Is it bad?",
                      std::vector<PromptChoice>{{Action::kGood, "good", "g"}, {Action::kBad, "bad", "b"}});
      return kHandled | kRedraw;
    }
    if (action == Action::kRight) {
      target_ = "log";
      return kHandled | kSwitchView;
    }
    return table_.handle(action);
  }
  KeyContext key_context() const override { return prompt_ ? KeyContext::kPrompt : KeyContext::kNormal; }
  bool filterable() const override { return true; }
  std::string filter_text() const override { return table_.filter(); }
  void apply_filter(std::string_view text) override { table_.set_filter(text); }
  std::string switch_target() const override { return target_; }
  std::string status_text() const override { return table_.position_text(); }
  std::vector<Action> help_actions() const override { return {Action::kUp, Action::kDown, Action::kEnter}; }
  unsigned handle_mouse(const Key& event) override {
    if (event.code != Key::kMouseClick) return kIgnored;
    clicks.push_back({event.x, event.y});
    return kHandled;
  }

  const Table& table() const { return table_; }
  std::vector<Action> answers;
  std::vector<Point> clicks;

 private:
  Table table_;
  Rect area_;
  std::optional<Prompt> prompt_;
  std::string target_;
};

// A screen whose background job advances on every tick until it is done.
class JobView : public View {
 public:
  std::string_view id() const override { return "log"; }
  std::string title() const override { return done_ < 4 ? "Reduce (running)" : "Reduce"; }
  void resize(Rect area) override { area_ = area; }
  void draw(Canvas& canvas) const override {
    ProgressBar bar;
    bar.set(done_ / 4.0, "reduce", "");
    bar.draw(canvas, area_);
  }
  unsigned handle(Action action) override {
    if (action == Action::kCancelJob) {
      done_ = 4;
      return kHandled | kRedraw;
    }
    return kIgnored;
  }
  bool tick(std::chrono::steady_clock::time_point now) override {
    last_tick = now;
    ++ticks;
    if (done_ >= 4) return false;
    ++done_;
    return true;
  }
  int ticks = 0;
  std::chrono::steady_clock::time_point last_tick;

 private:
  Rect area_;
  int done_ = 0;
};

struct Fixture {
  explicit Fixture(int w = 80, int h = 24, AppOptions options = {})
      : terminal(w, h), app(terminal, std::move(options)) {
    layers = static_cast<LayersView*>(&app.add_view(std::make_unique<LayersView>()));
    job = static_cast<JobView*>(&app.add_view(std::make_unique<JobView>()));
  }
  ScriptTerminal terminal;
  App app;
  LayersView* layers;
  JobView* job;
};

TEST(App, FirstFrameGolden80x24) {
  Fixture f;
  f.app.run(0);
  EXPECT_EQ(f.terminal.present_count(), 1);
  testing::expect_golden("app_80x24", testing::screen_text(f.terminal.screen()));
  EXPECT_EQ(f.terminal.last_timeout(), 0ms);  // no key was read yet
  EXPECT_FALSE(f.terminal.cursor().has_value());
}

TEST(App, ScriptedRunSwitchesTabsOpensHelpResizesAndQuits) {
  Fixture f;
  ASSERT_TRUE(f.terminal.push_keys("j j j Tab"));
  f.app.run(4);
  EXPECT_EQ(f.layers->table().selected_row(), 3u);
  EXPECT_EQ(f.app.active_index(), 1u);
  EXPECT_EQ(f.terminal.last_timeout(), 100ms);
  f.terminal.push_keys("1");
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 0u);
  f.terminal.push_keys("F2 Shift-Tab");
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 1u);
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 0u);

  f.terminal.push_keys("?");
  f.app.run(1);
  EXPECT_TRUE(f.app.help_visible());
  testing::expect_golden("app_help_80x24", testing::screen_text(f.terminal.screen()));
  f.terminal.push_keys("j PgDn");  // scrolls the help, not the table
  f.app.run(2);
  EXPECT_EQ(f.layers->table().selected_row(), 3u);
  f.terminal.push_keys("Esc");
  f.app.run(1);
  EXPECT_FALSE(f.app.help_visible());

  f.terminal.push_resize(40, 10);
  f.app.run(1);
  EXPECT_EQ(f.terminal.screen().width(), 40);
  EXPECT_EQ(f.terminal.invalidate_count(), 1);
  testing::expect_golden("app_40x10", testing::screen_text(f.terminal.screen()));

  f.terminal.push_keys("Q j");
  const long iterations = f.app.run(10);
  EXPECT_EQ(iterations, 1);
  EXPECT_TRUE(f.app.quit_requested());
  EXPECT_EQ(f.terminal.pending(), 1u);  // the j after Q was never read
}

TEST(App, TinyTerminalsDoNotCrash) {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{20, 8}, {10, 3}, {5, 2}, {1, 1}, {0, 0}}) {
    Fixture f(w, h);
    f.terminal.push_keys("j ? j Esc : a b Enter / x Esc Tab");
    f.terminal.push_resize(h, w);
    f.app.run(20);
    EXPECT_EQ(f.terminal.screen().width(), h) << w << "x" << h;
  }
  Fixture f(20, 8);
  f.app.run(0);
  testing::expect_golden("app_20x8", testing::screen_text(f.terminal.screen()));
}

TEST(App, RedrawsOnlyWhenSomethingChanged) {
  Fixture f;
  f.app.run(0);
  EXPECT_EQ(f.app.frames(), 1);
  f.app.run(4);  // the job ticks four times, each a change
  EXPECT_EQ(f.app.frames(), 5);
  f.app.run(10);  // idle: nothing changes
  EXPECT_EQ(f.app.frames(), 5);
  EXPECT_EQ(f.job->ticks, 14);
  f.terminal.push_keys("z");  // unbound key
  f.app.run(1);
  EXPECT_EQ(f.app.frames(), 5);
  f.terminal.push_keys("k");  // already at the top: handled, nothing to redraw
  f.app.run(1);
  EXPECT_EQ(f.app.frames(), 5);
  f.terminal.push_keys("j");
  f.app.run(1);
  EXPECT_EQ(f.app.frames(), 6);
  f.terminal.push_keys("Ctrl-L");
  f.app.run(1);
  EXPECT_EQ(f.terminal.invalidate_count(), 1);
}

TEST(App, TicksUseTheInjectedClock) {
  AppOptions options;
  const auto epoch = std::chrono::steady_clock::time_point{} + 42s;
  options.clock = [epoch] { return epoch; };
  options.poll_interval = 25ms;
  Fixture f(80, 24, options);
  f.app.run(1);
  EXPECT_EQ(f.job->last_tick, epoch);
  EXPECT_EQ(f.terminal.last_timeout(), 25ms);
}

TEST(App, CommandLineEditingHistoryAndDispatch) {
  Fixture f;
  f.terminal.push_keys(":");
  f.terminal.push_text("view logs");
  f.terminal.push_keys("Backspace");
  f.app.run(11);
  EXPECT_TRUE(f.app.command_line_open());
  EXPECT_EQ(f.app.line_text(), "view log");
  ASSERT_TRUE(f.terminal.cursor().has_value());
  EXPECT_EQ(*f.terminal.cursor(), (Point{9, 23}));
  EXPECT_NE(f.terminal.dump().find("\n:view log\n"), std::string::npos);
  f.terminal.push_keys("Enter");
  f.app.run(1);
  EXPECT_FALSE(f.app.command_line_open());
  EXPECT_EQ(f.app.active_index(), 1u);
  EXPECT_FALSE(f.terminal.cursor().has_value());

  // Ctrl-A, Ctrl-E, Ctrl-K, Ctrl-U, Ctrl-W and history recall.
  f.terminal.push_keys(": l a y e r s Ctrl-A Delete Ctrl-E Ctrl-W x y Ctrl-A Right Ctrl-K");
  f.app.run(16);
  EXPECT_EQ(f.app.line_text(), "x");
  f.terminal.push_keys("Ctrl-U Up");
  f.app.run(2);
  EXPECT_EQ(f.app.line_text(), "view log");
  f.terminal.push_keys("Down Ctrl-G");
  f.app.run(2);
  EXPECT_FALSE(f.app.command_line_open());
  EXPECT_EQ(f.app.active_index(), 1u);  // cancelled: nothing ran
  EXPECT_EQ(f.app.command_history().size(), 1u);

  f.terminal.push_keys(": 1 Enter");  // neither a command, an action nor a screen id
  f.app.run(3);
  EXPECT_EQ(f.app.status_line().message(), "unknown command: 1");
  EXPECT_EQ(f.app.status_line().message_role(), ColorRole::kError);
  f.terminal.push_keys("j");  // the message disappears at the next key
  f.app.run(1);
  EXPECT_EQ(f.app.status_line().message(), "");
}

TEST(App, BuiltInCommandsAndAddedOnes) {
  Fixture f;
  std::vector<std::string> seen;
  f.app.add_command({"save", "FILE", "Save the table", [&](std::string_view args) {
                       seen.emplace_back(args);
                       return CommandResult{kHandled | kRedraw, "saved", false};
                     }});
  f.app.run(0);
  f.app.execute_command("log");
  EXPECT_EQ(f.app.active_index(), 1u);
  f.app.execute_command("view layers");
  EXPECT_EQ(f.app.active_index(), 0u);
  f.app.execute_command("view nowhere");
  EXPECT_EQ(f.app.status_line().message(), "no screen named 'nowhere'");
  // A screen the program family has but this program does not.
  f.app.set_screen_catalog({"layers", "log", "reduce"});
  f.app.execute_command("view reduce");
  EXPECT_EQ(f.app.status_line().message(), "the reduce screen is not part of this command");
  f.app.execute_command("down");  // an action name runs the action
  EXPECT_EQ(f.layers->table().selected_row(), 1u);
  f.app.execute_command("  save  out.json ");
  EXPECT_EQ(seen, (std::vector<std::string>{"out.json"}));
  EXPECT_EQ(f.app.status_line().message(), "saved");
  EXPECT_EQ(f.app.status_line().message_role(), ColorRole::kOk);
  f.app.execute_command("frobnicate");
  EXPECT_EQ(f.app.status_line().message(), "unknown command: frobnicate");
  f.app.execute_command("bind");
  EXPECT_EQ(f.app.status_line().message(), "usage: bind ACTION KEY");
  f.app.execute_command("bind nothing x");
  EXPECT_EQ(f.app.status_line().message(), "unknown action 'nothing'");
  f.app.execute_command("bind quit Hyper-x");
  EXPECT_EQ(f.app.status_line().message(), "invalid key 'Hyper-x'");
  f.app.execute_command("help");
  EXPECT_TRUE(f.app.help_visible());
  f.app.execute_command("bind quit x");
  EXPECT_EQ(f.app.status_line().message(), "bind quit x (x moved from cancel_job)");
  f.app.execute_command("help");
  f.terminal.push_keys("x");
  f.app.run(1);
  EXPECT_TRUE(f.app.quit_requested());
  Fixture g;
  g.app.add_command({"stop", "", "Stop", [](std::string_view) { return CommandResult{kQuit, "", false}; }});
  g.app.execute_command("stop");
  EXPECT_TRUE(g.app.quit_requested());
  Fixture h;
  h.app.execute_command("q");
  EXPECT_TRUE(h.app.quit_requested());
}

TEST(App, OneListOfCommandsEachWithItsHelpLine) {
  Fixture f;
  f.app.add_command({"save", "FILE", "Save the table", [](std::string_view) { return CommandResult{}; }});
  std::vector<std::string> names;
  for (const Command& c : f.app.commands()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"quit", "help", "view", "bind", "unbind", "save"}));
  std::string help;
  for (const HelpLine& line : f.app.help_document()) help += line.text + "\n";
  for (const Command& c : f.app.commands()) {
    EXPECT_FALSE(c.help.empty()) << c.name;
    EXPECT_NE(help.find(":" + c.name), std::string::npos) << c.name;
    EXPECT_NE(help.find(c.help), std::string::npos) << c.name;
    if (c.name == "save") continue;  // the test's own command
    const auto table = translation_table();
    EXPECT_TRUE(std::any_of(table.begin(), table.end(), [&](const Translation& t) { return t.english == c.help; }))
        << "the help line of :" << c.name << " has no translation in tui/i18n_zh.inc";
  }
}

TEST(App, TabCompletesCommandsAndTheirArguments) {
  Fixture f;
  f.terminal.push_keys(": v i Tab");
  f.app.run(4);
  EXPECT_EQ(f.app.line_text(), "view ");
  // Two screens start with l: the first Tab goes as far as they agree, then cycles them.
  f.terminal.push_keys("l Tab");
  f.app.run(2);
  EXPECT_EQ(f.app.line_text(), "view layers");
  EXPECT_EQ(f.app.completions(), (std::vector<std::string>{"layers", "log"}));
  EXPECT_NE(f.terminal.dump().find("layers  log"), std::string::npos) << f.terminal.dump();
  f.terminal.push_keys("Tab");
  f.app.run(1);
  EXPECT_EQ(f.app.line_text(), "view log");
  f.terminal.push_keys("Enter");
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 1u);
  EXPECT_TRUE(f.app.completions().empty());
  // bind completes action names; an unknown word completes to nothing.
  f.terminal.push_keys(": b i Tab w o r Tab");
  f.app.run(8);
  EXPECT_EQ(f.app.line_text(), "bind worst");
  f.terminal.push_keys("Ctrl-U z z Tab");
  f.app.run(4);
  EXPECT_EQ(f.app.line_text(), "zz");
}

TEST(App, QuitAsksFirstWithKeysNoQuestionUses) {
  AppOptions options;
  bool running = true;
  options.quit_warning = [&] { return running ? std::string("Quitting cancels the work") : std::string(); };
  Fixture f(80, 24, options);
  // q at the top asks; y (a question's answer) only stays, and reaches nothing.
  f.terminal.push_keys("q");
  f.app.run(1);
  EXPECT_TRUE(f.app.quit_pending());
  EXPECT_EQ(f.app.status_line().message(), "Quitting cancels the work: Q quits, Ctrl-C too; any other key stays");
  f.terminal.push_keys("Enter y");
  f.app.run(2);
  EXPECT_FALSE(f.app.quit_requested());
  EXPECT_FALSE(f.app.quit_pending());
  EXPECT_TRUE(f.layers->answers.empty());  // Enter was the confirmation's, not a drill-in
  // Esc never quits, asked or not; Q asks too, and Q again quits.
  f.terminal.push_keys("Esc Esc Q");
  f.app.run(3);
  EXPECT_TRUE(f.app.quit_pending());
  EXPECT_FALSE(f.app.quit_requested());
  f.terminal.push_keys("Q");
  f.app.run(1);
  EXPECT_TRUE(f.app.quit_requested());
  // Once the work ended, q quits at once.
  running = false;
  Fixture g(80, 24, options);
  g.terminal.push_keys("q");
  g.app.run(1);
  EXPECT_TRUE(g.app.quit_requested());
}

TEST(App, HelpIsPerScreenFromTheActionTable) {
  Fixture f;
  const std::vector<HelpLine> lines = f.app.screen_help(*f.layers);
  std::string text;
  for (const HelpLine& line : lines) text += line.text + "\n";
  EXPECT_EQ(lines.front().text, "Layers: keys on this screen");
  // The screen's own actions, filter (it is filterable), the App's; nothing the screen ignores.
  for (const char* name : {"down", "enter", "filter", "help", "command_line", "quit", "screen_1", "screen_2"}) {
    EXPECT_NE(text.find(std::string(" ") + name + " "), std::string::npos) << name;
  }
  for (const char* name : {"worst", "sort", "good", "screen_3", "cancel_job"}) {
    EXPECT_EQ(text.find(std::string(" ") + name + " "), std::string::npos) << name;
  }
  // The screens that exist, and only those.
  EXPECT_NE(text.find("  1 Layers     layers"), std::string::npos) << text;
  EXPECT_NE(text.find("  2 Reduce (r~ log"), std::string::npos) << text;
  EXPECT_EQ(text.find("  3 "), std::string::npos);
}

TEST(App, FilterShowsInTheStatusLineAndEscClearsIt) {
  Fixture f;
  f.terminal.push_keys("/ n o d e 4 Enter");
  f.app.run(7);
  EXPECT_EQ(f.layers->table().filter(), "node4");
  EXPECT_NE(f.terminal.screen().dump().find("/node4  (Esc clears)"), std::string::npos) << f.terminal.dump();
  f.terminal.push_keys("Esc");
  f.app.run(1);
  EXPECT_EQ(f.layers->table().filter(), "");
  EXPECT_EQ(f.terminal.screen().dump().find("Esc clears"), std::string::npos);
  EXPECT_FALSE(f.app.quit_requested());
}

TEST(App, FilterLineAppliesLiveAndEscRestores) {
  Fixture f;
  f.terminal.push_keys("/ 1 2");
  f.app.run(3);
  EXPECT_TRUE(f.app.filter_line_open());
  EXPECT_EQ(f.layers->table().filter(), "12");
  EXPECT_EQ(f.layers->table().visible_count(), 1u);  // node12
  f.terminal.push_keys("Esc");
  f.app.run(1);
  EXPECT_EQ(f.layers->table().filter(), "");
  f.terminal.push_keys("/ n o d e 4 Enter n");
  f.app.run(8);
  EXPECT_EQ(f.layers->table().filter(), "node4");
  EXPECT_EQ(f.layers->table().visible_count(), 11u);  // node4 and node40..node49
  EXPECT_EQ(f.layers->table().selected_row(), 40u);   // the filter selected node4, then n moved on
  f.terminal.push_keys("/ Up");  // the filter line starts from the current filter; Up recalls history
  f.app.run(2);
  EXPECT_EQ(f.app.line_text(), "node4");
  f.terminal.push_keys("Esc Tab /");
  f.app.run(3);
  EXPECT_FALSE(f.app.filter_line_open());
  EXPECT_EQ(f.app.status_line().message(), "this screen has no filter");
}

TEST(App, PromptContextAndViewSwitchRequests) {
  Fixture f;
  f.terminal.push_keys("Enter g");
  f.app.run(2);
  EXPECT_EQ(f.layers->answers, (std::vector<Action>{Action::kGood}));
  EXPECT_EQ(f.layers->table().selected_row(), 0u);  // g was "good", not "home"
  f.terminal.push_keys("Enter");
  f.app.run(1);
  testing::expect_golden("app_prompt_80x24", testing::screen_text(f.terminal.screen()));
  f.terminal.push_keys("q");  // back in a prompt dismisses it rather than quitting
  f.app.run(1);
  EXPECT_EQ(f.layers->answers.back(), Action::kBack);
  EXPECT_FALSE(f.app.quit_requested());
  f.terminal.push_keys("l");  // the view asks for the "log" screen
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 1u);
}

TEST(App, BackQuitsButEscapeDoesNot) {
  Fixture f;
  f.terminal.push_keys("Esc");
  f.app.run(1);
  EXPECT_FALSE(f.app.quit_requested());
  f.terminal.push_keys("q");
  f.app.run(1);
  EXPECT_TRUE(f.app.quit_requested());
  AppOptions options;
  options.back_quits = false;
  Fixture g(80, 24, options);
  g.terminal.push_keys("q");
  g.app.run(1);
  EXPECT_FALSE(g.app.quit_requested());
}

TEST(App, InterruptLeavesAtOnce) {
  Fixture f;
  f.terminal.push_keys("j");
  f.terminal.push_interrupt();
  f.terminal.push_keys("j");
  EXPECT_EQ(f.app.run(), 2);
  EXPECT_TRUE(f.app.interrupted());
  EXPECT_EQ(f.layers->table().selected_row(), 1u);
}

TEST(App, MouseIsOptional) {
  Fixture off;
  off.app.run(0);
  EXPECT_FALSE(off.terminal.mouse_enabled());
  AppOptions options;
  options.mouse = true;
  Fixture f(80, 24, options);
  f.app.run(0);
  EXPECT_TRUE(f.terminal.mouse_enabled());
  f.terminal.push_key(Key::mouse(Key::kWheelDown, 5, 5));
  f.app.run(1);
  EXPECT_EQ(f.layers->table().selected_row(), 3u);
  f.terminal.push_key(Key::mouse(Key::kMouseClick, 7, 4));
  f.app.run(1);
  EXPECT_EQ(f.layers->clicks, (std::vector<Point>{{7, 4}}));
  f.terminal.push_key(Key::mouse(Key::kMouseClick, 15, 0));  // on the second tab
  f.app.run(1);
  EXPECT_EQ(f.app.active_index(), 1u);
}

TEST(App, EmptyAppStillRuns) {
  ScriptTerminal terminal(30, 5);
  App app(terminal);
  terminal.push_keys("Tab ? Esc 3 / Q");
  app.run(10);
  EXPECT_TRUE(app.quit_requested());
  EXPECT_EQ(app.active_view(), nullptr);
}

}  // namespace
}  // namespace vn::tui
