// SPDX-License-Identifier: Apache-2.0
// The Flowchart and Tactics screens of `vernier triage`: golden screens at several sizes and in
// both languages of the chart, and the keys of the question and the cancel confirmation.
#include "core/flow/flowchart.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/tui/golden.h"
#include "tests/views/screen_render.h"
#include "tui/actions.h"
#include "tui/text.h"
#include "views/screens/flowchart_view.h"
#include "views/screens/tactics_view.h"

namespace vn::views {
namespace {

using tui::Action;
using tui::testing::expect_golden;
using tui::testing::screen_text;

using testing::kSizes;
using testing::render;
using testing::ScreenSize;

std::shared_ptr<const flow::Flowchart> chart(const std::string& lang) {
  Result<flow::Flowchart> c = flow::load_flowchart(std::string(VN_SOURCE_DIR) + "/assets/flowchart/" + lang + ".json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::make_shared<const flow::Flowchart>(c.ok() ? std::move(*c) : flow::Flowchart{});
}

flow::TriageStep step(std::string node, std::optional<bool> answer, std::string summary, double seconds,
                      int64_t builds, nlohmann::ordered_json evidence = nlohmann::ordered_json::object()) {
  flow::TriageStep s{std::move(node), answer, std::move(summary), std::move(evidence)};
  s.seconds = seconds;
  s.builds = builds;
  s.checks = builds;
  return s;
}

// The demo's walk up to the layer-wise question, whose probe proposes yes; the intermittency
// answer was the user's.
FlowchartModel asking_model(const std::string& lang) {
  FlowchartModel m;
  m.chart = chart(lang);
  m.path = {step("sanitize", std::nullopt, "12 node(s) before, 12 after: 0 folded, 0 change(s)", 0.01, 0),
            step("real_data", false, "no real data given (--load-inputs) to tell; synthetic data fails", 0.42, 1),
            step("intermittent", false, "5 of 5 build(s) fail, 0 pass", 2.35, 5)};
  m.path.back().overridden = true;
  m.current = "layerwise";
  m.phase = TriagePhase::kAsking;
  m.proposed = step("layerwise", true, "5 of 12 tensor(s) fail with every tensor marked; the first layer "
                                       "introducing the error: 'conv2'", 0.61, 1,
                    {{"tensors", 12}, {"failed", 5}, {"first_culprit", "conv2"}});
  return m;
}

FlowchartModel done_model() {
  FlowchartModel m = asking_model("en");
  m.path.push_back(*m.proposed);
  m.path.push_back(step("extract", true, "'conv2' extracted with its inputs from the reference fails alone", 0.2, 1));
  m.path.push_back(step("minimal", std::nullopt, "bug-report bundle written to work/bundle", 0, 0));
  m.proposed.reset();
  m.current = "minimal";
  m.phase = TriagePhase::kDone;
  m.outcome = "localized";
  m.culprit = "layer 'conv2'";
  m.bundle = "work/bundle";
  return m;
}

TEST(FlowchartView, GoldenAtEverySize) {
  for (const ScreenSize size : kSizes) {
    FlowchartView view;
    view.set_model(asking_model("en"));
    expect_golden("views_flowchart_" + size.suffix(), render(view, size));
  }
}

TEST(FlowchartView, ChineseGoldenLaysOutByDisplayWidth) {
  const testing::LanguageScope chinese(tui::Language::kChinese);
  for (const ScreenSize size : kSizes) {
    FlowchartView view;
    view.set_model(asking_model("zh"));
    const std::string screen = render(view, size);
    expect_golden("views_flowchart_zh_" + size.suffix(), screen);
    // Every row fits the width in display columns, wide glyphs counted twice.
    const std::string text = screen.substr(0, screen.find("\n---"));
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find('\n', start), text.size());
      EXPECT_LE(tui::display_width(std::string_view(text).substr(start, end - start)), size.w);
      start = end + 1;
    }
    EXPECT_NE(screen.find("可以逐层比较吗？"), std::string::npos) << screen;
    EXPECT_EQ(view.title(), "流程图");
  }
}

TEST(FlowchartView, DoneShowsOutcomeCulpritAndBundle) {
  for (const auto& [language, suffix] : testing::kLanguages) {
    const testing::LanguageScope scope(language);
    for (const ScreenSize size : {ScreenSize{80, 24}, ScreenSize{160, 48}}) {
      FlowchartView view;
      view.set_model(done_model());
      const std::string screen = render(view, size);
      expect_golden("views_flowchart_done" + std::string(suffix) + "_" + size.suffix(), screen);
      if (language == tui::Language::kEnglish) {
        EXPECT_NE(screen.find("Outcome: localized"), std::string::npos);
        EXPECT_NE(screen.find("Culprit: layer 'conv2'"), std::string::npos);
        EXPECT_NE(screen.find("Bug-report bundle: work/bundle"), std::string::npos);
      } else {
        EXPECT_NE(screen.find("结果: 已定位"), std::string::npos) << screen;
        EXPECT_NE(screen.find("错误报告包: work/bundle"), std::string::npos) << screen;
      }
    }
  }
}

TEST(FlowchartView, ChartLabelsAreNeverCutAt80Columns) {
  // Every title of the chart shows whole at 80 columns, wrapped where it must be.
  for (const auto& [language, suffix] : testing::kLanguages) {
    const testing::LanguageScope scope(language);
    const std::string lang = language == tui::Language::kChinese ? "zh" : "en";
    FlowchartView view;
    view.set_model(asking_model(lang));
    const std::string screen = render(view, {80, 24});
    std::string chart;
    for (size_t start = 0; start < screen.find("-- roles"); start = screen.find('\n', start) + 1) {
      const std::string row = screen.substr(start, screen.find('\n', start) - start);
      const size_t bar = row.find("│");
      chart += (bar == std::string::npos ? row : row.substr(0, bar)) + " ";
    }
    std::string squeezed;  // the column's words, wrapped rows joined
    for (char c : chart) {
      if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
    }
    const std::shared_ptr<const flow::Flowchart> nodes = asking_model(lang).chart;
    for (const flow::FlowNode& node : nodes->nodes) {
      std::string title;
      for (char c : node.title) {
        if (c != ' ' || (!title.empty() && title.back() != ' ')) title += c;
      }
      EXPECT_NE(squeezed.find(title), std::string::npos) << node.title << "\n" << screen;
    }
    EXPECT_EQ(chart.find("…"), std::string::npos) << screen;
  }
}

TEST(FlowchartView, ProbingShowsTheNodeAndItsRunningTime) {
  FlowchartModel m = asking_model("en");
  m.phase = TriagePhase::kProbing;
  m.proposed.reset();
  m.started = std::chrono::steady_clock::time_point(std::chrono::seconds(100));
  FlowchartView view([](bool) {}, [&] { return std::optional<FlowchartModel>(m); });
  view.resize({0, 0, 80, 22});
  EXPECT_TRUE(view.tick(std::chrono::steady_clock::time_point(std::chrono::seconds(112))));
  tui::Canvas canvas(80, 22);
  view.draw(canvas);
  EXPECT_NE(canvas.dump().find("Running the probe (12 s): Is layer-wise"), std::string::npos)
      << canvas.dump();
  EXPECT_EQ(view.key_context(), tui::KeyContext::kNormal);
  // The same second again: nothing to redraw; the next one: the time changes.
  FlowchartView still;
  still.set_model(m);
  still.tick(std::chrono::steady_clock::time_point(std::chrono::milliseconds(112100)));
  EXPECT_FALSE(still.tick(std::chrono::steady_clock::time_point(std::chrono::milliseconds(112500))));
  EXPECT_TRUE(still.tick(std::chrono::steady_clock::time_point(std::chrono::milliseconds(113000))));
}

TEST(FlowchartView, AnswersOnceWithYNOrEnter) {
  std::vector<bool> answers;
  FlowchartView view([&](bool yes) { answers.push_back(yes); });
  view.resize({0, 0, 80, 22});
  view.set_model(asking_model("en"));
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  // Screens, help and the command line stay the App's while the question is open.
  EXPECT_EQ(view.handle(Action::kScreen2), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kHelp), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kNextPane), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kPageDown), tui::kHandled);  // modal: nothing moves behind it
  // Down selects the evidence line that cites the culprit; n gives the keys back and answers.
  EXPECT_EQ(view.handle(Action::kDown), tui::kHandled | tui::kRedraw);
  EXPECT_EQ(view.selected_link(), 0u);
  view.handle(Action::kNo);
  EXPECT_FALSE(view.selected_link().has_value());
  view.handle(Action::kYes);
  EXPECT_EQ(answers, std::vector<bool>{false});
  EXPECT_EQ(view.key_context(), tui::KeyContext::kNormal);

  // The next question proposes no: Enter accepts the proposal.
  FlowchartModel next = asking_model("en");
  next.path.push_back(*next.proposed);
  next.current = "extract";
  next.proposed = step("extract", false, "'conv2' passes alone", 0.2, 1);
  view.set_model(next);
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  view.handle(Action::kAccept);
  EXPECT_EQ(answers, (std::vector<bool>{false, false}));

  // The same question again (a poll without news) does not reopen the prompt.
  view.set_model(next);
  EXPECT_EQ(view.key_context(), tui::KeyContext::kNormal);
}

