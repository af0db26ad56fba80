// SPDX-License-Identifier: Apache-2.0
// End-to-end: the real `vernier` binary in a pseudo-terminal, libvterm as the terminal.
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "pty_harness.h"

namespace vn::tui::testing {
namespace {

using namespace std::chrono_literals;

// Generous: the demo builds and times an engine first, on a loaded machine.
constexpr auto kLoad = 60s;
constexpr auto kKey = 10s;

std::unique_ptr<PtySession> start(std::vector<std::string> args, int cols, int rows,
                                  std::vector<std::string> env = {}) {
  args.insert(args.begin(), VN_VERNIER_BIN);
  env.insert(env.end(), {"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
  return PtySession::spawn(args, cols, rows, env);
}

TEST(EndToEnd, DemoBrowsesGraphLayersAndTensorDetail) {
  auto term = start({"demo", "--browse"}, 110, 30);
  ASSERT_NE(term, nullptr);
  // The graph appears once the comparison finished.
  ASSERT_TRUE(term->wait_for_text("Err/tol", kLoad)) << term->screen();
  EXPECT_TRUE(term->alternate_screen());
  // A frame can arrive in pieces: every check waits until it holds.
  ASSERT_TRUE(term->wait_for_text("conv2", kKey)) << term->screen();

  // Layers, sorted by culprit rank (s: accumulated, local error, then Rank): the planted fault
  // comes first.
  term->send("2");
  ASSERT_TRUE(term->wait_for_text("Min atol", kKey)) << term->screen();
  term->send("sss");
  ASSERT_TRUE(term->wait_until([&] { return term->line(2).find("conv2") != std::string::npos; }, kKey))
      << term->screen();

  // Drill into its tensor and back.
  term->send("\r");
  ASSERT_TRUE(term->wait_for_text("Worst elements", kKey)) << term->screen();
  ASSERT_TRUE(term->wait_for_text("Absolute error histogram", kKey)) << term->screen();
  term->send("\x1b");
  ASSERT_TRUE(term->wait_until([&] { return term->screen().find("Worst elements") == std::string::npos; }, kKey))
      << term->screen();
  ASSERT_TRUE(term->wait_for_text("Min atol", kKey)) << term->screen();

  // The graph follows the selection; a resize redraws at the new size.
  term->send("1");
  ASSERT_TRUE(term->wait_for_text("Err/tol", kKey)) << term->screen();
  term->resize(60, 16);
  ASSERT_TRUE(term->wait_until([&] { return term->line(15).find("help") != std::string::npos; }, kKey))
      << term->screen();

  // q at the top quits and leaves the alternate screen.
  term->send("q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_FALSE(term->alternate_screen());
}

TEST(EndToEnd, DumbTerminalGetsTheHeadlessTriage) {
  char tmpl[] = "/tmp/vn_e2e_demo_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto term = PtySession::spawn({VN_VERNIER_BIN, "demo", "--workdir", dir + "/w"}, 200, 120, {"TERM=dumb", "LANG=C.UTF-8"});
  ASSERT_NE(term, nullptr);
  const std::optional<int> status = term->wait_exit(kLoad);
  ASSERT_TRUE(status.has_value()) << term->screen();
  EXPECT_EQ(WEXITSTATUS(*status), 0) << term->screen();
  EXPECT_FALSE(term->alternate_screen());
  EXPECT_NE(term->screen().find("culprit: layer 'conv2'"), std::string::npos) << term->screen();
  std::filesystem::remove_all(dir);
}

TEST(EndToEnd, CommandLineGotoHelpAndTinyTerminalWithoutColour) {
  auto term = start({"demo", "--browse"}, 100, 28, {"NO_COLOR=1"});
  ASSERT_NE(term, nullptr);
  ASSERT_TRUE(term->wait_for_text("Err/tol", kLoad)) << term->screen();
  term->send(":goto fc\r");
  ASSERT_TRUE(term->wait_for_text("at fc", kKey)) << term->screen();
  ASSERT_TRUE(term->wait_until([&] { return term->line(27).find("node ") != std::string::npos; }, kKey))
      << term->screen();
  // A new tolerance runs the prepared backends again on the worker; the Log says how it went.
  term->send(":set atol 1\r");
  ASSERT_TRUE(term->wait_for_text("comparing again", kKey)) << term->screen();
  term->send("4");
  ASSERT_TRUE(term->wait_for_text("with atol 1 rtol", kKey)) << term->screen();
  term->send(":set atol x\r");
  ASSERT_TRUE(term->wait_for_text("usage: set atol|rtol VALUE", kKey)) << term->screen();
  term->send("5");
  ASSERT_TRUE(term->wait_for_text("Commands (:)", kKey)) << term->screen();
  // Down to 20x8 the screens still draw: the tab bar on top, the status line at the bottom.
  term->resize(20, 8);
  ASSERT_TRUE(term->wait_until([&] { return term->line(7).find("help") != std::string::npos; }, kKey))
      << term->screen();
  term->send("Q");
  const std::optional<int> status = term->wait_exit(kKey);
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(term->alternate_screen());
}

TEST(EndToEnd, InteractiveReduceAsksOnTheReduceScreen) {
  char tmpl[] = "/tmp/vn_e2e_reduce_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto term = start({"debug", "reduce", std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx", "-o", dir + "/min.onnx",
                     "--iter-artifact", dir + "/iter.onnx", "--save-debug-replay", dir + "/replay.json", "--tui"},
                    100, 30);
  ASSERT_NE(term, nullptr);
  std::optional<int> status;
  auto exited = [&] {
    if (!status) status = term->wait_exit(std::chrono::milliseconds(0));
    return status.has_value();
  };
  // Each question names its check, so a wait never mistakes the previous question for the next.
  auto question = [](int check) { return "Check " + std::to_string(check) + ": does it fail?";
  };
  ASSERT_TRUE(term->wait_for_text(question(1), kLoad)) << term->screen();
  EXPECT_TRUE(term->alternate_screen());
  // Two answers, then two undos in a row: each brings back the question before, with the
  // answers kept counted as checks done.
  auto shows_question = [&](int check, const std::string& done) {
    return term->screen().find(question(check)) != std::string::npos && term->screen().find(done) != std::string::npos;
  };
  term->send("b");
  ASSERT_TRUE(term->wait_for_text(question(2), kKey)) << term->screen();
  term->send("b");
  ASSERT_TRUE(term->wait_for_text(question(3), kKey)) << term->screen();
  term->send("u");
  ASSERT_TRUE(term->wait_until([&] { return shows_question(2, "1 check(s)"); }, kKey)) << term->screen();
  term->send("u");
  ASSERT_TRUE(term->wait_until([&] { return shows_question(1, "0 check(s)"); }, kKey)) << term->screen();
  // Every candidate fails from here on, until the reduction ends and the program exits.
  for (int check = 1; check <= 40 && !exited(); ++check) {
    ASSERT_TRUE(term->wait_until([&] { return exited() || term->screen().find(question(check)) != std::string::npos; },
                                 kKey))
        << term->screen();
    if (exited()) break;
    term->send("b");
  }
  ASSERT_TRUE(term->wait_until(exited, kKey)) << term->screen();
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0) << term->screen();
  EXPECT_FALSE(term->alternate_screen());
  EXPECT_NE(term->screen().find("Finished"), std::string::npos) << term->screen();
  EXPECT_TRUE(std::filesystem::exists(dir + "/min.onnx"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vn::tui::testing
