// SPDX-License-Identifier: Apache-2.0
// The triage's screens as `vernier triage` assembles them (Flowchart, Graph, Layers, Tensor, Log,
// Help, then Reduce), fed through the cockpit's watch as a walk feeds it: golden screens of every
// new state at 80x24 and 160x48 in English and Chinese, evidence lines that open what they cite,
// progress with counts and a clock that ticks, and the Reduce screen added when the walk reduces.
#include "views/screens/triage_cockpit.h"

#include <gtest/gtest.h>

#include "core/flow/flowchart.h"
#include "screen_fixture.h"
#include "tests/tui/golden.h"
#include "tests/views/screen_render.h"
#include "tui/app.h"
#include "tui/i18n.h"
#include "tui/script_terminal.h"
#include "views/screens/flowchart_view.h"
#include "views/screens/help_view.h"
#include "views/screens/layers_view.h"
#include "views/screens/log_view.h"
#include "views/screens/reduce_view.h"
#include "views/screens/screens.h"
#include "views/screens/tensor_view.h"

namespace vn::views {
namespace {

using tui::testing::expect_golden;
using tui::testing::screen_text;
using Clock = std::chrono::steady_clock;

std::shared_ptr<const flow::Flowchart> chart() {
  const std::string lang = tui::language() == tui::Language::kChinese ? "zh" : "en";
  Result<flow::Flowchart> c = flow::load_flowchart(std::string(VN_SOURCE_DIR) + "/assets/flowchart/" + lang + ".json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::make_shared<const flow::Flowchart>(c.ok() ? std::move(*c) : flow::Flowchart{});
}

flow::TriageStep step(const std::string& node, std::optional<bool> answer, double seconds, int64_t builds) {
  flow::TriageStep s{node, answer, "", {}};
  s.seconds = seconds;
  s.builds = s.checks = builds;
  return s;
}

// The triage's App with the cockpit, a fake clock, and the walk's watch to feed it.
struct Triage {
  Triage(int w, int h) : terminal(w, h), app(terminal, options(this)) {
    app.set_screen_catalog(screen_ids());
    app.set_absent_screen_message(triage_absent_screen);
    flowchart = static_cast<FlowchartView*>(
        &app.add_view(std::make_unique<FlowchartView>([this](bool yes) { answers.push_back(yes); })));
    flowchart->set_progress_source([this] { return cockpit.take_progress(); });
    flowchart->set_open([this](const EvidenceLink& link) { return cockpit.open(link); });
    cockpit.add_screens(app);
    app.add_view(std::make_unique<LogView>(LogView::ProgressFn([] { return nullptr; })));
    app.add_view(std::make_unique<HelpView>([this] { return app.help_document(); }));
    watch = cockpit.watch();
    model.chart = chart();
    model.started = now;
  }
  static tui::AppOptions options(Triage* self) {
    tui::AppOptions o;
    o.clock = [self] { return self->now; };
    return o;
  }
  // The walk moved on: the Flowchart's model, then a turn of the loop.
  void show(FlowchartModel m) {
    flowchart->set_model(std::move(m));
    turn();
  }
  // One turn of triage_tui's loop: the App, then the cockpit's pump, then the App again (draws).
  void turn() {
    app.run(1);
    cockpit.pump(app);
    app.run(1);
  }
  void keys(std::string_view names) {
    ASSERT_TRUE(terminal.push_keys(names)) << names;
    app.run(static_cast<long>(terminal.pending()));
    cockpit.pump(app);
    app.run(1);
  }
  std::string screen() const { return screen_text(terminal.screen()); }
  void golden(const std::string& name, const std::string& size) { expect_golden("triage_" + name + size, screen()); }

  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);
  tui::ScriptTerminal terminal;
  tui::App app;
  TriageCockpit cockpit;
  flow::TriageWatch watch;
  FlowchartView* flowchart;
  FlowchartModel model;
  std::vector<bool> answers;
};

// A reduction's check of `nodes` with its verdict, as the reducer reports it.
debug::ReduceIteration iteration(int64_t i, std::vector<int64_t> nodes, bool bad) {
  debug::ReduceIteration it;
  it.phase = "ddmin";
  it.iteration = i;
  it.candidate.nodes = std::move(nodes);
  it.result.verdict = bad ? debug::Verdict::kBad : debug::Verdict::kGood;
  it.result.reason = bad ? "1 of 1 output comparison(s) fail" : "1 output comparison(s) within tolerance";
  return it;
}

// Walks the cockpit through every new state of one triage, checking each golden.
void walk_states(int w, int h, const std::string& size) {
  Triage t(w, h);
  const auto session = testing::small_session();
  FlowchartModel m = t.model;

  // The model at once, before any error: the Graph shows it and says why there are no errors.
  t.watch.model(session->model);
  m.path = {step("sanitize", std::nullopt, 0.01, 0)};
  m.current = "real_data";
  t.show(m);
  t.keys("2");
  t.golden("graph_model", size);
  t.keys("3");
  t.golden("layers_not_run", size);

  // The layer-wise step runs: the Flowchart counts its layers, the clock ticks, the note follows.
  m.path.push_back(step("real_data", false, 0.4, 1));
  m.path.push_back(step("intermittent", false, 2.5, 5));
  m.current = "layerwise";
  m.started = t.now;
  t.show(m);
  flow::ProbeProgress p{"layerwise",  "comparing layer by layer", flow::ProgressUnit::kLayer, 5, 12, false, 3.1, 4.3,
                        "branch_relu"};
  t.watch.progress(p);
  t.now += std::chrono::seconds(3);
  t.keys("1");
  t.golden("flowchart_layers_counted", size);
  if (tui::language() == tui::Language::kEnglish) {
    EXPECT_NE(t.terminal.dump().find("layer 6 of 12"), std::string::npos) << t.terminal.dump();
    EXPECT_NE(t.terminal.dump().find("Running the probe (3 s)"), std::string::npos);
    // The status line counts the running probe's time: it never stands still.
    const std::string before = t.flowchart->status_text();
    t.now += std::chrono::seconds(2);
    t.turn();
    EXPECT_NE(t.flowchart->status_text(), before);
    EXPECT_NE(t.terminal.dump().find("Running the probe (5 s)"), std::string::npos);
  }
  t.keys("3");
  t.golden("layers_running", size);

  // The comparison arrives: the question's evidence cites the culprit; Down selects it, Enter
  // opens its row in Layers; Esc-free way back: 1.
  t.watch.layerwise(session, "");
  m.current = "layerwise";
  m.phase = TriagePhase::kAsking;
  m.proposed = flow::TriageStep{"layerwise",
                                true,
                                "7 of 12 tensor(s) fail with every tensor marked",
                                {{"tensors", 12}, {"failed", 7}, {"first_culprit", "branch_relu"}}};
  t.show(m);
  t.keys("1 Down");
  t.golden("flowchart_link_selected", size);
  t.keys("Enter");
  ASSERT_EQ(t.app.active_view()->id(), "layers");
  t.golden("layers_opened_at_culprit", size);
  const auto* layers = static_cast<const LayersView*>(t.app.active_view());
  ASSERT_TRUE(layers->table().selected_row().has_value());
  EXPECT_EQ(layers->table().rows()[*layers->table().selected_row()].cells[0], "branch_relu");

  // The walk reduces: the Reduce screen comes as the last tab and follows every check.
  m.path.push_back(step("layerwise", true, 0.3, 1));
  m.path.push_back(step("extract", false, 0.2, 1));
  m.current = "reduce";
  m.phase = TriagePhase::kProbing;
  m.proposed.reset();
  m.started = t.now;
  t.show(m);
  std::vector<std::string> labels;
  for (size_t i = 0; i < session->model.graph.nodes.size(); ++i) {
    labels.push_back(session->model.graph.nodes[i].name + " (" + session->model.graph.nodes[i].op_type + ")");
  }
  t.watch.reduce_start({12, labels, "/tmp/triage/vernier_debug.onnx"});
  t.turn();
  ASSERT_EQ(t.app.view_count(), 7u);
  EXPECT_EQ(t.app.view(6).id(), "reduce");
  const std::vector<std::vector<int64_t>> checked = {{0, 1, 2, 3, 4, 5}, {0, 1, 2}, {3, 4, 5}};
  for (size_t i = 0; i < checked.size(); ++i) {
    t.watch.reduce_check({checked[i], {}, {}});
    t.watch.reduce_iteration(iteration(static_cast<int64_t>(i), checked[i], i != 1),
                             {"ddmin", static_cast<int64_t>(i + 1), 6 - static_cast<int64_t>(i), i == 0 ? 6 : 3, 12});
  }
  t.watch.reduce_check({{4, 5}, {}, {}});
  t.watch.progress({"reduce", "reducing the model", flow::ProgressUnit::kCheck, 3, 7, true, 1.5, 2.0, ""});
  t.now += std::chrono::seconds(1);
  t.keys("1");
  t.golden("flowchart_reduce_counted", size);
  t.keys("7");
  t.golden("reduce_checking", size);
  if (tui::language() == tui::Language::kEnglish) {
    EXPECT_NE(t.terminal.dump().find("check 4 of at most 7"), std::string::npos) << t.terminal.dump();
    EXPECT_NE(t.terminal.dump().find("/tmp/triage/vernier_debug.onnx"), std::string::npos);
  }
  t.watch.reduce_iteration(iteration(3, {4, 5}, true), {"ddmin", 4, 0, 2, 12});
  t.watch.reduce_end(debug::ReduceCandidate{{4, 5}, {}, {}});
  t.turn();
  t.golden("reduce_done", size);
  if (tui::language() == tui::Language::kEnglish) {
    EXPECT_EQ(t.terminal.dump().find("at most 0"), std::string::npos) << t.terminal.dump();
  }

  // The end: the culprit is the selected link; Enter opens its first node in the Graph.
  m.path.push_back(step("reduce", true, 3.0, 4));
  m.path.push_back(step("minimal", std::nullopt, 0, 0));
  m.current = "minimal";
  m.phase = TriagePhase::kDone;
  m.outcome = "localized";
  m.culprit = "nodes 'branch_conv', 'branch_relu'";
  m.bundle = "/tmp/triage/bundle";
  t.show(m);
  t.keys("1");
  t.golden("flowchart_done_culprit", size);
  t.keys("Enter");
  ASSERT_EQ(t.app.active_view()->id(), "graph");
  EXPECT_EQ(t.app.active_view()->status_text(), tui::trf("node {}/{}", 4, 12));
}

TEST(TriageCockpit, GoldenStatesInEnglishAndChineseWithEveryStringTranslated) {
  for (const auto& [language, suffix] : testing::kLanguages) {
    const testing::LanguageScope scope(language);
    tui::clear_missing_translations();
    for (const auto& [w, h] : {std::pair{80, 24}, std::pair{160, 48}}) {
      walk_states(w, h, std::string(suffix) + "_" + std::to_string(w) + "x" + std::to_string(h));
    }
    EXPECT_EQ(tui::missing_translations(), std::vector<std::string>{});
  }
}

TEST(TriageCockpit, EvidenceLinksGiveTheKeysBackToTheQuestion) {
  Triage t(100, 30);
  t.watch.model(testing::small_session()->model);
  t.watch.layerwise(testing::small_session(), "");
  FlowchartModel m = t.model;
  m.current = "extract";
  m.phase = TriagePhase::kAsking;
  m.proposed = flow::TriageStep{"extract",
                                true,
                                "'branch_relu' extracted: fails alone",
                                {{"layer", "branch_relu"}, {"subgraph", "1 node(s): branch_relu (Relu) | inputs: x"}}};
  t.show(m);
  // Two links (the layer, then the subgraph's node); Up from none selects the last.
  ASSERT_EQ(t.flowchart->links().size(), 2u);
  EXPECT_EQ(t.flowchart->links()[1], (EvidenceLink{EvidenceLink::Kind::kNode, "branch_relu"}));
  EXPECT_FALSE(t.flowchart->selected_link().has_value()) << "Enter answers until a link is selected";
  t.keys("Up");
  EXPECT_EQ(t.flowchart->selected_link(), 1u);
  // Left gives the keys back to the question; Enter then accepts the proposal.
  t.keys("Left");
  EXPECT_FALSE(t.flowchart->selected_link().has_value());
  t.keys("Enter");
  EXPECT_EQ(t.answers, std::vector<bool>{true});
  EXPECT_EQ(t.app.active_view()->id(), "flowchart");
}

TEST(TriageCockpit, ViewNamesTheScreensThatComeLater) {
  Triage t(100, 30);
  t.turn();
  // Before the walk published its model (a runner may take seconds to start), the note.
  t.keys("2");
  EXPECT_NE(t.terminal.dump().find("No errors yet: the layer-wise step has not run"), std::string::npos)
      << t.terminal.dump();
  EXPECT_EQ(t.terminal.dump().find("x cancels"), std::string::npos) << "no job to cancel";
  t.app.execute_command("view reduce");
  EXPECT_EQ(t.app.status_line().message(), "The Reduce screen appears when the triage reduces the model");
  t.app.execute_command("view tactics");
  EXPECT_EQ(t.app.status_line().message(), "The Tactics screen appears when some engine builds pass and some fail");
  for (const char* id : {"graph", "layers", "tensor", "log", "help", "flowchart"}) {
    t.app.execute_command(std::string("view ") + id);
    EXPECT_EQ(t.app.active_view()->id(), id);
  }
}

TEST(TriageCockpit, AnEngineWithoutIntermediateTensorsSaysWhyThereAreNoErrors) {
  Triage t(100, 30);
  t.watch.model(testing::small_session()->model);
  t.watch.layerwise(nullptr, "ort cannot return intermediate tensors");
  t.turn();
  EXPECT_EQ(t.cockpit.feed()->note(),
            "No errors: the layer-wise step compared nothing (ort cannot return intermediate tensors)");
  t.keys("3");
  EXPECT_NE(t.terminal.dump().find("No errors: the layer-wise step compared nothing"), std::string::npos)
      << t.terminal.dump();
}

}  // namespace
}  // namespace vn::views