TEST(FlowchartView, CancelAsksWithItsOwnKeyAndLeavingNeverAnswers) {
  int cancels = 0;
  std::vector<bool> answers;
  FlowchartView view([&](bool yes) { answers.push_back(yes); }, {}, [&] { ++cancels; });
  view.resize({0, 0, 80, 22});
  view.set_model(asking_model("en"));
  // x asks; y (the question's answer) only withdraws the confirmation, answering nothing.
  EXPECT_EQ(view.handle(Action::kCancelJob), tui::kHandled | tui::kRedraw);
  EXPECT_NE(render(view, {80, 22}).find("Press x again to cancel it"), std::string::npos);
  EXPECT_EQ(view.handle(Action::kYes), tui::kHandled | tui::kRedraw);
  EXPECT_EQ(cancels, 0);
  EXPECT_TRUE(answers.empty());
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  // Esc, q and Q go to the App (which asks before quitting): none answers the question.
  EXPECT_EQ(view.handle(Action::kBack), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kQuit), tui::kIgnored);
  EXPECT_TRUE(answers.empty());
  // x twice cancels.
  view.handle(Action::kCancelJob);
  view.handle(Action::kCancelJob);
  EXPECT_EQ(cancels, 1);
  EXPECT_TRUE(answers.empty());

  // Once triage ended, q is the App's (it quits) and x has nothing to cancel.
  view.set_model(done_model());
  EXPECT_EQ(view.handle(Action::kBack), tui::kIgnored);
  EXPECT_EQ(view.handle(Action::kCancelJob), tui::kIgnored);
}

