// SPDX-License-Identifier: Apache-2.0
// End-to-end: `vernier triage` full-screen in a pseudo-terminal (libvterm as the terminal) on the
// demo model with the demo's planted fault, answered with keys down to the bug-report bundle; and
// the terminal's bad days: a resize storm, a 20x8 terminal, TERM=dumb, SIGHUP.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>

#include <gtest/gtest.h>

#include "e2e_walk.h"

namespace vn::tui::testing {
namespace {

using namespace std::chrono_literals;

// Generous: every probe builds and checks engines, on a loaded machine.
constexpr auto kProbe = 90s;
constexpr auto kKey = 10s;
// The fault `vernier demo` plants: conv2 scales a tenth of its outputs by 1.5.
constexpr const char* kDemoFault = "layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7";

class TriageTerminal : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vn_e2e_triage_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `vernier triage` on the demo with its fault, every build alike (--deterministic), 2 builds.
  std::unique_ptr<PtySession> start(int cols, int rows, std::vector<std::string> env = {}) {
    return start_with({"--inject-fault", kDemoFault, "--deterministic", "--builds", "2"}, cols, rows, std::move(env));
  }
  std::unique_ptr<PtySession> start_with(const std::vector<std::string>& options, int cols, int rows,
                                         std::vector<std::string> env = {}) {
    std::vector<std::string> args = {VN_VERNIER_BIN, "triage", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx",
                                     "--threads", "1", "--workdir", dir_ + "/work"};
    args.insert(args.end(), options.begin(), options.end());
    if (env.empty()) env = {"TERM=xterm-256color"};
    env.insert(env.end(), {"LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
    return PtySession::spawn(args, cols, rows, env);
  }

  bool bundle_written() const { return std::filesystem::exists(dir_ + "/work/bundle/report.md"); }

  std::string dir_;
};

std::string fmt_count(int n, int of) { return std::to_string(n) + "/" + std::to_string(of); }

// The screen without its status line (which changes with messages, not with the question).
std::string above_status(const PtySession& term) {
  std::string text;
  for (int row = 0; row + 1 < term.rows(); ++row) text += term.line(row) + "\n";
  return text;
}

// Answers every question with Enter (the proposals lead to the bundle) until `done` holds. After
// each Enter it waits for the screen to change: the prompt closing, or the next question when
// both frames arrived at once. (An Enter that lands on the next question accepts it too.)
bool accept_until(PtySession& term, const std::function<bool()>& done, std::string_view prompt_text) {
  for (int question = 0; question < 12; ++question) {
    if (!term.wait_until([&] { return done() || shows(term, prompt_text); }, kProbe)) return false;
    if (done()) return true;
    const std::string asked = above_status(term);
    term.send("\r");
    if (!term.wait_until([&] { return done() || above_status(term) != asked; }, kProbe)) return false;
  }
  return term.wait_until(done, kProbe);
}

void expect_restored(const PtySession& term) {
  EXPECT_FALSE(term.alternate_screen()) << term.screen();
  EXPECT_TRUE(term.cursor_visible());
  EXPECT_TRUE(term.canonical_with_echo());
}

TEST_F(TriageTerminal, WalksTheDemoToTheBundleWithKeys) {
  auto term = start(110, 32);
  ASSERT_NE(term, nullptr);
  // Real data: none given, so the probe proposes no; Enter accepts it.
  answer(*term, "No: the engine is inaccurate even on real data.", "\r");
  EXPECT_TRUE(term->alternate_screen());
  // Intermittent: every deterministic build fails; n agrees.
  answer(*term, "No: every build shows the failure.", "n");
  // Layer-wise: the failure shows with every tensor marked; y agrees. The evidence names conv2.
  ASSERT_TRUE(term->wait_until([&] { return shows(*term, "first_culprit: conv2") && shows(*term, kPrompt); }, kProbe))
      << term->screen();
  answer(*term, "Yes: the failure reproduces layer-wise.", "y");
  // Extract: conv2 fails alone; Enter accepts.
  answer(*term, "Yes: the subgraph fails too.", "\r");
  ASSERT_TRUE(term->wait_for_text("Bug-report bundle:", kProbe)) << term->screen();
  EXPECT_TRUE(shows(*term, "Outcome: localized")) << term->screen();
  EXPECT_TRUE(shows(*term, "Culprit: layer 'conv2'")) << term->screen();
  EXPECT_TRUE(bundle_written());
  // The path lists each answered step with its cost.
  EXPECT_TRUE(shows(*term, "Path so far")) << term->screen();
  EXPECT_TRUE(shows(*term, "3. Intermittent or not? → no")) << term->screen();

  // The Log screen has the walk, the Help screen the keys; then back and quit.
  term->send("5");
  ASSERT_TRUE(term->wait_for_text("Intermittent or not? -> no", kKey)) << term->screen();
  term->send("6");
  ASSERT_TRUE(term->wait_for_text("Commands (:)", kKey)) << term->screen();
  term->send("1");
  ASSERT_TRUE(term->wait_for_text("Outcome: localized", kKey)) << term->screen();
  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 1) << term->screen();  // a failure was localized
  expect_restored(*term);
  // Back on the normal screen, the transcript reads as a headless run's.
  EXPECT_TRUE(shows(*term, "Outcome: localized | culprit: layer 'conv2'")) << term->screen();
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/work/report.json"));
}

TEST_F(TriageTerminal, UndoesTwoAnswersAndFinishesWithTheBundle) {
  auto term = start(120, 40);
  ASSERT_NE(term, nullptr);
  // The check's numbers are in the evidence, with where its tolerance came from.
  ASSERT_TRUE(term->wait_until(
      [&] {
        return shows(*term, "synthetic.max_abs_error: ") && shows(*term, "synthetic.cosine: ") &&
               shows(*term, "synthetic.tolerance_from: Polygraphy's default");
      },
      kProbe))
      << term->screen();
  answer(*term, "No: the engine is inaccurate even on real data.", "\r");
  answer(*term, "No: every build shows the failure.", "n");
  answer(*term, "Yes: the failure reproduces layer-wise.", "y");
  // At the extract question, u takes back the layer-wise answer: that question is asked again,
  // from the evidence its probe gathered; u again takes back the intermittency answer.
  answer(*term, "Yes: the subgraph fails too.", "u");
  ASSERT_TRUE(term->wait_until(
      [&] {
        return shows(*term, "Undone: Is layer-wise comparison an option? → yes") &&
               shows(*term, "Yes: the failure reproduces layer-wise.") && shows(*term, kPrompt) &&
               shows(*term, "probed before the undo") && shows(*term, "first_culprit: conv2");
      },
      kKey))
      << term->screen();
  answer(*term, "Yes: the failure reproduces layer-wise.", "u");
  // The path and its counters go back with the answers.
  ASSERT_TRUE(term->wait_until(
      [&] {
        return shows(*term, "Undone: Intermittent or not? → no") &&
               shows(*term, "No: every build shows the failure.") && shows(*term, kPrompt) && shows(*term, "step 3 ");
      },
      kKey))
      << term->screen();
  EXPECT_FALSE(shows(*term, "3. Intermittent or not?")) << term->screen();
  // Answered as before, the steps that followed come back from their records, unprobed.
  answer(*term, "No: every build shows the failure.", "n");
  ASSERT_TRUE(term->wait_until(
      [&] {
        return shows(*term, "Yes: the failure reproduces layer-wise.") && shows(*term, kPrompt) &&
               shows(*term, "probed before the undo");
      },
      kKey))
      << term->screen();
  answer(*term, "Yes: the failure reproduces layer-wise.", "y");
  answer(*term, "Yes: the subgraph fails too.", "\r");
  ASSERT_TRUE(term->wait_until(
      [&] {
        return shows(*term, "Bug-report bundle:") && shows(*term, "Culprit: layer 'conv2'") &&
               shows(*term, "3. Intermittent or not? → no");
      },
      kProbe))
      << term->screen();
  EXPECT_TRUE(bundle_written());
  // The Log screen says what was undone.
  term->send("5");
  ASSERT_TRUE(
      term->wait_for_text("Undone at Extract the failing subgraph: Is layer-wise comparison an option? -> yes", kKey))
      << term->screen();
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  expect_restored(*term);
  std::ifstream report(dir_ + "/work/report.json");
  const std::string json((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"undos\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"back_to\": \"intermittent\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"redone\": true"), std::string::npos) << json;
}

TEST_F(TriageTerminal, AResumeAfterAnUndoAsksTheQuestionItWentBackTo) {
  auto term = start(80, 24);
  ASSERT_NE(term, nullptr);
  answer(*term, "No: the engine is inaccurate", "\r");
  answer(*term, "No: every build shows the", "n");
  // At the layer-wise question, u goes back to the intermittency question; then quit.
  ASSERT_TRUE(term->wait_until([&] { return shows(*term, "first_culprit: conv2") && shows(*term, kPrompt); }, kProbe))
      << term->screen();
  term->send("u");
  ASSERT_TRUE(
      term->wait_until([&] { return shows(*term, "Undone: Intermittent or not?") && shows(*term, kPrompt); }, kKey))
      << term->screen();
  term->send("q");
  ASSERT_TRUE(term->wait_for_text("Quitting cancels the triage", kKey)) << term->screen();
  term->send("Q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  expect_restored(*term);
  // --resume continues at the question the undo went back to, then walks to the bundle.
  auto resumed = PtySession::spawn({VN_VERNIER_BIN, "triage", "--resume", dir_ + "/work"}, 80, 24,
                                   {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  ASSERT_NE(resumed, nullptr);
  // (The status line counts the steps answered: two.)
  ASSERT_TRUE(resumed->wait_until(
      [&] {
        return shows(*resumed, "Does the failure come and go between") && shows(*resumed, kPrompt) &&
               shows(*resumed, "step 3 ");
      },
      kProbe))
      << resumed->screen();
  ASSERT_TRUE(accept_until(
      *resumed, [&] { return shows(*resumed, "Bug-report bundle:") && shows(*resumed, "Culprit: layer 'conv2'"); },
      kPrompt))
      << resumed->screen();
  resumed->send("q");
  ASSERT_TRUE(resumed->wait_exit(kKey).has_value()) << resumed->screen();
  expect_restored(*resumed);
  EXPECT_TRUE(bundle_written());
  std::ifstream session(dir_ + "/work/session.json");
  const std::string json((std::istreambuf_iterator<char>(session)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"back_to\": \"intermittent\""), std::string::npos) << json;
}

TEST_F(TriageTerminal, DemoCommandWalksItsScenarioToTheBundle) {
  // `vernier demo` itself, on a terminal: the demo scenario's triage in the UI, every proposal
  // accepted with Enter, until the bundle.
  auto term = PtySession::spawn({VN_VERNIER_BIN, "demo", "--workdir", dir_ + "/demo"}, 110, 32,
                                {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "Bug-report bundle:"); }, kPrompt)) << term->screen();
  EXPECT_TRUE(shows(*term, "Culprit: layer 'conv2'")) << term->screen();
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/demo/bundle/report.md"));
  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0) << term->screen();  // the demo found its planted fault
  expect_restored(*term);
}

TEST_F(TriageTerminal, EscOverAQuestionNeverQuitsAndQuitAsksWithItsOwnKey) {
  for (const auto& [cols, rows] : {std::pair{80, 24}, std::pair{120, 40}}) {
    std::filesystem::remove_all(dir_ + "/work");
    auto term = start(cols, rows);
    ASSERT_NE(term, nullptr);
    const std::string proposal = "No: the engine is inaccurate";  // (wrapped at 80 columns)
    ASSERT_TRUE(term->wait_until([&] { return shows(*term, proposal) && shows(*term, kPrompt); }, kProbe))
        << term->screen();
    // Esc does nothing here; the help (then Esc) proves the keys were read. A key sent within
    // curses' Esc delay (25 ms) after Esc would read as Alt-key: the pause is a person's typing.
    term->send("\x1b");
    term->wait_until([] { return false; }, std::chrono::milliseconds(500));
    term->send("?");
    ASSERT_TRUE(term->wait_for_text("Flowchart: keys on this screen", kKey)) << term->screen();
    term->send("\x1b");
    ASSERT_TRUE(term->wait_until([&] { return !shows(*term, "keys on this screen") && shows(*term, kPrompt); }, kKey))
        << term->screen();
    // q asks in the status line; y (the question's key) only stays: nothing is answered.
    term->send("q");
    ASSERT_TRUE(term->wait_for_text("Quitting cancels the triage: Q quits", kKey)) << term->screen();
    term->send("y");
    ASSERT_TRUE(term->wait_until([&] { return !shows(*term, "Quitting cancels"); }, kKey)) << term->screen();
    EXPECT_TRUE(shows(*term, proposal) && shows(*term, kPrompt)) << term->screen();
    EXPECT_TRUE(term->wait_exit(std::chrono::milliseconds(300)) == std::nullopt);
    // q then Q quits (the triage is cancelled); the terminal is restored.
    term->send("q");
    ASSERT_TRUE(term->wait_for_text("Quitting cancels the triage", kKey)) << term->screen();
    term->send("Q");
    const std::optional<int> status = term->wait_exit(kKey);
    ASSERT_TRUE(status.has_value()) << term->screen();
    EXPECT_TRUE(WIFEXITED(*status));
    expect_restored(*term);
    EXPECT_FALSE(bundle_written());
  }
}

TEST_F(TriageTerminal, AnOverrideChangesThePathAndIsRecorded) {
  auto term = start(110, 32);
  ASSERT_NE(term, nullptr);
  answer(*term, "No: the engine is inaccurate even on real data.", "\r");
  // Every build fails, so the probe says not intermittent; y overrides it: debug it anyway.
  answer(*term, "No: every build shows the failure.", "y");
  // The walk follows the user's answer to the tactic diff.
  ASSERT_TRUE(term->wait_until([&] { return shows(*term, "Debug the intermittent failure") && shows(*term, kPrompt); },
                               kProbe))
      << term->screen();
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "Bug-report bundle:"); }, kPrompt)) << term->screen();
  EXPECT_TRUE(shows(*term, "3. Intermittent or not? → yes (yours)")) << term->screen();
  EXPECT_TRUE(shows(*term, "4. Debug the intermittent failure")) << term->screen();
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  std::ifstream report(dir_ + "/work/report.json");
  const std::string json((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"overridden\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"node\": \"debug_intermittent\""), std::string::npos) << json;
}

