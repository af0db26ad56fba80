// SPDX-License-Identifier: Apache-2.0
// End-to-end: `vernier browse` on the report of a real layer-wise run (the demo model, its engine
// in fp16 with the demo's planted fault), in a pseudo-terminal with libvterm as the terminal, at
// 80x24 and 120x40: the worst node, sorting, filtering, the tensor detail and back, a mouse click
// on a tab, `:view`, and quitting.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_walk.h"

namespace vn::tui::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kLoad = 60s;
constexpr auto kKey = 10s;
constexpr const char* kDemoFault = "layer=conv2,kind=scale,factor=1.5,fraction=0.1,seed=7";

std::unique_ptr<PtySession> start(std::vector<std::string> args, int cols, int rows, std::vector<std::string> env = {}) {
  args.insert(args.begin(), VN_VERNIER_BIN);
  env.insert(env.end(), {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  return PtySession::spawn(args, cols, rows, env);
}

// A mouse click (button 1 pressed and released) at screen cell (col, row), as xterm reports it
// in SGR mode (the mode ncurses asks for on xterm-256color).
std::string click(int col, int row) {
  const std::string at = std::to_string(col + 1) + ";" + std::to_string(row + 1);
  return "\x1b[<0;" + at + "M\x1b[<0;" + at + "m";
}

class BrowseTerminal : public ::testing::TestWithParam<std::pair<int, int>> {
 protected:
  // One real layer-wise report for all sizes.
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/vn_e2e_browse_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto run = PtySession::spawn({VN_VERNIER_BIN, "run", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx", "--ref",
                                  "--engine", "--fp16", "--mark-all", "--threads", "1", "--inject-fault", kDemoFault,
                                  "--report-json", dir_ + "/report.json"},
                                 200, 60, {"TERM=dumb", "LANG=C.UTF-8"});
    ASSERT_NE(run, nullptr);
    const std::optional<int> status = run->wait_exit(kLoad);
    ASSERT_TRUE(status.has_value()) << run->screen();
    ASSERT_EQ(WEXITSTATUS(*status), 1) << run->screen();  // the fault fails the comparison
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string dir_;
};

std::string BrowseTerminal::dir_;

TEST_P(BrowseTerminal, WorstNodeSortFilterDetailMouseAndView) {
  const auto [cols, rows] = GetParam();
  // What the screens must show, from the report itself: the layer with the largest error.
  std::ifstream in(dir_ + "/report.json");
  const nlohmann::json report = nlohmann::json::parse(in);
  const nlohmann::json& layers = report["comparisons"][0]["comparison"]["layers"];
  std::string worst;
  int64_t worst_node = -1;
  double largest = -1;
  for (const nlohmann::json& l : layers) {
    const double e = l["accumulated_excess"].is_number() ? l["accumulated_excess"].get<double>() : 1e300;
    if (e > largest) {
      largest = e;
      worst = l["name"];
      worst_node = l["node"];
    }
  }
  ASSERT_FALSE(worst.empty());
  ASSERT_GT(largest, 1.0);

  auto term = start({"browse", dir_ + "/report.json"}, cols, rows);
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_for_text("Err/tol", kLoad)) << term->screen();
  EXPECT_TRUE(term->alternate_screen());

  // w: the worst node, its position in the status line.
  term->send("w");
  const std::string position = "node " + std::to_string(worst_node + 1) + "/";
  ASSERT_TRUE(term->wait_until([&] { return term->line(rows - 1).find(position) != std::string::npos; }, kKey))
      << position << "\n" << term->screen();

  // Layers: the first s puts the worst layer on top.
  term->send("2");
  ASSERT_TRUE(term->wait_for_text("Min atol", kKey)) << term->screen();
  term->send("s");
  ASSERT_TRUE(term->wait_until([&] { return term->line(2).find(worst) != std::string::npos; }, kKey)) << term->screen();

  // / filters, and the status line says so until Esc clears it.
  term->send("/conv\r");
  ASSERT_TRUE(term->wait_for_text("/conv  (Esc clears)", kKey)) << term->screen();
  ASSERT_TRUE(term->wait_until([&] { return !shows(*term, "relu1 "); }, kKey)) << term->screen();

  // Enter opens the tensor detail, Esc comes back to the (still filtered) table.
  term->send("\r");
  ASSERT_TRUE(term->wait_for_text("Worst elements", kKey)) << term->screen();
  ASSERT_TRUE(term->wait_for_text("FAILED", kKey)) << term->screen();
  term->send("\x1b");
  ASSERT_TRUE(term->wait_until([&] { return !shows(*term, "Worst elements") && shows(*term, "Min atol"); }, kKey))
      << term->screen();
  // (A frame can arrive in pieces: wait for its last row too.)
  ASSERT_TRUE(term->wait_for_text("Esc clears", kKey)) << term->screen();
  term->send("\x1b");
  ASSERT_TRUE(term->wait_until([&] { return !shows(*term, "Esc clears") && shows(*term, "relu1 "); }, kKey))
      << term->screen();

  // A click on the Graph tab.
  const std::string tabs = term->line(0);
  term->send(click(static_cast<int>(tabs.find("Graph")), 0));
  ASSERT_TRUE(term->wait_for_text("Err/tol", kKey)) << term->screen();

  // :view opens a screen by its name; one this command lacks is named as such.
  term->send(":view layers\r");
  ASSERT_TRUE(term->wait_for_text("Min atol", kKey)) << term->screen();
  term->send(":view reduce\r");
  ASSERT_TRUE(term->wait_for_text("the reduce screen is not part of this command", kKey)) << term->screen();

  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_FALSE(term->alternate_screen());
}

INSTANTIATE_TEST_SUITE_P(Sizes, BrowseTerminal, ::testing::Values(std::pair{80, 24}, std::pair{120, 40}));

TEST(RunTui, BrowsesTheComparisonItRanAndComparesAgain) {
  auto term = start({"run", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx", "--ref", "--engine", "--mark-all",
                     "--threads", "1", "--inject-fault", kDemoFault, "--tui", "--no-mouse"},
                    100, 30);
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_for_text("Err/tol", kLoad)) << term->screen();
  // The Log says where the session comes from; :set reruns the prepared backends.
  term->send(":set atol 10\r");
  ASSERT_TRUE(term->wait_for_text("comparing again", kKey)) << term->screen();
  term->send("4");
  ASSERT_TRUE(term->wait_for_text("with atol 10 rtol", kKey)) << term->screen();
  EXPECT_TRUE(shows(*term, "Iteration 0")) << term->screen();
  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value()) << term->screen();
  EXPECT_EQ(WEXITSTATUS(*status), 1);  // the run's verdict: the planted fault fails
  EXPECT_TRUE(shows(*term, "FAILED | 1 comparison(s)")) << term->screen();
}