TEST(FlowchartView, FailureAndTinyTerminals) {
  FlowchartModel m = asking_model("en");
  m.phase = TriagePhase::kFailed;
  m.error = "demo.onnx: the reference cannot run node 'x'";
  FlowchartView view;
  view.set_model(m);
  EXPECT_NE(render(view, {60, 20}).find("Triage failed"), std::string::npos);
  for (const ScreenSize size : {ScreenSize{20, 6}, ScreenSize{1, 1}, ScreenSize{0, 0}}) {
    for (FlowchartModel model : {asking_model("en"), asking_model("zh"), done_model()}) {
      FlowchartView v;
      v.set_model(model);
      const std::string screen = render(v, size, tui::ascii_glyphs());
      // At 20 columns the choices keep the last rows.
      if (size.w == 20 && model.phase == TriagePhase::kAsking) {
        EXPECT_NE(screen.find(model.chart->lang == "zh" ? "[n]" : "[n] no"), std::string::npos) << screen;
      }
    }
  }
}

// The walk after two undos from the extract question: back at the intermittency question, asked
// again with the evidence of its probe; the layer-wise answer and its own were taken back.
FlowchartModel undone_model(const std::string& lang) {
  FlowchartModel m;
  m.chart = chart(lang);
  m.path = {step("sanitize", std::nullopt, "12 node(s) before, 12 after: 0 folded, 0 change(s)", 0.01, 0),
            step("real_data", false, "no real data given (--load-inputs) to tell; synthetic data fails", 0.42, 1)};
  m.current = "intermittent";
  m.phase = TriagePhase::kAsking;
  m.proposed = step("intermittent", false, "2 of 2 build(s) fail, 0 pass", 2.35, 2,
                    {{"builds",
                      {{{"builder_seed", 1}, {"check", {{"verdict", "bad"}}}},
                       {{"builder_seed", 2}, {"check", {{"verdict", "bad"}}}}}}});
  m.undone = {step("intermittent", false, "2 of 2 build(s) fail, 0 pass", 2.35, 2)};
  m.asked = 6;
  return m;
}