TEST_F(TriageTerminal, ChineseChartToTheBundle) {
  auto term = start_with({"--lang", "zh", "--inject-fault", kDemoFault, "--deterministic", "--builds", "2"}, 100, 30);
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_until([&] { return term->line(0).find("流程图") != std::string::npos; }, kProbe))
      << term->screen();
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "错误报告包:"); }, "您的回答？")) << term->screen();
  EXPECT_TRUE(shows(*term, "结果: 已定位")) << term->screen();
  EXPECT_TRUE(term->line(0).find("日志") != std::string::npos) << term->screen();
  EXPECT_TRUE(bundle_written());
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  expect_restored(*term);
}

TEST_F(TriageTerminal, MixedBuildsOpenTheTacticsScreen) {
  // A fault in one gemm tactic that only some builders pick (as tests/cli's flaky-tactic case).
  auto term = start_with({"--builder-seed", "3", "--builds", "12", "--timing-margin", "1000", "--inject-fault",
                          "tactic=gemm__split_k4,kind=scale,factor=1.5"},
                         120, 30);
  ASSERT_NE(term, nullptr);
  answer(*term, "No: the engine is inaccurate even on real data.", "\r");
  // The intermittency question: the Tactics screen is there while it waits.
  ASSERT_TRUE(term->wait_until([&] { return shows(*term, "Yes: some builds are accurate") && shows(*term, kPrompt); },
                               kProbe))
      << term->screen();
  ASSERT_TRUE(term->wait_until([&] { return term->line(0).find("Tactics") != std::string::npos; }, kKey))
      << term->screen();
  term->send("7");
  // How the twelve builds split depends on their timings; both kinds are there.
  std::smatch counts;
  std::string head;
  const std::regex head_pattern(R"((\d+) good build\(s\), (\d+) bad build\(s\))");
  ASSERT_TRUE(term->wait_until([&] { return std::regex_search(head = term->line(1), counts, head_pattern); }, kKey))
      << term->screen();
  const int good = std::stoi(counts[1].str()), bad = std::stoi(counts[2].str());
  EXPECT_GT(good, 0);
  EXPECT_GT(bad, 0);
  EXPECT_EQ(good + bad, 12);
  // The faulty choice tops the table: layer fc, made by every bad build and no good one, score 1.
  const std::vector<std::string> top = {"fc", "gemm__split_k4 (fp32)", fmt_count(0, good), fmt_count(bad, bad), "1.00"};
  ASSERT_TRUE(term->wait_until(
      [&] {
        const std::string row = term->line(3);
        return std::all_of(top.begin(), top.end(), [&](const std::string& cell) { return row.find(cell) != std::string::npos; });
      },
      kKey))
      << term->screen();
  term->send("1");
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "Bug-report bundle:"); }, kPrompt)) << term->screen();
  EXPECT_TRUE(shows(*term, "Culprit: tactic gemm__split_k4 (fp32) of layer 'fc'")) << term->screen();
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  expect_restored(*term);
}