TEST(BrowseCommand, OpensATriageReportThroughItsSession) {
  char tmpl[] = "/tmp/vn_e2e_browse_triage_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto triage = PtySession::spawn({VN_VERNIER_BIN, "triage", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx",
                                   "--headless", "--threads", "1", "--deterministic", "--builds", "2", "--inject-fault",
                                   kDemoFault, "--workdir", dir + "/t"},
                                  200, 60, {"TERM=dumb", "LANG=C.UTF-8"});
  ASSERT_NE(triage, nullptr);
  ASSERT_TRUE(triage->wait_exit(std::chrono::seconds(120)).has_value()) << triage->screen();
  auto term = start({"browse", dir + "/t/report.json"}, 80, 24);
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_for_text("Err/tol", kLoad)) << term->screen();
  // The layers carry the triage's errors and ranks; the tensors' statistics were not kept.
  term->send("2s");
  ASSERT_TRUE(term->wait_until([&] { return term->line(2).find("conv2") != std::string::npos; }, kKey)) << term->screen();
  term->send("\r");
  ASSERT_TRUE(term->wait_for_text("no tensor statistics", kKey)) << term->screen();
  term->send("q");
  term->send("q");
  ASSERT_TRUE(term->wait_exit(kKey).has_value()) << term->screen();
  std::filesystem::remove_all(dir);
}

TEST(BrowseCommand, RefusesAReportWithoutItsModelOrALayerwiseComparison) {
  char tmpl[] = "/tmp/vn_e2e_browse_bad_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/plain.json") << R"({"comparisons": [{"comparison": {"passed": true, "tensors": []}}]})";
  std::ofstream(dir + "/hostile.json")
      << R"({"model": "x.onnx", "comparisons": [{"comparison": {"tensors": [], "layers": [{"name": "a", "accumulated": [7]}]}}]})";
  for (const auto& [file, message] : {std::pair{"plain.json", "no layer-wise comparison in the report"},
                                      std::pair{"hostile.json", "is not the index of a tensor or -1"}}) {
    auto term = PtySession::spawn({VN_VERNIER_BIN, "browse", dir + "/" + file}, 200, 20, {"TERM=dumb"});
    ASSERT_NE(term, nullptr);
    const std::optional<int> status = term->wait_exit(kKey);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(WEXITSTATUS(*status), 2) << term->screen();
    EXPECT_NE(term->screen().find(message), std::string::npos) << term->screen();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vn::tui::testing
