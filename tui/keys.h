// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vn::tui {

/// Modifier bits of a Key.
enum KeyMod : uint8_t { kModNone = 0, kModShift = 1, kModAlt = 2, kModCtrl = 4 };

/// One input event from the terminal: a key with modifiers, or a resize, mouse or signal event.
///
/// Canonical form, which decoding and parsing both produce so keys compare with ==:
/// - printable characters are their code point with no modifier ('G' is not Shift-g);
/// - control characters become Ctrl plus the lower-case letter (0x03 is Ctrl-c), except Tab,
///   Enter (CR and LF), Esc and Backspace (DEL and ^H), which are named keys;
/// - Alt (or Meta, ESC-prefixed) sets kModAlt on the key that follows.
struct Key {
  /// Codes beyond the Unicode range for keys that are not characters.
  enum Special : char32_t {
    kUp = 0x110000,
    kDown,
    kLeft,
    kRight,
    kHome,
    kEnd,
    kPageUp,
    kPageDown,
    kInsert,
    kDelete,
    kBackspace,
    kEnter,
    kTab,
    kEscape,
    kF1,
    kF2,
    kF3,
    kF4,
    kF5,
    kF6,
    kF7,
    kF8,
    kF9,
    kF10,
    kF11,
    kF12,
    /// The terminal changed size; Terminal::size() has the new size.
    kResize,
    /// A mouse button 1 click at (x, y).
    kMouseClick,
    /// The wheel turned up (away from the user) at (x, y).
    kWheelUp,
    /// The wheel turned down at (x, y).
    kWheelDown,
    /// SIGINT, SIGTERM or SIGHUP arrived: the application should leave at once.
    kInterrupt,
  };

  char32_t code = 0;
  uint8_t mods = kModNone;
  /// Cell of a mouse event; -1 for other keys.
  int x = -1;
  int y = -1;

  /// A character or special key with modifiers (mouse position unset).
  static Key of(char32_t code, uint8_t mods = kModNone) { return Key{code, mods, -1, -1}; }
  /// Ctrl plus a letter, in canonical (lower-case) form.
  static Key ctrl(char letter);
  /// A mouse event of `kind` (kMouseClick, kWheelUp or kWheelDown) at cell (x, y).
  static Key mouse(Special kind, int x, int y) { return Key{kind, kModNone, x, y}; }

  /// True for a code point that is not a special key (it may carry modifiers).
  bool is_character() const { return code < kUp; }
  /// True for a character without Ctrl or Alt, i.e. text that a line editor inserts.
  bool is_printable() const { return is_character() && code >= 0x20 && (mods & (kModCtrl | kModAlt)) == 0; }
  /// True for mouse events.
  bool is_mouse() const { return code == kMouseClick || code == kWheelUp || code == kWheelDown; }

  friend bool operator==(const Key&, const Key&) = default;
};

/// The canonical Key for a control byte or code point as a terminal sends it (0x01..0x1F, 0x7F
/// and characters), applying the rules in Key's comment.
Key key_from_code_point(char32_t cp);

/// Decodes raw terminal input: UTF-8 text, control characters and escape sequences (CSI and SS3
/// forms of arrows, Home/End, Insert/Delete, PgUp/PgDn, F1..F12 with xterm modifier parameters,
/// Shift-Tab, the Linux console's F1..F5, and ESC-prefixed Alt keys). An ESC at the end of the
/// input is the Esc key. Unknown escape sequences are consumed whole and produce no key.
std::vector<Key> decode_keys(std::string_view bytes);

/// A printable name: "q", "G", "Space", "Ctrl-C", "Alt-x", "Shift-Tab", "F1", "PgDn", "Up".
/// Ctrl letters are shown upper-case as users write them; parse_key(key_name(k)) == k for every
/// key that parse_key can produce.
std::string key_name(const Key& key);

/// Parses a key name: a single character, or a named key (Up, Down, Left, Right, Home, End,
/// PgUp/PageUp, PgDn/PageDown, Insert, Delete/Del, Backspace, Enter/Return, Tab, Esc/Escape,
/// Space, F1..F12; case-insensitive), optionally prefixed by modifiers Ctrl-/C-, Alt-/M-/Meta-,
/// Shift-/S-. Ctrl applies to letters, Space and named keys; Shift with a letter gives the
/// upper-case letter. Returns nullopt for anything else (empty text, unknown names, "Ctrl-1").
std::optional<Key> parse_key(std::string_view name);

}  // namespace vn::tui