TEST_F(TriageTerminal, SurvivesAResizeStormAndDrawsAtTheLastSize) {
  auto term = start(100, 30);
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_for_text(kPrompt, kProbe)) << term->screen();
  // Forty sizes in a row, with no wait between them, from 20x8 to 200x60.
  for (int i = 0; i < 40; ++i) term->resize(20 + (i * 37) % 181, 8 + (i * 13) % 53);
  term->resize(90, 26);
  // The last size wins: the status line sits on the last row, the prompt is still open.
  ASSERT_TRUE(term->wait_until([&] { return term->line(25).find("help") != std::string::npos && shows(*term, kPrompt); },
                               kKey))
      << term->screen();
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "Bug-report bundle:"); }, kPrompt)) << term->screen();
  EXPECT_TRUE(bundle_written());
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  expect_restored(*term);
}

TEST_F(TriageTerminal, WorksOnA20x8Terminal) {
  auto term = start(20, 8);
  ASSERT_NE(term, nullptr);
  // Twenty columns keep the choices of the question: "[y] yes (proposed)" does not fit with "[n] no".
  ASSERT_TRUE(accept_until(*term, [&] { return shows(*term, "Outcome: localized"); }, "[n] no")) << term->screen();
  EXPECT_TRUE(bundle_written());
  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  EXPECT_TRUE(WIFEXITED(*status));
  expect_restored(*term);
}

