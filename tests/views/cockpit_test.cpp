// SPDX-License-Identifier: Apache-2.0
// The screens as the full-screen commands assemble them (an App with the browser's screens, or the
// triage's): golden screens of every new or changed state in English and Chinese at 80x24 and
// 160x48, every UI string translated, the keys without traps, the worst-node jump, the mouse and
// `:view` over the one list of screens.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/flow/flowchart.h"
#include "screen_fixture.h"
#include "tests/tui/golden.h"
#include "tests/views/screen_render.h"
#include "tui/app.h"
#include "tui/i18n.h"
#include "tui/script_terminal.h"
#include "tui/widgets/tab_bar.h"
#include "views/screens/flowchart_view.h"
#include "views/screens/graph_view.h"
#include "views/screens/help_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/log_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/screens.h"
#include "views/screens/tactics_view.h"
#include "views/screens/tensor_view.h"

namespace vn::views {
namespace {

using tui::Action;
using tui::testing::expect_golden;
using tui::testing::screen_text;

// The browser's App over a session: Graph, Layers, Tensor, Log, Help.
struct Browser {
  Browser(int w, int h, std::shared_ptr<const session::LayerwiseSession> session, tui::AppOptions options = {})
      : terminal(w, h), app(terminal, std::move(options)) {
    feed = std::make_shared<SessionFeed>(std::move(session));
    app.set_screen_catalog(screen_ids());
    graph = static_cast<GraphView*>(&app.add_view(std::make_unique<GraphView>(feed)));
    layers = static_cast<LayersView*>(&app.add_view(std::make_unique<LayersView>(feed)));
    tensor = static_cast<TensorView*>(&app.add_view(std::make_unique<TensorView>(feed)));
    auto& log = static_cast<LogView&>(app.add_view(std::make_unique<LogView>(feed)));
    log.add("Compared 12 tensor(s) with atol 0.001 rtol 0.001: FAILED");
    app.add_view(std::make_unique<HelpView>([this] { return app.help_document(); }));
    app.run(1);  // one tick: the screens load the session
  }
  // Sends keys by name and runs until they are read.
  void keys(std::string_view names) {
    ASSERT_TRUE(terminal.push_keys(names)) << names;
    app.run(static_cast<long>(terminal.pending()));
  }
  void text(std::string_view utf8) {
    terminal.push_text(utf8);
    app.run(static_cast<long>(terminal.pending()));
  }
  std::string screen() const { return screen_text(terminal.screen()); }

