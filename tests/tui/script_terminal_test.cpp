// SPDX-License-Identifier: Apache-2.0
#include "tui/script_terminal.h"

#include <gtest/gtest.h>

namespace vn::tui {
namespace {

using namespace std::chrono_literals;

TEST(ScriptTerminal, ReplaysKeysResizesAndSignals) {
  ScriptTerminal t(10, 4);
  EXPECT_FALSE(t.push_keys("j Hyper-x k"));
  EXPECT_EQ(t.pending(), 0u);  // nothing queued from an invalid script
  EXPECT_TRUE(t.push_keys("  j  Ctrl-C "));
  t.push_text("é");
  t.push_bytes("\x1b[A\x1bx");
  t.push_resize(20, 6);
  t.push_interrupt();
  EXPECT_EQ(t.pending(), 7u);
  EXPECT_EQ(t.read_key(5ms), Key::of('j'));
  EXPECT_EQ(t.last_timeout(), 5ms);
  EXPECT_EQ(t.read_key(0ms), Key::ctrl('c'));
  EXPECT_EQ(t.read_key(0ms), Key::of(U'é'));
  EXPECT_EQ(t.read_key(0ms), Key::of(Key::kUp));
  EXPECT_EQ(t.read_key(0ms), Key::of('x', kModAlt));
  EXPECT_EQ(t.size(), (Size{10, 4}));
  EXPECT_EQ(t.read_key(0ms), Key::of(Key::kResize));
  EXPECT_EQ(t.size(), (Size{20, 6}));
  EXPECT_EQ(t.read_key(0ms), Key::of(Key::kInterrupt));
  EXPECT_EQ(t.read_key(100ms), std::nullopt);
}

TEST(ScriptTerminal, KeepsTheLastFrameAndCursor) {
  ScriptTerminal t(6, 2, ascii_glyphs());
  EXPECT_TRUE(t.glyphs().ascii);
  EXPECT_EQ(t.dump(), "\n\n");
  Canvas c(6, 2);
  c.put_text(0, 1, "hi");
  t.set_cursor(Point{2, 1});
  t.present(c);
  EXPECT_EQ(t.dump(), "\nhi\n");
  EXPECT_EQ(t.present_count(), 1);
  EXPECT_EQ(t.cursor(), (Point{2, 1}));
  t.invalidate();
  EXPECT_EQ(t.invalidate_count(), 1);
  t.set_mouse_enabled(true);
  EXPECT_TRUE(t.mouse_enabled());
}

}  // namespace
}  // namespace vn::tui