TEST(FlowchartView, UndoIsOfferedAfterTheFirstAnswerAndSaysWhatItTookBack) {
  for (const auto& [language, suffix] : testing::kLanguages) {
    const testing::LanguageScope scope(language);
    const std::string lang = language == tui::Language::kChinese ? "zh" : "en";
    for (const ScreenSize size : {ScreenSize{80, 24}, ScreenSize{160, 48}}) {
      // A question after answered ones: the prompt offers [u] undo.
      FlowchartView asking([](bool) {});
      asking.set_undo([] {});
      asking.set_model(asking_model(lang));
      const std::string offered = render(asking, size);
      expect_golden("views_flowchart_undo" + std::string(suffix) + "_" + size.suffix(), offered);
      EXPECT_NE(offered.find(lang == "zh" ? "[u] 撤销" : "[u] undo"), std::string::npos) << offered;
      // Asked again after the undo: what was taken back, and evidence from before it.
      FlowchartView again([](bool) {});
      again.set_undo([] {});
      again.set_model(undone_model(lang));
      const std::string screen = render(again, size);
      expect_golden("views_flowchart_undone" + std::string(suffix) + "_" + size.suffix(), screen);
      if (language == tui::Language::kEnglish) {
        EXPECT_NE(screen.find("Undone: Intermittent or not? → no."), std::string::npos) << screen;
        EXPECT_NE(screen.find("Evidence (2.35 s, probed before the undo)"), std::string::npos) << screen;
      } else {
        EXPECT_NE(screen.find("已撤销："), std::string::npos) << screen;
      }
    }
  }
}

TEST(FlowchartView, UTakesBackTheLastAnswerOncePerQuestion) {
  int undos = 0;
  std::vector<bool> answers;
  FlowchartView view([&](bool yes) { answers.push_back(yes); });
  view.set_undo([&] { ++undos; });
  view.resize({0, 0, 100, 30});
  // The first question: nothing to take back, so u is no choice and does nothing.
  FlowchartModel first = asking_model("en");
  first.path.resize(1);  // sanitize only
  first.current = "real_data";
  first.proposed = step("real_data", false, "synthetic data fails", 0.4, 1);
  view.set_model(first);
  EXPECT_EQ(render(view, {100, 30}).find("[u] undo"), std::string::npos);
  EXPECT_EQ(view.handle(Action::kUndo), tui::kHandled);
  EXPECT_EQ(undos, 0);
  const std::vector<Action> first_keys = view.help_actions();
  EXPECT_EQ(std::count(first_keys.begin(), first_keys.end(), Action::kUndo), 0);
  // Later questions: u undoes, once; the other answers stay untouched.
  view.set_model(asking_model("en"));
  const std::vector<Action> keys = view.help_actions();
  EXPECT_EQ(std::count(keys.begin(), keys.end(), Action::kUndo), 1);
  EXPECT_EQ(view.handle(Action::kUndo), tui::kHandled | tui::kRedraw);
  EXPECT_EQ(view.handle(Action::kUndo), tui::kIgnored);  // answered: the prompt is closed
  EXPECT_EQ(undos, 1);
  EXPECT_TRUE(answers.empty());
  // The same question put again (the count of questions moved on) opens its prompt anew.
  FlowchartModel again = asking_model("en");
  again.asked = 1;
  view.set_model(again);
  EXPECT_EQ(view.key_context(), tui::KeyContext::kPrompt);
  // Right, Right reaches undo; Enter picks it.
  view.handle(Action::kRight);
  view.handle(Action::kRight);
  view.handle(Action::kAccept);
  EXPECT_EQ(undos, 2);
  // Without an undo callback nothing is offered.
  FlowchartView plain([&](bool yes) { answers.push_back(yes); });
  plain.set_model(asking_model("en"));
  EXPECT_EQ(render(plain, {100, 30}).find("[u] undo"), std::string::npos);
}