  tui::ScriptTerminal terminal;
  tui::App app;
  std::shared_ptr<SessionFeed> feed;
  GraphView* graph;
  LayersView* layers;
  TensorView* tensor;
};

std::shared_ptr<const flow::Flowchart> chart(const std::string& lang) {
  Result<flow::Flowchart> c = flow::load_flowchart(std::string(VN_SOURCE_DIR) + "/assets/flowchart/" + lang + ".json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::make_shared<const flow::Flowchart>(c.ok() ? std::move(*c) : flow::Flowchart{});
}

// The triage at its layer-wise question, as the Flowchart screen's tests have it.
FlowchartModel asking(const std::string& lang) {
  FlowchartModel m;
  m.chart = chart(lang);
  flow::TriageStep real{"real_data", false, "no real data given (--load-inputs) to tell; synthetic data fails", {}};
  real.seconds = 0.42;
  real.builds = real.checks = 1;
  m.path = {flow::TriageStep{"sanitize", std::nullopt, "12 node(s) before, 12 after", {}}, real};
  m.current = "layerwise";
  m.phase = TriagePhase::kAsking;
  m.proposed = flow::TriageStep{"layerwise", true, "5 of 12 tensor(s) fail with every tensor marked",
                                {{"tensors", 12}, {"failed", 5}, {"first_culprit", "conv2"}}};
  return m;
}

// Draws every state the cockpit adds or changed, in the current language, checking each golden.
void check_states(const std::string& suffix) {
  for (const auto& [w, h] : {std::pair{80, 24}, std::pair{160, 48}}) {
    const std::string size = suffix + "_" + std::to_string(w) + "x" + std::to_string(h);
    auto small = testing::small_session();
    {
      Browser b(w, h, small);
      b.keys("w");  // the likeliest culprit (rank 1): branch_relu, where the error starts
      EXPECT_EQ(b.graph->rows()[b.graph->selected()].rank, 1);
      expect_golden("cockpit_graph_worst" + size, b.screen());
      b.keys("?");
      expect_golden("cockpit_graph_help" + size, b.screen());
      b.keys("Esc 2 s / h e a d Enter");
      expect_golden("cockpit_layers_sorted_filtered" + size, b.screen());
      b.keys("Esc s s s Home Down Down Down Down Enter");  // back to execution order: branch_relu
      expect_golden("cockpit_tensor_failing" + size, b.screen());
      b.keys("Esc Home Enter");  // stem passes: no histogram heading
      expect_golden("cockpit_tensor_passing" + size, b.screen());
      b.keys("Esc :");
      b.text("view ");
      b.keys("l Tab");
      expect_golden("cockpit_command_completion" + size, b.screen());
      b.keys("Esc 5");
      expect_golden("cockpit_help_screen" + size, b.screen());
      b.keys("4");
      expect_golden("cockpit_log" + size, b.screen());
    }
    {
      tui::AppOptions options;
      options.quit_warning = [] { return std::string(tui::tr("Quitting stops the comparison")); };
      Browser b(w, h, small, options);
      b.keys("q");
      expect_golden("cockpit_quit_confirmation" + size, b.screen());
    }
    {
      tui::ScriptTerminal terminal(w, h);
      tui::App app(terminal);
      auto& view = static_cast<FlowchartView&>(app.add_view(std::make_unique<FlowchartView>()));
      view.set_undo([] {});
      view.set_model(asking(tui::language() == tui::Language::kChinese ? "zh" : "en"));
      app.add_view(std::make_unique<HelpView>([&app] { return app.help_document(); }));
      terminal.push_keys("x");
      app.run(1);
      expect_golden("cockpit_flowchart_cancel" + size, screen_text(terminal.screen()));
      terminal.push_keys("Esc ?");
      app.run(2);
      expect_golden("cockpit_flowchart_help" + size, screen_text(terminal.screen()));
    }
  }
}

TEST(Cockpit, GoldenStatesInEnglishAndChineseWithEveryStringTranslated) {
  check_states("");
  const testing::LanguageScope chinese(tui::Language::kChinese);
  tui::clear_missing_translations();
  check_states("_zh");
  // Every screen of the Chinese pass drew only translated UI text (data such as node names aside).
  ReduceView reduce;
  ReduceModel m;
  m.total_nodes = 12;
  m.phase = "outputs";
  m.candidate = {3, 4};
  m.candidate_labels = {"conv2 (Conv)", "relu2 (Relu)"};
  m.history = {{1, "outputs", 12, "bad", "answered bad"}};
  m.asking = true;
  reduce.set_model(m);
  for (const auto& [w, h] : {std::pair{80, 24}, std::pair{160, 48}}) {
    expect_golden("cockpit_reduce_zh_" + std::to_string(w) + "x" + std::to_string(h), testing::render(reduce, {w, h}));
  }
  EXPECT_EQ(tui::missing_translations(), std::vector<std::string>{});
}

TEST(Cockpit, WorstJumpsThroughTheErrorsOfA5000NodeGraph) {
  Browser b(120, 40, testing::large_session(5000));
  const std::vector<GraphRow>& rows = b.graph->rows();
  ASSERT_EQ(rows.size(), 5000u);
  double worst = -1;
  for (const GraphRow& r : rows) worst = std::max(worst, r.excess);
  b.keys("w");
  const size_t first = b.graph->selected();
  EXPECT_EQ(rows[first].excess, worst);
  EXPECT_GE(first, 2500u);  // the fault sits in the middle: the screen scrolled to it
  EXPECT_NE(b.terminal.dump().find(rows[first].name), std::string::npos);
  b.keys("w");
  const size_t second = b.graph->selected();
  EXPECT_NE(second, first);
  EXPECT_LE(rows[second].excess, rows[first].excess);
  // Moving elsewhere starts again from the worst.
  b.keys("g w");
  EXPECT_EQ(b.graph->selected(), first);
  // The help of the screen lists the key.
  std::string help;
  for (const tui::HelpLine& line : b.app.screen_help(*b.graph)) help += line.text + "\n";
  EXPECT_NE(help.find(" worst "), std::string::npos) << help;
}

TEST(Cockpit, GraphHeaderKeepsItsTitleOnAChain) {
  // A chain draws one lane: the title above the lanes still reads whole ("GrapOp" before).
  auto chain = testing::make_session({{"a", "Conv", {"x"}}, {"b", "Relu", {"a"}}}, {1, 4}, "b");
  Browser b(80, 24, chain);
  const std::string dump = b.terminal.dump();
  std::vector<std::string> lines;
  for (size_t start = 0; start < dump.size(); start = dump.find('\n', start) + 1) {
    lines.push_back(dump.substr(start, dump.find('\n', start) - start));
  }
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1].rfind("Graph Op", 0), 0u) << dump;
  // Err/tol shows for the passing node too: 0, not a blank.
  EXPECT_EQ(b.graph->rows()[0].excess, 0);
  EXPECT_TRUE(lines[2].ends_with(" 0")) << dump;
}

TEST(Cockpit, MouseClicksTabsAndRowsAndTheWheelScrolls) {
  tui::AppOptions options;
  options.mouse = true;
  Browser b(100, 30, testing::small_session(), options);
  EXPECT_TRUE(b.terminal.mouse_enabled());
  // The Graph's rows start under the tab bar and the header: row 2 is the first node.
  b.terminal.push_key(tui::Key::mouse(tui::Key::kMouseClick, 30, 2 + 4));
  b.app.run(1);
  EXPECT_EQ(b.graph->selected(), 4u);
  // A click on the selected row opens its tensor.
  b.terminal.push_key(tui::Key::mouse(tui::Key::kMouseClick, 30, 2 + 4));
  b.app.run(1);
  ASSERT_EQ(b.app.active_view()->id(), "tensor");
  EXPECT_EQ(b.tensor->detail()->name, "branch_relu");
  // A click on a tab; on a column title (Accum) sorts worst first; the wheel scrolls.
  const std::string tabs = b.terminal.dump().substr(0, b.terminal.dump().find('\n'));
  b.terminal.push_key(tui::Key::mouse(tui::Key::kMouseClick, tui::display_width(tabs.substr(0, tabs.find("Layers"))), 0));
  b.app.run(1);
  ASSERT_EQ(b.app.active_view()->id(), "layers");
  const std::string head = b.terminal.dump().substr(b.terminal.dump().find('\n') + 1);
  b.terminal.push_key(tui::Key::mouse(tui::Key::kMouseClick, tui::display_width(head.substr(0, head.find("Accum"))), 1));
  b.app.run(1);
  EXPECT_EQ(b.layers->table().sort_column(), 4);
  EXPECT_TRUE(b.layers->table().sort_descending());
  b.keys("g");
  b.terminal.push_key(tui::Key::mouse(tui::Key::kWheelDown, 10, 10));
  b.app.run(1);
  EXPECT_EQ(b.layers->table().selected_position(), 3u);
}

TEST(Cockpit, EscOverAQuestionNeverQuits) {
  std::vector<bool> answers;
  tui::ScriptTerminal terminal(100, 30);
  tui::AppOptions options;
  options.quit_warning = [] { return std::string("Quitting cancels the triage"); };
  tui::App app(terminal, options);
  auto& view = static_cast<FlowchartView&>(
      app.add_view(std::make_unique<FlowchartView>([&](bool yes) { answers.push_back(yes); })));
  view.set_model(asking("en"));
  // Esc (then y, the question's key): Esc does nothing, y answers; nothing quits.
  terminal.push_keys("Esc y");
  app.run(2);
  EXPECT_FALSE(app.quit_requested());
  EXPECT_EQ(answers, std::vector<bool>{true});
  // q asks; y only stays; Esc Esc q Q quits.
  view.set_model([] {
    FlowchartModel m = asking("en");
    m.current = "extract";
    return m;
  }());
  terminal.push_keys("q y");
  app.run(2);
  EXPECT_FALSE(app.quit_requested());
  EXPECT_EQ(answers, std::vector<bool>{true});
  terminal.push_keys("Esc Esc q Q");
  app.run(4);
  EXPECT_TRUE(app.quit_requested());
  EXPECT_EQ(answers, std::vector<bool>{true});
}

TEST(Cockpit, EightyColumnsHoldEveryTabNameWhole) {
  // All eight screens of the list, as the cockpit will show them, in both languages.
  for (const auto& [language, suffix] : testing::kLanguages) {
    const testing::LanguageScope scope(language);
    tui::TabBar bar;
    std::vector<std::string> titles;
    for (const ScreenInfo& s : screen_catalog()) titles.push_back(screen_title(s.id));
    bar.set_tabs(titles);
    tui::Canvas canvas(80, 1);
    bar.draw(canvas, canvas.bounds());
    const std::string row = canvas.dump();
    for (size_t i = 0; i < titles.size(); ++i) {
      EXPECT_NE(row.find(std::to_string(i + 1) + " " + titles[i]), std::string::npos) << row;
    }
    EXPECT_EQ(row.find("~"), std::string::npos) << row;
  }
}

TEST(Cockpit, ViewOpensEveryScreenOfTheListByName) {
  Browser b(100, 30, testing::small_session());
  std::vector<std::string> ids;
  for (const ScreenInfo& s : screen_catalog()) ids.emplace_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"flowchart", "graph", "layers", "tensor", "reduce", "tactics", "log", "help"}));
  for (const ScreenInfo& s : screen_catalog()) {
    EXPECT_FALSE(s.description.empty()) << s.id;
    b.app.execute_command("view " + std::string(s.id));
    if (b.app.find_view(s.id) != nullptr) {
      EXPECT_EQ(b.app.active_view()->id(), s.id);
      EXPECT_EQ(b.app.active_view()->title(), s.title);
    } else {
      EXPECT_EQ(b.app.status_line().message(), "the " + std::string(s.id) + " screen is not part of this command");
    }
  }
  b.app.execute_command("view nowhere");
  EXPECT_EQ(b.app.status_line().message(), "no screen named 'nowhere'");
}

