// SPDX-License-Identifier: Apache-2.0
// End-to-end: the triage cockpit on a real model. `vernier triage` on the ResNet-18 fixture
// (torchvision's architecture, exported at test time) with a fault planted in one convolution, in
// a pseudo-terminal at 120x40 and at 80x24: the Graph is opened during the layer-wise step and
// scrolls to the culprit, Layers sorts, filters and opens the Tensor detail (Esc back), two answers
// are undone and given again, the Reduce screen follows the built-in reduction check by check, and
// the walk ends with the bundle. Needs the `resnet18` fixture (`ctest -L models` exports it).
#include <sys/wait.h>

#include <filesystem>
#include <regex>

#include <gtest/gtest.h>

#include "e2e_walk.h"

namespace vn::tui::testing {
namespace {

using namespace std::chrono_literals;

// A ResNet-18 probe on a loaded 2-core machine takes seconds; a reduction check about one.
constexpr auto kProbe = 240s;
constexpr auto kKey = 15s;
constexpr const char* kCulprit = "/layer3/layer3.0/conv1/Conv";

class ResNetCockpit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(model_dir() + "/model.onnx")) {
      GTEST_FAIL() << "the resnet18 fixture is missing: run `ctest -L models` first";
    }
    char tmpl[] = "/tmp/vn_e2e_resnet_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string model_dir() { return std::string(VN_BINARY_DIR) + "/tests/models/resnet18"; }

  std::unique_ptr<PtySession> start(int cols, int rows) {
    return PtySession::spawn({VN_VERNIER_BIN, "triage", model_dir() + "/model.onnx", "--load-inputs",
                              model_dir() + "/input.npz", "--threads", "2", "--workdir", dir_ + "/work", "--atol",
                              "1e-3", "--rtol", "1e-3", "--deterministic", "--builds", "2", "--inject-fault",
                              std::string("layer=") + kCulprit + ",kind=scale,factor=1.5"},
                             cols, rows, {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  }

  std::string dir_;
};

// The number of the check the Reduce screen's head names ("reducing  phase ddmin  check 7 of at
// most 12 ..."), or -1.
int reduce_check(const PtySession& term) {
  static const std::regex kCheck("check ([0-9]+)");
  std::smatch match;
  const std::string head = term.line(1);
  return std::regex_search(head, match, kCheck) ? std::stoi(match[1]) : -1;
}

void walk(PtySession& term) {
  ASSERT_NO_FATAL_FAILURE(answer(term, "No: the engine is inaccurate", "\r"));
  ASSERT_NO_FATAL_FAILURE(answer(term, "No: every build shows", "n"));

  // The layer-wise question: the Graph has the errors and w scrolls to the culprit.
  ASSERT_TRUE(term.wait_until(
      [&] { return shows(term, std::string("first_culprit: ") + kCulprit) && shows(term, kPrompt); }, kProbe))
      << term.screen();
  term.send("2");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Err/tol") && !shows(term, "No errors yet"); }, kKey))
      << term.screen();
  // w selects the culprit (not the last Add, whose accumulated error is the largest): Enter opens
  // its Tensor screen, Esc comes back.
  term.send("w");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, kCulprit) && !last_line_has(term, "node 1/"); }, kKey))
      << term.screen();
  term.send("\r");
  ASSERT_TRUE(term.wait_for_text(std::string("Tensor ") + kCulprit, kKey)) << term.screen();
  term.send("\x1b");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Err/tol"); }, kKey)) << term.screen();

  // Layers: the first s puts the worst accumulated error first (far downstream), the second the
  // worst local error: the culprit, ranked 1. / filters; Enter opens the Tensor detail.
  term.send("3");
  ASSERT_TRUE(term.wait_for_text("Rank", kKey)) << term.screen();
  term.send("s");
  ASSERT_TRUE(term.wait_until([&] { return term.line(2).rfind("/layer4/", 0) == 0; }, kKey)) << term.screen();
  term.send("s");
  ASSERT_TRUE(term.wait_until([&] { return term.line(2).rfind(kCulprit, 0) == 0; }, kKey)) << term.screen();
  term.send("/layer4\r");
  ASSERT_TRUE(term.wait_until([&] { return last_line_has(term, "/layer4") && !shows(term, kCulprit); }, kKey))
      << term.screen();
  EXPECT_EQ(term.line(2).rfind("/layer4", 0), 0u) << term.screen();
  term.send("\r");
  ASSERT_TRUE(term.wait_for_text("Tensor /layer4", kKey)) << term.screen();
  term.send("\x1b");
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Rank") && !shows(term, "Tensor /layer4"); }, kKey))
      << term.screen();

  // Back on the Flowchart: y, then two answers undone at the extract question.
  term.send("1");
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the failure reproduces", "y"));
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the subgraph fails", "u"));
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "Yes: the failure reproduces") && shows(term, kPrompt); }, kKey))
      << term.screen();
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the failure reproduces", "u"));
  ASSERT_TRUE(term.wait_until([&] { return shows(term, "No: every build shows") && shows(term, kPrompt); }, kKey))
      << term.screen();
  // Answered again, the steps come back from their records.
  ASSERT_NO_FATAL_FAILURE(answer(term, "No: every build shows", "n"));
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the failure reproduces", "y"));

  // n at the extract question sends the walk to the reduction; the Reduce screen counts its
  // checks as they run.
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the subgraph fails", "n"));
  ASSERT_TRUE(term.wait_until([&] { return term.line(0).find("7 Reduce") != std::string::npos; }, kProbe))
      << term.screen();
  term.send("7");
  ASSERT_TRUE(term.wait_until([&] { return reduce_check(term) >= 1; }, kProbe)) << term.screen();
  const int first = reduce_check(term);
  ASSERT_TRUE(term.wait_until([&] { return reduce_check(term) > first || term.line(1).rfind("done", 0) == 0; }, kProbe))
      << term.screen();
  ASSERT_TRUE(term.wait_until([&] { return term.line(1).rfind("done", 0) == 0; }, kProbe)) << term.screen();
  EXPECT_EQ(term.screen().find("at most 0"), std::string::npos) << term.screen();

  term.send("1");
  ASSERT_NO_FATAL_FAILURE(answer(term, "Yes: the reduced model", "\r"));
  ASSERT_TRUE(term.wait_for_text("Bug-report bundle:", kProbe)) << term.screen();
  EXPECT_TRUE(shows(term, kCulprit)) << term.screen();
}

TEST_F(ResNetCockpit, WalksAPlantedFaultToTheBundleAt120x40And80x24) {
  for (const auto& [cols, rows] : {std::pair{120, 40}, std::pair{80, 24}}) {
    SCOPED_TRACE(std::to_string(cols) + "x" + std::to_string(rows));
    std::filesystem::remove_all(dir_ + "/work");
    auto term = start(cols, rows);
    ASSERT_NE(term, nullptr);
    ASSERT_NO_FATAL_FAILURE(walk(*term));
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