TEST_F(TriageTerminal, DumbTerminalWalksHeadlessWithANote) {
  auto term = start(200, 60, {"TERM=dumb"});
  ASSERT_NE(term, nullptr);
  const std::optional<int> status = term->wait_exit(kProbe);
  ASSERT_TRUE(status.has_value()) << term->screen();
  ASSERT_TRUE(WIFEXITED(*status)) << term->screen();
  EXPECT_EQ(WEXITSTATUS(*status), 1) << term->screen();
  EXPECT_FALSE(term->alternate_screen());
  EXPECT_TRUE(shows(*term, "cannot show the full-screen triage")) << term->screen();
  EXPECT_TRUE(shows(*term, "Outcome: localized")) << term->screen();
  EXPECT_TRUE(bundle_written());
}

TEST_F(TriageTerminal, HangupRestoresTheTerminalAndExits) {
  auto term = start(100, 30);
  ASSERT_NE(term, nullptr);
  // Hung up while a question waits for its answer: the worker gives up the question.
  ASSERT_TRUE(term->wait_for_text(kPrompt, kProbe)) << term->screen();
  ASSERT_FALSE(term->cursor_visible());
  term->signal(SIGHUP);
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  // Ends as SIGHUP's default action does, re-raised once the terminal was restored; no crash.
  ASSERT_TRUE(WIFSIGNALED(*status)) << *status;
  EXPECT_EQ(WTERMSIG(*status), SIGHUP);
  EXPECT_FALSE(WCOREDUMP(*status));
  expect_restored(*term);
  EXPECT_FALSE(bundle_written());
}

}  // namespace
}  // namespace vn::tui::testing
