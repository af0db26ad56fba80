// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <thread>

#include "screen_fixture.h"
#include "tests/tui/golden.h"
#include "tests/views/screen_render.h"
#include "tui/actions.h"
#include "views/screens/graph_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/text_views.h"

namespace vn::views {
namespace {

using tui::Action;
using tui::testing::expect_golden;
using tui::testing::screen_text;

using testing::kSizes;
using testing::render;
using testing::ScreenSize;

std::shared_ptr<SessionFeed> small_feed() { return std::make_shared<SessionFeed>(testing::small_session()); }

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
    LayersView detail(small_feed());
    detail.resize({0, 0, size.w, size.h});
    detail.tick({});
    // The fault's layer: its tensor detail shows errors in every panel.
    while (detail.table().selected_row() && *detail.table().selected_row() != 4) detail.handle(Action::kDown);
    detail.handle(Action::kEnter);
    ASSERT_NE(detail.detail(), nullptr);
    expect_golden("views_tensor_" + size.suffix(), render(detail, size));
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
  tui::Bindings bindings;
  for (const ScreenSize size : kSizes) {
    auto feed = small_feed();
    LogView log(feed);
    log.add("Compared 12 tensor(s): FAILED", tui::ColorRole::kError);
    expect_golden("views_log_" + size.suffix(), render(log, size));
    HelpView help(bindings);
    expect_golden("views_help_" + size.suffix(), render(help, size));
  }
}

TEST(Screens, GraphAsciiGolden) {
  GraphView graph(small_feed());
  expect_golden("views_graph_ascii_80x24", render(graph, {80, 24}, tui::ascii_glyphs()));
}

TEST(Screens, TinyTerminalsDoNotCrash) {
  tui::Bindings bindings;
  for (const ScreenSize size : {ScreenSize{20, 8}, ScreenSize{1, 1}, ScreenSize{0, 0}}) {
    GraphView graph(small_feed());
    LayersView layers(small_feed());
    ReduceView reduce;
    reduce.set_model(sample_reduce(true));
    HelpView help(bindings);
    for (tui::View* v : std::initializer_list<tui::View*>{&graph, &layers, &reduce, &help}) {
      render(*v, size, tui::ascii_glyphs());
      v->handle(Action::kEnter);
      render(*v, size, tui::ascii_glyphs());
    }
  }
}

TEST(LayersView, SortsFiltersAndDrillsIn) {
  LayersView view(small_feed());
  view.resize({0, 0, 80, 24});
  view.tick({});
  ASSERT_EQ(view.table().visible_count(), 12u);
  // s cycles the sort column: Layer, marker, Rank.
  view.handle(Action::kSort);
  view.handle(Action::kSort);
  view.handle(Action::kSort);
  EXPECT_EQ(view.table().sort_column(), 2);
  view.handle(Action::kHome);
  const size_t first = *view.table().selected_row();
  EXPECT_EQ(view.table().rows()[first].cells[2], "1");
  view.apply_filter("head");
  EXPECT_EQ(view.table().visible_count(), 2u);
  view.apply_filter("");
  view.handle(Action::kEnter);
  ASSERT_NE(view.detail(), nullptr);
  EXPECT_FALSE(view.detail()->worst.empty());
  EXPECT_EQ(view.detail()->slice_count, 2);
  view.handle(Action::kRight);
  EXPECT_NE(view.detail()->slice_label.find("2 of 2"), std::string::npos);
  EXPECT_EQ(view.handle(Action::kBack), tui::kHandled | tui::kRedraw);
  EXPECT_EQ(view.detail(), nullptr);
}

TEST(Screens, SelectionFollowsAcrossScreens) {
  auto feed = small_feed();
  GraphView graph(feed);
  LayersView layers(feed);
  graph.resize({0, 0, 80, 24});
  layers.resize({0, 0, 80, 24});
  graph.tick({});
  layers.tick({});
  for (int i = 0; i < 5; ++i) graph.handle(Action::kDown);
  EXPECT_TRUE(layers.tick({}));
  const size_t row = *layers.table().selected_row();
  EXPECT_EQ(layers.table().rows()[row].cells[0], "add");
  // Enter on the graph opens that node's tensor detail in the Layers screen.
  EXPECT_EQ(graph.handle(Action::kEnter) & tui::kSwitchView, tui::kSwitchView);
  EXPECT_EQ(graph.switch_target(), "layers");
  layers.tick({});
  ASSERT_NE(layers.detail(), nullptr);
  EXPECT_EQ(layers.detail()->name, "add");
  // And the layer table moves the graph.
  layers.handle(Action::kBack);
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
  EXPECT_EQ(view.handle(Action::kCancelJob), tui::kHandled | tui::kRedraw);
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  EXPECT_NE(render(view, {60, 10}).find("Cancel the running comparison?"), std::string::npos);
  view.handle(Action::kNo);
  EXPECT_TRUE(feed->running());
  view.handle(Action::kCancelJob);
  view.handle(Action::kYes);
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
  view.handle(Action::kBack);  // q quits
  EXPECT_EQ(answers, (std::vector<Action>{Action::kBad, Action::kQuit}));
}

}  // namespace
}  // namespace vn::views
