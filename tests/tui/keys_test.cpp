// SPDX-License-Identifier: Apache-2.0
#include "tui/keys.h"

#include <gtest/gtest.h>

namespace vn::tui {
namespace {

using Keys = std::vector<Key>;

TEST(KeyFromCodePoint, CanonicalForms) {
  EXPECT_EQ(key_from_code_point(0x03), Key::ctrl('c'));
  EXPECT_EQ(key_from_code_point(0x01), Key::ctrl('A'));
  EXPECT_EQ(key_from_code_point(0x09), Key::of(Key::kTab));
  EXPECT_EQ(key_from_code_point(0x0D), Key::of(Key::kEnter));
  EXPECT_EQ(key_from_code_point(0x0A), Key::of(Key::kEnter));
  EXPECT_EQ(key_from_code_point(0x7F), Key::of(Key::kBackspace));
  EXPECT_EQ(key_from_code_point(0x08), Key::of(Key::kBackspace));
  EXPECT_EQ(key_from_code_point(0x1B), Key::of(Key::kEscape));
  EXPECT_EQ(key_from_code_point(0x00), Key::of(U' ', kModCtrl));
  EXPECT_EQ(key_from_code_point(0x1F), Key::of(U'_', kModCtrl));
  EXPECT_EQ(key_from_code_point(U'G'), Key::of(U'G'));
  EXPECT_EQ(key_from_code_point(U'精'), Key::of(U'精'));
}

TEST(DecodeKeys, TextAndControlCharacters) {
  EXPECT_EQ(decode_keys("aé精\r\x7f\t"),
            (Keys{Key::of('a'), Key::of(U'é'), Key::of(U'精'), Key::of(Key::kEnter), Key::of(Key::kBackspace),
                  Key::of(Key::kTab)}));
  EXPECT_EQ(decode_keys("\x17"), (Keys{Key::ctrl('w')}));
}

TEST(DecodeKeys, CsiAndSs3Sequences) {
  EXPECT_EQ(decode_keys("\x1b[A\x1b[B\x1b[C\x1b[D"),
            (Keys{Key::of(Key::kUp), Key::of(Key::kDown), Key::of(Key::kRight), Key::of(Key::kLeft)}));
  EXPECT_EQ(decode_keys("\x1bOA\x1bOH\x1bOF"), (Keys{Key::of(Key::kUp), Key::of(Key::kHome), Key::of(Key::kEnd)}));
  EXPECT_EQ(decode_keys("\x1b[H\x1b[F\x1b[1~\x1b[4~"),
            (Keys{Key::of(Key::kHome), Key::of(Key::kEnd), Key::of(Key::kHome), Key::of(Key::kEnd)}));
  EXPECT_EQ(decode_keys("\x1b[2~\x1b[3~\x1b[5~\x1b[6~"),
            (Keys{Key::of(Key::kInsert), Key::of(Key::kDelete), Key::of(Key::kPageUp), Key::of(Key::kPageDown)}));
  EXPECT_EQ(decode_keys("\x1bOP\x1bOS\x1b[15~\x1b[21~\x1b[24~"),
            (Keys{Key::of(Key::kF1), Key::of(Key::kF4), Key::of(Key::kF5), Key::of(Key::kF10), Key::of(Key::kF12)}));
  EXPECT_EQ(decode_keys("\x1b[[A\x1b[[E"), (Keys{Key::of(Key::kF1), Key::of(Key::kF5)}));  // Linux console
  EXPECT_EQ(decode_keys("\x1b[Z"), (Keys{Key::of(Key::kTab, kModShift)}));
  EXPECT_EQ(decode_keys("\x1bOM"), (Keys{Key::of(Key::kEnter)}));
}

TEST(DecodeKeys, XtermModifiers) {
  EXPECT_EQ(decode_keys("\x1b[1;5A"), (Keys{Key::of(Key::kUp, kModCtrl)}));
  EXPECT_EQ(decode_keys("\x1b[1;2D"), (Keys{Key::of(Key::kLeft, kModShift)}));
  EXPECT_EQ(decode_keys("\x1b[1;3C"), (Keys{Key::of(Key::kRight, kModAlt)}));
  EXPECT_EQ(decode_keys("\x1b[5;5~"), (Keys{Key::of(Key::kPageUp, kModCtrl)}));
  EXPECT_EQ(decode_keys("\x1b[1;6P"), (Keys{Key::of(Key::kF1, kModCtrl | kModShift)}));
  EXPECT_EQ(decode_keys("\x1b[99;5u"), (Keys{Key::ctrl('c')}));  // CSI u (fixterms)
}

TEST(DecodeKeys, EscapeAltAndUnknownSequences) {
  EXPECT_EQ(decode_keys("\x1b"), (Keys{Key::of(Key::kEscape)}));
  EXPECT_EQ(decode_keys("\x1b\x1b"), (Keys{Key::of(Key::kEscape), Key::of(Key::kEscape)}));
  EXPECT_EQ(decode_keys("\x1bx"), (Keys{Key::of('x', kModAlt)}));
  EXPECT_EQ(decode_keys("\x1b\x01"), (Keys{Key::of('a', kModAlt | kModCtrl)}));
  EXPECT_EQ(decode_keys("\x1b[99Xq"), (Keys{Key::of('q')}));       // unknown CSI consumed whole
  EXPECT_EQ(decode_keys("\x1b[<0;3;4Mq"), (Keys{Key::of('q')}));   // SGR mouse report is not a key
  EXPECT_EQ(decode_keys("\x1b[42~"), (Keys{}));
  EXPECT_EQ(decode_keys("\x1b[1;5"), (Keys{}));  // truncated at the end of the input
}

TEST(KeyName, PrintableNames) {
  EXPECT_EQ(key_name(Key::ctrl('c')), "Ctrl-C");
  EXPECT_EQ(key_name(Key::of(Key::kF1)), "F1");
  EXPECT_EQ(key_name(Key::of(Key::kPageDown)), "PgDn");
  EXPECT_EQ(key_name(Key::of(Key::kPageUp)), "PgUp");
  EXPECT_EQ(key_name(Key::of(Key::kTab, kModShift)), "Shift-Tab");
  EXPECT_EQ(key_name(Key::of('x', kModAlt)), "Alt-x");
  EXPECT_EQ(key_name(Key::of(Key::kUp, kModCtrl | kModAlt)), "Ctrl-Alt-Up");
  EXPECT_EQ(key_name(Key::of(' ')), "Space");
  EXPECT_EQ(key_name(Key::of('G')), "G");
  EXPECT_EQ(key_name(Key::of(U'精')), "精");
  EXPECT_EQ(key_name(Key::of(Key::kEscape)), "Esc");
  EXPECT_EQ(key_name(Key::of(Key::kResize)), "Resize");
  EXPECT_EQ(key_name(Key::mouse(Key::kWheelUp, 1, 2)), "WheelUp");
  EXPECT_EQ(key_name(Key::of(0x85)), "U+0085");
}

TEST(ParseKey, AcceptsNamesModifiersAndAliases) {
  EXPECT_EQ(parse_key("q"), Key::of('q'));
  EXPECT_EQ(parse_key("G"), Key::of('G'));
  EXPECT_EQ(parse_key("Ctrl-C"), Key::ctrl('c'));
  EXPECT_EQ(parse_key("C-c"), Key::ctrl('c'));
  EXPECT_EQ(parse_key("ctrl-l"), Key::ctrl('l'));
  EXPECT_EQ(parse_key("M-x"), Key::of('x', kModAlt));
  EXPECT_EQ(parse_key("Shift-Tab"), Key::of(Key::kTab, kModShift));
  EXPECT_EQ(parse_key("Shift-g"), Key::of('G'));
  EXPECT_EQ(parse_key("pagedown"), Key::of(Key::kPageDown));
  EXPECT_EQ(parse_key("Escape"), Key::of(Key::kEscape));
  EXPECT_EQ(parse_key("Return"), Key::of(Key::kEnter));
  EXPECT_EQ(parse_key("F12"), Key::of(Key::kF12));
  EXPECT_EQ(parse_key("Ctrl-Up"), Key::of(Key::kUp, kModCtrl));
  EXPECT_EQ(parse_key("Ctrl-Space"), Key::of(' ', kModCtrl));
  EXPECT_EQ(parse_key("-"), Key::of('-'));
  EXPECT_EQ(parse_key("精"), Key::of(U'精'));
}

TEST(ParseKey, RejectsInvalidNames) {
  for (const char* bad : {"", "Ctrl-", "Hyper-x", "Ctrl-1", "Shift-1", "F13", "abc", "Resize", "Interrupt",
                          "Shift-Space", "Ctrl-精", "\x01"}) {
    EXPECT_EQ(parse_key(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ParseKey, RoundTripsKeyNames) {
  std::vector<Key> keys = {Key::ctrl('a'), Key::of('x', kModAlt), Key::of(Key::kTab, kModShift), Key::of(' '),
                           Key::of('G'),   Key::of(U'\\', kModCtrl), Key::of(Key::kEnd, kModCtrl | kModShift)};
  for (char32_t code = Key::kUp; code <= Key::kF12; ++code) keys.push_back(Key::of(code));
  for (const Key& key : keys) EXPECT_EQ(parse_key(key_name(key)), key) << key_name(key);
}

}  // namespace
}  // namespace vn::tui