TEST(EvidenceLines, FlattensObjectsAndArrays) {
  const nlohmann::ordered_json evidence = {
      {"synthetic", {{"verdict", "bad"}, {"seconds", 0.125}}},
      {"builds", {{{"builder_seed", 1}, {"check", {{"verdict", "bad"}}}}, {{"builder_seed", 2}, {"check", {{"verdict", "good"}}}}}},
      {"changes", {"folded a", "folded b"}},
      {"suspects", {{{"layer", "conv2"}}}},
      {"failed", 5}};
  EXPECT_EQ(evidence_lines(evidence, 10),
            (std::vector<std::string>{"synthetic.verdict: bad", "synthetic.seconds: 0.125", "builds: bad, good",
                                      "changes: folded a, folded b", "suspects: 1 item(s)", "failed: 5"}));
  EXPECT_EQ(evidence_lines(evidence, 2).size(), 2u);
}

debug::ReplayChoices build(const std::string& conv2) {
  return {{"conv1", {"a1", "conv_direct (fp32)"}}, {"conv2", {"a2" + conv2, conv2}}, {"fc", {"a3", "gemm (fp32)"}}};
}

TacticsModel sample_tactics() {
  return tactics_model({build("conv_direct (fp32)"), build("conv_direct (fp32)"), build("conv_winograd (fp16)")},
                       {build("conv_winograd (fp16)"), build("conv_winograd (fp16)")});
}

TEST(TacticsView, ModelPutsTheSeparatingLayerFirst) {
  const TacticsModel m = sample_tactics();
  EXPECT_EQ(m.good_builds, 3);
  EXPECT_EQ(m.bad_builds, 2);
  ASSERT_EQ(m.rows.size(), 4u);
  // conv2's winograd: in both bad builds, in one good build of three: 1 - 1/3.
  EXPECT_EQ(m.rows[0].layer, "conv2");
  EXPECT_EQ(m.rows[0].tactic, "conv_winograd (fp16)");
  EXPECT_EQ(m.rows[0].good, 1);
  EXPECT_EQ(m.rows[0].bad, 2);
  EXPECT_NEAR(m.rows[0].score, 2.0 / 3.0, 1e-9);
  EXPECT_LT(m.rows[0].p_value, 1);
  // Its direct choice only good builds made.
  EXPECT_EQ(m.rows[1].tactic, "conv_direct (fp32)");
  EXPECT_NEAR(m.rows[1].score, -2.0 / 3.0, 1e-9);
  EXPECT_EQ(m.rows[1].p_value, 1);
  // The layers every build ran alike follow by name.
  EXPECT_EQ(m.rows[2].layer, "conv1");
  EXPECT_EQ(m.rows[2].score, 0);
  EXPECT_EQ(m.rows[3].layer, "fc");
}

TEST(TacticsView, GoldenAtEverySize) {
  for (const ScreenSize size : kSizes) {
    TacticsView view;
    view.set_model(sample_tactics());
    expect_golden("views_tactics_" + size.suffix(), render(view, size));
  }
  for (const ScreenSize size : {ScreenSize{80, 24}, ScreenSize{160, 48}}) {
    const testing::LanguageScope chinese(tui::Language::kChinese);
    TacticsView view;
    view.set_model(sample_tactics());
    expect_golden("views_tactics_zh_" + size.suffix(), render(view, size));
  }
  TacticsView empty;
  EXPECT_NE(render(empty, {80, 24}).find("No tactic replays"), std::string::npos);
  TacticsView tiny;
  tiny.set_model(sample_tactics());
  render(tiny, {20, 6}, tui::ascii_glyphs());
  render(tiny, {1, 1}, tui::ascii_glyphs());
}

}  // namespace
}  // namespace vn::views
