// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "screen_fixture.h"
#include "tests/tui/golden.h"
#include "tests/views/screen_render.h"
#include "tui/actions.h"
#include "tui/app.h"
#include "tui/i18n.h"
#include "tui/script_terminal.h"
#include "views/screens/graph_view.h"
#include "views/screens/help_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/log_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/screens.h"
#include "views/screens/tensor_view.h"

namespace vn::views {
namespace {

using tui::Action;
using tui::testing::expect_golden;
using tui::testing::screen_text;

using testing::kSizes;
using testing::render;
using testing::ScreenSize;

std::shared_ptr<SessionFeed> small_feed() { return std::make_shared<SessionFeed>(testing::small_session()); }

// The screen list (views/screens/screens.cpp) enumerated: every screen has its help line, its
// title and help line in the translation table, and golden tests of it drawn in English
// (views_<id>*) and in Chinese (*_<id>*_zh*). A screen without them fails here.
TEST(ScreenList, EveryScreenHasItsHelpTranslationAndGoldens) {
  const auto table = tui::translation_table();
  const auto translated = [&](std::string_view english) {
    return std::any_of(table.begin(), table.end(), [&](const tui::Translation& t) { return t.english == english; });
  };
  std::vector<std::string> goldens;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(VN_SOURCE_DIR) / "tests" / "tui" / "golden")) {
    goldens.push_back(entry.path().stem().string());
  }
  std::set<std::string_view> ids;
  for (const ScreenInfo& screen : screen_catalog()) {
    const std::string id(screen.id);
    EXPECT_TRUE(ids.insert(screen.id).second) << "screen listed twice: " << id;
    EXPECT_FALSE(screen.description.empty()) << id << " has no help line";
    EXPECT_TRUE(translated(screen.title)) << "the title of " << id << " has no translation";
    EXPECT_TRUE(translated(screen.description)) << "the help line of " << id << " has no translation";
    EXPECT_TRUE(std::any_of(goldens.begin(), goldens.end(), [&](const std::string& g) { return g.rfind("views_" + id, 0) == 0; }))
        << "no golden test draws the " << id << " screen";
    EXPECT_TRUE(std::any_of(goldens.begin(), goldens.end(), [&](const std::string& g) {
      const size_t at = g.find("_" + id);
      return at != std::string::npos && g.find("_zh", at) != std::string::npos;
    })) << "no golden test draws the " << id << " screen in Chinese";
  }
}

TEST(GraphLanes, ChainStaysInOneLane) {
  EXPECT_EQ(graph_lanes({{}, {0}, {1}}), (std::vector<std::string>{"o ", "o ", "o "}));
}

TEST(GraphLanes, DiamondBranchesAndMerges) {
  // 0 feeds 1 and 2, which both feed 3: 1 opens a lane tapping 0's, 3 merges it back.
  EXPECT_EQ(graph_lanes({{}, {0}, {0}, {1, 2}}), (std::vector<std::string>{"o ", "T-o ", "o | ", "o-J "}));
}

TEST(GraphRows, CarryOpShapePrecisionAndError) {
  auto session = testing::small_session();
  const std::vector<GraphRow> rows = graph_rows(session->model.graph, session.get());
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[0].op, "Conv");
  EXPECT_EQ(rows[0].shape, "(1, 2, 4, 4)");
  EXPECT_EQ(rows[0].precision, "fp16 / conv_winograd");
  EXPECT_EQ(rows[0].level, ErrorLevel::kOk);
  EXPECT_EQ(rows[4].level, ErrorLevel::kError);  // branch_relu: the planted fault
  EXPECT_EQ(rows[8].level, ErrorLevel::kNonFinite);  // head_b: the NaN
}

TEST(Screens, GoldenAtEverySize) {
  for (const ScreenSize size : kSizes) {
    GraphView graph(small_feed());
    expect_golden("views_graph_" + size.suffix(), render(graph, size));
    LayersView layers(small_feed());
    expect_golden("views_layers_" + size.suffix(), render(layers, size));
    // The fault's layer: its tensor detail shows errors in every panel.
    auto feed = small_feed();
    feed->select(4);
    TensorView detail(feed);
    const std::string screen = render(detail, size);
    ASSERT_NE(detail.detail(), nullptr);
    EXPECT_EQ(detail.detail()->name, "branch_relu");
    expect_golden("views_tensor_" + size.suffix(), screen);
  }
}

