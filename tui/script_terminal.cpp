// SPDX-License-Identifier: Apache-2.0
#include "tui/script_terminal.h"

#include <vector>

#include "tui/text.h"

namespace vn::tui {

ScriptTerminal::ScriptTerminal(int width, int height, const Glyphs& glyphs)
    : size_{width, height}, glyphs_(&glyphs), screen_(width, height) {
  screen_.set_glyphs(glyphs);
}

void ScriptTerminal::push_key(const Key& key) { script_.push_back({key, {}}); }

bool ScriptTerminal::push_keys(std::string_view names) {
  std::vector<Key> keys;
  size_t i = 0;
  while (i < names.size()) {
    while (i < names.size() && names[i] == ' ') ++i;
    const size_t start = i;
    while (i < names.size() && names[i] != ' ') ++i;
    if (i == start) break;
    const auto key = parse_key(names.substr(start, i - start));
    if (!key) return false;
    keys.push_back(*key);
  }
  for (const Key& key : keys) push_key(key);
  return true;
}

void ScriptTerminal::push_text(std::string_view utf8) {
  for (char32_t cp : to_u32(utf8)) push_key(key_from_code_point(cp));
}

void ScriptTerminal::push_bytes(std::string_view bytes) {
  for (const Key& key : decode_keys(bytes)) push_key(key);
}

void ScriptTerminal::push_resize(int width, int height) {
  script_.push_back({Key::of(Key::kResize), {width, height}});
}

void ScriptTerminal::push_interrupt() { push_key(Key::of(Key::kInterrupt)); }

std::optional<Key> ScriptTerminal::read_key(std::chrono::milliseconds timeout) {
  last_timeout_ = timeout;
  if (script_.empty()) return std::nullopt;
  const Event event = script_.front();
  script_.pop_front();
  if (event.key.code == Key::kResize) size_ = event.size;
  return event.key;
}

void ScriptTerminal::present(const Canvas& canvas) {
  screen_ = canvas;
  ++presents_;
}

}  // namespace vn::tui
