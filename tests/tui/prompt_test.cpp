// SPDX-License-Identifier: Apache-2.0
#include "tui/widgets/prompt.h"

#include <gtest/gtest.h>

#include "golden.h"

namespace vn::tui {
namespace {

Prompt bisect_prompt(const Bindings& b) {
  return Prompt("Does the reduced model still fail? Nodes 12..47 of 230 remain.",
                {Prompt::choice(b, Action::kGood, "good"), Prompt::choice(b, Action::kBad, "bad"),
                 Prompt::choice(b, Action::kSkip, "skip"), Prompt::choice(b, Action::kUndo, "undo"),
                 Prompt::choice(b, Action::kQuit, "quit")},
                1);
}

std::string draw(const Prompt& p, int w, int h) {
  Canvas c(w, h);
  p.draw(c, {0, 0, w, h});
  return c.dump();
}

TEST(Prompt, Golden80x24) {
  const Bindings b;
  const Prompt p = bisect_prompt(b);
  Canvas c(80, 24);
  c.fill(c.bounds(), ".");
  p.draw(c, {0, 0, 80, 24});
  testing::expect_golden("prompt_80x24", testing::screen_text(c));
}

TEST(Prompt, ChoiceKeysComeFromTheBindings) {
  Bindings b;
  EXPECT_EQ(Prompt::choice(b, Action::kGood, "good").key, "g");
  ASSERT_TRUE(b.unbind("undo", "u").ok());
  EXPECT_EQ(Prompt::choice(b, Action::kUndo, "undo").key, "");
}

TEST(Prompt, ChoosesByActionByAcceptOrDismisses) {
  const Bindings b;
  Prompt p = bisect_prompt(b);
  EXPECT_EQ(p.highlighted(), 1u);
  EXPECT_EQ(p.handle(Action::kDown), kIgnored);
  EXPECT_EQ(p.handle(Action::kSkip), kHandled | kRedraw);
  EXPECT_EQ(p.result(), Action::kSkip);
  EXPECT_EQ(p.handle(Action::kGood), kIgnored);  // answered
  p.reset();
  EXPECT_EQ(p.result(), std::nullopt);
  EXPECT_EQ(p.highlighted(), 1u);
  p.handle(Action::kRight);
  p.handle(Action::kNextPane);
  p.handle(Action::kLeft);
  EXPECT_EQ(p.highlighted(), 2u);
  p.handle(Action::kAccept);
  EXPECT_EQ(p.result(), Action::kSkip);
  p.reset();
  p.handle(Action::kLeft);
  p.handle(Action::kLeft);
  EXPECT_EQ(p.highlighted(), 4u);  // wraps
  p.handle(Action::kBack);
  EXPECT_EQ(p.result(), Action::kBack);
}

TEST(Prompt, YesNoWithDefault) {
  const Bindings b;
  Prompt p("Cancel the running reduction?",
           {Prompt::choice(b, Action::kYes, "yes"), Prompt::choice(b, Action::kNo, "no")}, 1);
  p.handle(Action::kEnter);
  EXPECT_EQ(p.result(), Action::kNo);
  Prompt clamped("?", {Prompt::choice(b, Action::kYes, "yes")}, 5);
  EXPECT_EQ(clamped.highlighted(), 0u);
  Prompt none("Nothing to choose", {});
  EXPECT_EQ(none.handle(Action::kAccept), kHandled);
  EXPECT_EQ(none.result(), std::nullopt);
  EXPECT_EQ(draw(none, 30, 5),
            "    ┌───────────────────┐\n"
            "    │ Nothing to choose │\n"
            "    │                   │\n"
            "    └───────────────────┘\n"
            "\n");
}

TEST(Prompt, NarrowAndTinySizes) {
  const Bindings b;
  const Prompt p = bisect_prompt(b);
  EXPECT_EQ(draw(p, 20, 8),
            "Does the reduced\n"
            "model still fail?\n"
            "Nodes 12..47 of 230\n"
            "remain.\n"
            " [g] good  [b] bad\n"
            " [s] skip  [u] undo\n"
            "      [Q] quit\n"
            "\n");
  EXPECT_EQ(draw(p, 40, 3),
            "Does the reduced model still fail? Nodes\n"
            " [g] good  [b] bad  [s] skip  [u] undo\n"
            "                [Q] quit\n");
  EXPECT_EQ(draw(p, 30, 1), " [g] good  [b] bad  [s] skip\n");  // one row: the choices only
  EXPECT_EQ(draw(p, 1, 1), "[\n");
  EXPECT_EQ(draw(p, 0, 4), "\n\n\n\n");
}

}  // namespace
}  // namespace vn::tui
