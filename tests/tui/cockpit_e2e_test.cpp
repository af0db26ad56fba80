// SPDX-License-Identifier: Apache-2.0
// End-to-end: the triage cockpit live. `vernier triage` on the demo with its planted fault, in a
// pseudo-terminal at 120x40 and at 80x24: the Graph shows the model before any error and the
// culprit once the layer-wise step ran (w scrolls to it), Layers sorts, filters and opens the
// Tensor detail (Esc back), the Flowchart's evidence line opens the culprit's row, and after an
// overridden extract the Reduce screen follows a reduction whose external check reads each
// candidate, check by check, to the bundle.
#include <sys/wait.h>

#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "e2e_walk.h"

namespace vn::tui::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kProbe = 90s;
constexpr auto kKey = 10s;
constexpr const char* kDemoFault = "layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7";
// Down arrow as xterm sends it.
constexpr const char* kDown = "\x1b[B";

class CockpitTerminal : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vn_e2e_cockpit_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The demo with its fault; the reduction's check runs the candidate with the same fault (a
  // pause first, so that every check shows on the Reduce screen) and fails on Vernier's verdict.
  std::unique_ptr<PtySession> start(int cols, int rows) {
    const std::string check =
        "sleep 0.3; exec \"$VERNIER\" run vernier_debug.onnx --ref --engine --deterministic --load-inputs "
        "vernier_debug_inputs.json --threads 1 --inject-fault " +
        std::string(kDemoFault) + ",missing=ignore";
    return PtySession::spawn(
        {VN_VERNIER_BIN, "triage", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx", "--threads", "1",
         "--workdir", dir_ + "/work", "--inject-fault", kDemoFault, "--deterministic", "--builds", "2", "--fail-regex",
         "FAILED \\| [0-9]+ comparison", "--check", "sh", "-c", check},
        cols, rows, {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  }

  std::string dir_;
};

// The Reduce screen's head: "reducing  phase ddmin  check 3 of at most 6  kept ...".
std::string reduce_head(const PtySession& term) { return term.line(1); }

void walk(PtySession& term, int cols) {
  // The first question: the Graph already shows the model, and why it has no errors yet.
  ASSERT_TRUE(term.wait_for_text(kPrompt, kProbe)) << term.screen();
  term.send("2");
  ASSERT_TRUE(term.wait_for_text("No errors yet: the layer-wise step has not run", kKey)) << term.screen();
  EXPECT_TRUE(shows(term, "conv2")) << term.screen();
  term.send("1");
  ASSERT_NO_FATAL_FAILURE(answer(term, "No: the engine is inaccurate", "\r"));
  ASSERT_NO_FATAL_FAILURE(answer(term, "No: every build shows", "n"));

  // The layer-wise question: the Graph has the errors; w scrolls to the worst node, conv2 (5/10).
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "first_culprit: conv2") && shows(term, kPrompt); }, kProbe))
      << term.screen();
  term.send("2");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Err/tol") && !shows(term, "No errors yet"); }, kKey))
      << term.screen();
  term.send("w");
  ASSERT_TRUE(term.wait_until([&] { return last_line_has(term, "node 5/10"); }, kKey)) << term.screen();

  // Layers: s puts the worst first; / filters; Enter opens the Tensor detail; Esc comes back.
  term.send("3");
  ASSERT_TRUE(term.wait_for_text("Rank", kKey)) << term.screen();
  term.send("s");
  ASSERT_TRUE(term.wait_until([&] { return term.line(2).rfind("conv2", 0) == 0; }, kKey)) << term.screen();
  term.send("/relu\r");
  ASSERT_TRUE(term.wait_until([&] { return last_line_has(term, "/relu") && !shows(term, "conv1"); }, kKey))
      << term.screen();
  EXPECT_EQ(term.line(2).rfind("relu2", 0), 0u) << term.screen();
  term.send("\r");
  ASSERT_TRUE(term.wait_for_text("Tensor relu2", kKey)) << term.screen();
  EXPECT_TRUE(shows(term, "FAILED")) << term.screen();
  term.send("\x1b");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Rank") && !shows(term, "Tensor relu2"); }, kKey))
      << term.screen();

  // The Flowchart's evidence line that names the culprit opens its row in Layers.
  term.send("1");
  ASSERT_TRUE(term.wait_for_text(kPrompt, kKey)) << term.screen();
  term.send(kDown);
  ASSERT_TRUE(term.wait_until([&] { return last_line_has(term, "Enter opens 'conv2'"); }, kKey)) << term.screen();
  term.send("\r");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Rank") && last_line_has(term, "layer "); }, kKey))
      << term.screen();
  // y on the Flowchart answers, the link notwithstanding.
  term.send("1");
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the failure reproduces", "y"));

  // conv2 fails alone; n sends the walk to the reduction anyway. Its screen comes as tab 7 and
  // counts the checks as they run, naming the file the check reads.
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the subgraph fails", "n"));
  ASSERT_TRUE(term.wait_until([&] { return term.line(0).find("7 Reduce") != std::string::npos; }, kProbe))
      << term.screen();
  term.send("7");
  ASSERT_TRUE(
      term.wait_until([&] { return reduce_head(term).find("check 2 of at most") != std::string::npos; }, kProbe))
      << term.screen();
  if (cols >= 100) {
    EXPECT_TRUE(shows(term, "/work/vernier_debug.onnx")) << term.screen();
  }
  ASSERT_TRUE(term.wait_until([&] { return reduce_head(term).find("check 3") != std::string::npos; }, kProbe))
      << term.screen();
  ASSERT_TRUE(term.wait_until([&] { return reduce_head(term).rfind("done", 0) == 0; }, kProbe)) << term.screen();
  EXPECT_EQ(term.screen().find("at most 0"), std::string::npos) << term.screen();
  EXPECT_TRUE(shows(term, "conv2 (Conv)")) << term.screen();

  // The reduced model fails: Enter accepts, the bundle follows; Enter on the culprit opens it.
  term.send("1");
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the reduced model", "\r"));
  ASSERT_TRUE(term.wait_for_text("Bug-report bundle:", kProbe)) << term.screen();
  EXPECT_TRUE(shows(term, "Culprit: node 'conv2'")) << term.screen();
  term.send("\r");
  ASSERT_TRUE(term.wait_until([&] { return last_line_has(term, "node 5/10"); }, kKey)) << term.screen();
}

TEST_F(CockpitTerminal, GraphLayersTensorAndReduceFollowTheWalk) {
  for (const auto& [cols, rows] : {std::pair{120, 40}, std::pair{80, 24}}) {
    SCOPED_TRACE(std::to_string(cols) + "x" + std::to_string(rows));
    std::filesystem::remove_all(dir_ + "/work");
    auto term = start(cols, rows);
    ASSERT_NE(term, nullptr);
    ASSERT_NO_FATAL_FAILURE(walk(*term, cols));
    term->send("Q");
    const std::optional<int> status = term->wait_exit(kKey);
    ASSERT_TRUE(status.has_value()) << term->screen();
    ASSERT_TRUE(WIFEXITED(*status));
    EXPECT_EQ(WEXITSTATUS(*status), 1) << term->screen();  // a failure was localized
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/work/bundle/report.md"));
  }
}

}  // namespace
}  // namespace vn::tui::testing
