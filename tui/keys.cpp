// SPDX-License-Identifier: Apache-2.0
#include "tui/keys.h"

#include <array>
#include <charconv>

#include "tui/text.h"

namespace vn::tui {
namespace {

struct NamedKey {
  std::string_view name;
  char32_t code;
};

// The first name of each code is the one key_name() prints.
constexpr std::array kNamedKeys = {
    NamedKey{"Up", Key::kUp},           NamedKey{"Down", Key::kDown},
    NamedKey{"Left", Key::kLeft},       NamedKey{"Right", Key::kRight},
    NamedKey{"Home", Key::kHome},       NamedKey{"End", Key::kEnd},
    NamedKey{"PgUp", Key::kPageUp},     NamedKey{"PageUp", Key::kPageUp},
    NamedKey{"PgDn", Key::kPageDown},   NamedKey{"PageDown", Key::kPageDown},
    NamedKey{"Insert", Key::kInsert},   NamedKey{"Delete", Key::kDelete},
    NamedKey{"Del", Key::kDelete},      NamedKey{"Backspace", Key::kBackspace},
    NamedKey{"Enter", Key::kEnter},     NamedKey{"Return", Key::kEnter},
    NamedKey{"Tab", Key::kTab},         NamedKey{"Esc", Key::kEscape},
    NamedKey{"Escape", Key::kEscape},   NamedKey{"Space", U' '},
    NamedKey{"F1", Key::kF1},           NamedKey{"F2", Key::kF2},
    NamedKey{"F3", Key::kF3},           NamedKey{"F4", Key::kF4},
    NamedKey{"F5", Key::kF5},           NamedKey{"F6", Key::kF6},
    NamedKey{"F7", Key::kF7},           NamedKey{"F8", Key::kF8},
    NamedKey{"F9", Key::kF9},           NamedKey{"F10", Key::kF10},
    NamedKey{"F11", Key::kF11},         NamedKey{"F12", Key::kF12},
};

// Events that are never typed, so parse_key() does not accept their names.
constexpr std::array kEventNames = {
    NamedKey{"Resize", Key::kResize},       NamedKey{"Click", Key::kMouseClick},
    NamedKey{"WheelUp", Key::kWheelUp},     NamedKey{"WheelDown", Key::kWheelDown},
    NamedKey{"Interrupt", Key::kInterrupt},
};

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (fold(a[i]) != fold(b[i])) return false;
  }
  return true;
}

bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

char32_t to_lower_ascii(char32_t c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

char32_t to_upper_ascii(char32_t c) { return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c; }

// Punctuation that terminals can send with Ctrl (0x1C..0x1F) besides letters and Space.
constexpr std::string_view kCtrlPunctuation = "\\]^_";

int parse_int(std::string_view text, int fallback) {
  int value = fallback;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size() ? value : fallback;
}

std::optional<char32_t> tilde_key(int number) {
  switch (number) {
    case 1:
    case 7:
      return Key::kHome;
    case 4:
    case 8:
      return Key::kEnd;
    case 2:
      return Key::kInsert;
    case 3:
      return Key::kDelete;
    case 5:
      return Key::kPageUp;
    case 6:
      return Key::kPageDown;
    default:
      break;
  }
  if (number >= 11 && number <= 15) return Key::kF1 + static_cast<char32_t>(number - 11);
  if (number >= 17 && number <= 21) return Key::kF6 + static_cast<char32_t>(number - 17);
  if (number == 23 || number == 24) return Key::kF11 + static_cast<char32_t>(number - 23);
  return std::nullopt;
}

std::optional<char32_t> letter_key(char final_byte) {
  switch (final_byte) {
    case 'A':
      return Key::kUp;
    case 'B':
      return Key::kDown;
    case 'C':
      return Key::kRight;
    case 'D':
      return Key::kLeft;
    case 'H':
      return Key::kHome;
    case 'F':
      return Key::kEnd;
    case 'P':
    case 'Q':
    case 'R':
    case 'S':
      return Key::kF1 + static_cast<char32_t>(final_byte - 'P');
    default:
      return std::nullopt;
  }
}

// Decodes the CSI sequence whose parameters start at bytes[i] (after "ESC ["). Advances `i` past
// the final byte and returns the key, or nullopt for sequences that are not keys.
std::optional<Key> decode_csi(std::string_view bytes, size_t& i) {
  const size_t start = i;
  while (i < bytes.size() && static_cast<unsigned char>(bytes[i]) >= 0x20 &&
         static_cast<unsigned char>(bytes[i]) <= 0x3F) {
    ++i;
  }
  if (i >= bytes.size()) return std::nullopt;
  const char final_byte = bytes[i++];
  const std::string_view params = bytes.substr(start, i - 1 - start);
  if (!params.empty() && (params[0] == '<' || params[0] == '?' || params[0] == '>')) return std::nullopt;
  const size_t semicolon = params.find(';');
  const int first = parse_int(params.substr(0, semicolon), 1);
  const int modifier = semicolon == std::string_view::npos ? 1 : parse_int(params.substr(semicolon + 1), 1);
  const auto mods = static_cast<uint8_t>((modifier - 1) & (kModShift | kModAlt | kModCtrl));
  if (final_byte == 'Z') return Key::of(Key::kTab, kModShift);
  if (final_byte == '~') {
    const auto code = tilde_key(first);
    if (!code) return std::nullopt;
    return Key::of(*code, mods);
  }
  if (final_byte == 'u') {
    Key key = key_from_code_point(static_cast<char32_t>(first));
    key.mods |= mods;
    return key;
  }
  const auto code = letter_key(final_byte);
  if (!code) return std::nullopt;
  return Key::of(*code, mods);
}

}  // namespace