ReduceModel sample_reduce(bool asking) {
  ReduceModel m;
  m.total_nodes = 40;
  m.phase = "outputs";
  m.checks_done = 3;
  m.checks_left = 4;
  m.nodes_kept = 10;
  m.candidate = {20, 21, 22, 23, 24, 25, 26, 27, 28, 29};
  for (int64_t n : m.candidate) m.candidate_labels.push_back("conv" + std::to_string(n) + " (Conv)");
  m.history = {{1, "outputs", 40, "bad", "answered bad"},
               {2, "outputs", 20, "good", "answered good"},
               {3, "outputs", 10, "skip", "skipped"}};
  m.asking = asking;
  return m;
}

TEST(Screens, ReduceGoldenAtEverySize) {
  for (const ScreenSize size : kSizes) {
    ReduceView view;
    view.set_model(sample_reduce(true));
    expect_golden("views_reduce_" + size.suffix(), render(view, size));
  }
}

TEST(Screens, LogAndHelpGolden) {
  for (const ScreenSize size : kSizes) {
    auto feed = small_feed();
    LogView log(feed);
    log.add("Compared 12 tensor(s): FAILED", tui::ColorRole::kError);
    expect_golden("views_log_" + size.suffix(), render(log, size));
    // The browser's help: its screens, its commands and each screen's keys.
    tui::ScriptTerminal terminal(size.w, size.h);
    tui::App app(terminal);
    app.add_view(std::make_unique<GraphView>(feed));
    app.add_view(std::make_unique<LayersView>(feed));
    app.add_view(std::make_unique<TensorView>(feed));
    app.add_view(std::make_unique<LogView>(feed));
    HelpView help([&app] { return app.help_document(); });
    expect_golden("views_help_" + size.suffix(), render(help, size));
  }
}

TEST(Screens, GraphAsciiGolden) {
  GraphView graph(small_feed());
  expect_golden("views_graph_ascii_80x24", render(graph, {80, 24}, tui::ascii_glyphs()));
}

TEST(Screens, TinyTerminalsDoNotCrash) {
  for (const ScreenSize size : {ScreenSize{20, 8}, ScreenSize{1, 1}, ScreenSize{0, 0}}) {
    auto feed = small_feed();
    feed->select(4);
    GraphView graph(feed);
    LayersView layers(feed);
    TensorView tensor(feed);
    ReduceView reduce;
    reduce.set_model(sample_reduce(true));
    HelpView help([] { return tui::help_lines(tui::Bindings()); });
    for (tui::View* v : std::initializer_list<tui::View*>{&graph, &layers, &tensor, &reduce, &help}) {
      render(*v, size, tui::ascii_glyphs());
      v->handle(Action::kEnter);
      render(*v, size, tui::ascii_glyphs());
    }
  }
}

TEST(LayersView, SortsWorstFirstFiltersAndDrillsIn) {
  auto feed = small_feed();
  LayersView view(feed);
  TensorView tensor(feed);
  view.resize({0, 0, 80, 24});
  tensor.resize({0, 0, 80, 24});
  view.tick({});
  tensor.tick({});
  ASSERT_EQ(view.table().visible_count(), 12u);
  // The first s puts the worst accumulated error on top: head_b's NaN, then the fault's layers.
  view.handle(Action::kSort);
  EXPECT_EQ(view.table().sort_column(), 4);
  EXPECT_TRUE(view.table().sort_descending());
  view.handle(Action::kHome);
  EXPECT_EQ(view.table().rows()[*view.table().selected_row()].cells[0], "head_b");
  // Then the local error, then the culprit rank (1 first), then execution order again.
  view.handle(Action::kSort);
  view.handle(Action::kSort);
  EXPECT_EQ(view.table().sort_column(), 2);
  view.handle(Action::kHome);
  EXPECT_EQ(view.table().rows()[*view.table().selected_row()].cells[2], "1");
  view.handle(Action::kSort);
  EXPECT_EQ(view.table().sort_column(), -1);
  view.apply_filter("head");
  EXPECT_EQ(view.table().visible_count(), 2u);
  view.apply_filter("");
  // Enter opens the Tensor screen on the selected layer; back returns to the Layers screen.
  view.handle(Action::kHome);
  view.handle(Action::kDown);
  view.handle(Action::kDown);
  view.handle(Action::kDown);
  view.handle(Action::kDown);
  EXPECT_EQ(view.handle(Action::kEnter) & tui::kSwitchView, tui::kSwitchView);
  EXPECT_EQ(view.switch_target(), "tensor");
  tensor.tick({});
  ASSERT_NE(tensor.detail(), nullptr);
  EXPECT_EQ(tensor.detail()->name, "branch_relu");
  EXPECT_FALSE(tensor.detail()->worst.empty());
  EXPECT_EQ(tensor.detail()->slice_count, 2);
  EXPECT_EQ(tensor.detail()->heatmap_count, 2u);
  const std::string first = tensor.detail()->slice_index;
  tensor.handle(Action::kRight);
  EXPECT_NE(tensor.detail()->slice_index, first);
  EXPECT_EQ(tensor.handle(Action::kBack), tui::kHandled | tui::kSwitchView);
  EXPECT_EQ(tensor.switch_target(), "layers");
}