// One row of the README's key table: a screen (or "everywhere") and its keys, from the action
// table as the help screens show them.
std::string key_row(const std::string& where, const tui::Bindings& bindings, const std::vector<Action>& actions) {
  std::string keys;
  for (Action a : actions) {
    std::string names;
    for (const tui::Key& k : bindings.keys_for(a)) names += (names.empty() ? "`" : " `") + tui::key_name(k) + "`";
    keys += (keys.empty() ? "" : ", ") + names + " " + std::string(tui::action_name(a));
  }
  return "| " + where + " | " + keys + " |\n";
}

TEST(Cockpit, ReadmeListsTheKeysOfEveryScreenAsGenerated) {
  Browser b(100, 30, testing::small_session());
  tui::Bindings bindings;
  FlowchartView flowchart;
  flowchart.set_undo([] {});
  flowchart.set_model(asking("en"));
  ReduceView reduce;
  ReduceModel m;
  m.asking = true;
  reduce.set_model(m);
  TacticsView tactics;
  std::string table = "| screen | keys (action names, as `:bind` takes them) |\n|---|---|\n";
  const auto with_filter = [](const tui::View& v) {
    std::vector<Action> a = v.help_actions();
    if (v.filterable()) a.push_back(Action::kFilter);
    return a;
  };
  table += key_row("Flowchart (a question open)", bindings, with_filter(flowchart));
  for (const tui::View* v : std::initializer_list<const tui::View*>{b.graph, b.layers, b.tensor}) {
    table += key_row(v->title(), bindings, with_filter(*v));
  }
  table += key_row("Reduce (a question open)", bindings, with_filter(reduce));
  table += key_row("Tactics", bindings, with_filter(tactics));
  table += key_row("Log, Help", bindings, with_filter(*b.app.find_view("log")));
  table += key_row("everywhere", bindings,
                   {Action::kHelp, Action::kCommandLine, Action::kBack, Action::kNextPane, Action::kPrevPane,
                    Action::kScreen1, Action::kRefresh, Action::kQuit});
  std::vector<Action> editing;
  for (const tui::ActionInfo& info : tui::action_table()) {
    if (info.context == tui::KeyContext::kEdit) editing.push_back(info.action);
  }
  table += key_row("the `:` and `/` lines", bindings, editing);
  expect_golden("readme_keys", table);
  std::ifstream readme(std::string(VN_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << readme.rdbuf();
  EXPECT_NE(text.str().find(table), std::string::npos)
      << "README.md does not hold the key table as generated (tests/tui/golden/readme_keys.txt):\n" << table;
}

}  // namespace
}  // namespace vn::views