Key Key::ctrl(char letter) { return Key::of(to_lower_ascii(static_cast<unsigned char>(letter)), kModCtrl); }

Key key_from_code_point(char32_t cp) {
  switch (cp) {
    case 0x00:
      return Key::of(U' ', kModCtrl);
    case 0x08:
    case 0x7F:
      return Key::of(Key::kBackspace);
    case 0x09:
      return Key::of(Key::kTab);
    case 0x0A:
    case 0x0D:
      return Key::of(Key::kEnter);
    case 0x1B:
      return Key::of(Key::kEscape);
    default:
      break;
  }
  if (cp >= 0x01 && cp <= 0x1A) return Key::of(U'a' + cp - 1, kModCtrl);
  if (cp >= 0x1C && cp <= 0x1F) return Key::of(static_cast<char32_t>(kCtrlPunctuation[cp - 0x1C]), kModCtrl);
  return Key::of(cp);
}

std::vector<Key> decode_keys(std::string_view bytes) {
  std::vector<Key> keys;
  size_t i = 0;
  while (i < bytes.size()) {
    if (bytes[i] != '\x1b') {
      keys.push_back(key_from_code_point(next_code_point(bytes, i)));
      continue;
    }
    if (i + 1 == bytes.size() || bytes[i + 1] == '\x1b') {
      keys.push_back(Key::of(Key::kEscape));
      ++i;
      continue;
    }
    const char introducer = bytes[i + 1];
    if (introducer == '[' && i + 2 < bytes.size()) {
      if (bytes[i + 2] == '[' && i + 3 < bytes.size()) {
        // The Linux console sends F1..F5 as ESC [ [ A..E.
        const char letter = bytes[i + 3];
        if (letter >= 'A' && letter <= 'E') keys.push_back(Key::of(Key::kF1 + static_cast<char32_t>(letter - 'A')));
        i += 4;
        continue;
      }
      i += 2;
      if (const auto key = decode_csi(bytes, i)) keys.push_back(*key);
      continue;
    }
    if (introducer == 'O' && i + 2 < bytes.size()) {
      const char final_byte = bytes[i + 2];
      i += 3;
      if (final_byte == 'M') {
        keys.push_back(Key::of(Key::kEnter));
      } else if (const auto code = letter_key(final_byte)) {
        keys.push_back(Key::of(*code));
      }
      continue;
    }
    ++i;
    Key key = key_from_code_point(next_code_point(bytes, i));
    key.mods |= kModAlt;
    keys.push_back(key);
  }
  return keys;
}

std::string key_name(const Key& key) {
  std::string prefix;
  if (key.mods & kModCtrl) prefix += "Ctrl-";
  if (key.mods & kModAlt) prefix += "Alt-";
  if (key.mods & kModShift) prefix += "Shift-";
  for (const auto& named : kNamedKeys) {
    if (named.code == key.code) return prefix + std::string(named.name);
  }
  for (const auto& named : kEventNames) {
    if (named.code == key.code) return prefix + std::string(named.name);
  }
  if (key.is_character() && key.code >= 0x20 && !(key.code >= 0x7F && key.code < 0xA0)) {
    const char32_t shown = (key.mods & kModCtrl) ? to_upper_ascii(key.code) : key.code;
    return prefix + to_utf8(shown);
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string hex;
  for (char32_t v = key.code; v != 0 || hex.size() < 4; v >>= 4) hex.insert(hex.begin(), kHex[v & 0xF]);
  return prefix + "U+" + hex;
}

std::optional<Key> parse_key(std::string_view name) {
  uint8_t mods = kModNone;
  while (true) {
    const size_t dash = name.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 >= name.size()) break;
    const std::string_view word = name.substr(0, dash);
    if (equals_ignore_case(word, "Ctrl") || equals_ignore_case(word, "C")) {
      mods |= kModCtrl;
    } else if (equals_ignore_case(word, "Alt") || equals_ignore_case(word, "M") || equals_ignore_case(word, "Meta")) {
      mods |= kModAlt;
    } else if (equals_ignore_case(word, "Shift") || equals_ignore_case(word, "S")) {
      mods |= kModShift;
    } else {
      return std::nullopt;
    }
    name.remove_prefix(dash + 1);
  }
  if (name.empty()) return std::nullopt;
  for (const auto& named : kNamedKeys) {
    if (equals_ignore_case(named.name, name)) {
      // Shift-Space is not a key terminals distinguish from Space.
      if (named.code == U' ' && (mods & kModShift)) return std::nullopt;
      return Key::of(named.code, mods);
    }
  }
  size_t i = 0;
  char32_t cp = next_code_point(name, i);
  if (i != name.size() || cp == 0xFFFD || cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return std::nullopt;
  if (mods & kModShift) {
    if (!is_ascii_letter(cp)) return std::nullopt;
    cp = to_upper_ascii(cp);
    mods &= static_cast<uint8_t>(~kModShift);
  }
  if (mods & kModCtrl) {
    if (is_ascii_letter(cp)) {
      cp = to_lower_ascii(cp);
    } else if (kCtrlPunctuation.find(static_cast<char>(cp)) == std::string_view::npos || cp > 0x7F) {
      return std::nullopt;
    }
  }
  return Key::of(cp, mods);
}

}  // namespace vn::tui