TEST(Screens, SelectionFollowsAcrossScreens) {
  auto feed = small_feed();
  GraphView graph(feed);
  LayersView layers(feed);
  TensorView tensor(feed);
  for (tui::View* v : std::initializer_list<tui::View*>{&graph, &layers, &tensor}) {
    v->resize({0, 0, 80, 24});
    v->tick({});
  }
  for (int i = 0; i < 5; ++i) graph.handle(Action::kDown);
  EXPECT_TRUE(layers.tick({}));
  const size_t row = *layers.table().selected_row();
  EXPECT_EQ(layers.table().rows()[row].cells[0], "add");
  // Enter on the graph opens that node's tensor; back goes to the graph.
  EXPECT_EQ(graph.handle(Action::kEnter) & tui::kSwitchView, tui::kSwitchView);
  EXPECT_EQ(graph.switch_target(), "tensor");
  tensor.tick({});
  ASSERT_NE(tensor.detail(), nullptr);
  EXPECT_EQ(tensor.detail()->name, "add");
  EXPECT_EQ(tensor.switch_target(), "graph");
  // And the layer table moves the graph.
  layers.handle(Action::kHome);
  graph.tick({});
  EXPECT_EQ(graph.selected(), 0u);
}

TEST(Screens, RunningJobShowsProgressAndCancelsAfterConfirmation) {
  auto job = LayerwiseJob::start([](session::JobContext& ctx) -> Result<session::LayerwiseSession> {
    ctx.progress(0.25, "comparing conv1");
    while (!ctx.cancelled()) std::this_thread::yield();
    return Status(StatusCode::kCancelled, "cancelled");
  });
  // Wait (without a fixed sleep) until the job published its progress.
  while (job->progress()->label.empty()) std::this_thread::yield();
  auto feed = std::make_shared<SessionFeed>(std::move(job));
  LayersView view(feed);
  const std::string screen = render(view, {60, 10});
  EXPECT_NE(screen.find("comparing conv1"), std::string::npos);
  EXPECT_NE(screen.find("x cancels"), std::string::npos);
  // x asks; the next key decides: anything but x (here y, which answers questions) goes on.
  EXPECT_EQ(view.handle(Action::kCancelJob), tui::kHandled | tui::kRedraw);
  EXPECT_NE(render(view, {60, 10}).find("Press x again to cancel"), std::string::npos);
  EXPECT_EQ(view.handle(Action::kYes), tui::kHandled | tui::kRedraw);
  EXPECT_TRUE(feed->running());
  view.handle(Action::kCancelJob);
  view.handle(Action::kCancelJob);
  while (feed->running()) std::this_thread::yield();
  EXPECT_EQ(feed->progress()->state, session::JobState::kCancelled);
  EXPECT_NE(render(view, {60, 10}).find("cancelled"), std::string::npos);
}

TEST(ReduceView, PromptAnswersOnce) {
  std::vector<Action> answers;
  ReduceView view([&](Action a) { answers.push_back(a); });
  view.resize({0, 0, 80, 24});
  view.set_model(sample_reduce(true));
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  EXPECT_EQ(view.handle(Action::kDown), tui::kHandled);  // modal: nothing moves behind it
  view.handle(Action::kBad);
  view.handle(Action::kGood);
  EXPECT_EQ(answers, std::vector<Action>{Action::kBad});
  EXPECT_EQ(view.key_context(), tui::KeyContext::kNormal);
  ReduceModel next = sample_reduce(true);
  next.checks_done = 4;
  view.set_model(next);
  // Esc and q never answer: leaving is the App's (q asks before quitting).
  EXPECT_EQ(view.handle(Action::kBack), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kQuit), tui::kIgnored);
  view.handle(Action::kUndo);
  EXPECT_EQ(answers, (std::vector<Action>{Action::kBad, Action::kUndo}));
}

}  // namespace
}  // namespace vn::views
