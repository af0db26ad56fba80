// SPDX-License-Identifier: Apache-2.0
#include "tui/actions.h"

#include <algorithm>

#include "tui/i18n.h"
#include "tui/text.h"

namespace vn::tui {
namespace {

constexpr ActionInfo kTable[] = {
#define VN_ACTION(id, name, context, group, keys, help) {Action::id, name, KeyContext::context, group, help, keys},
#include "tui/actions.inc"
#undef VN_ACTION
};

constexpr size_t kActionCount = std::size(kTable);
static_assert(static_cast<size_t>(Action::kScreen9) - static_cast<size_t>(Action::kScreen1) == 8,
              "screen_1..screen_9 must be consecutive rows of actions.inc");

// Column widths of the help screen: keys, then the action name.
constexpr int kHelpKeysWidth = 16;
constexpr int kHelpNameWidth = 16;

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

}  // namespace

std::span<const ActionInfo> action_table() { return kTable; }

const ActionInfo* find_action(std::string_view name) {
  for (const ActionInfo& info : kTable) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const ActionInfo* action_info(Action action) {
  const auto index = static_cast<size_t>(action);
  if (index == 0 || index > kActionCount) return nullptr;
  return &kTable[index - 1];
}

std::string_view action_name(Action action) {
  const ActionInfo* info = action_info(action);
  return info ? info->name : std::string_view("none");
}

std::optional<int> screen_index(Action action) {
  const int offset = static_cast<int>(action) - static_cast<int>(Action::kScreen1);
  if (offset < 0 || offset > 8) return std::nullopt;
  return offset;
}

Bindings::Bindings() {
  for (const ActionInfo& info : kTable) {
    for (std::string_view name : split_words(info.default_keys)) {
      // actions.inc is checked by the tests: every default key name parses.
      if (const auto key = parse_key(name)) entries_.push_back({*key, info.context, info.action});
    }
  }
}

Action Bindings::lookup(const Key& key, KeyContext context) const {
  for (const Entry& e : entries_) {
    if (e.context == context && e.key == key) return e.action;
  }
  if (context == KeyContext::kPrompt) return lookup(key, KeyContext::kNormal);
  return Action::kNone;
}

BindStatus Bindings::bind(std::string_view name, std::string_view key_spec) {
  const ActionInfo* info = find_action(name);
  if (info == nullptr) return {BindStatus::Code::kUnknownAction, "unknown action '" + std::string(name) + "'"};
  const auto key = parse_key(key_spec);
  if (!key) return {BindStatus::Code::kInvalidKey, "invalid key '" + std::string(key_spec) + "'"};
  if (info->context == KeyContext::kEdit && key->is_printable()) {
    return {BindStatus::Code::kReservedKey,
            "key '" + key_name(*key) + "' types text in the line editor and cannot be bound to " +
                std::string(info->name)};
  }
  std::string message;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->context == info->context && it->key == *key) {
      if (it->action == info->action) return {BindStatus::Code::kOk, "already bound"};
      message = key_name(*key) + " moved from " + std::string(action_name(it->action));
      entries_.erase(it);
      break;
    }
  }
  entries_.push_back({*key, info->context, info->action});
  return {BindStatus::Code::kOk, std::move(message)};
}

BindStatus Bindings::unbind(std::string_view name, std::string_view key_spec) {
  const ActionInfo* info = find_action(name);
  if (info == nullptr) return {BindStatus::Code::kUnknownAction, "unknown action '" + std::string(name) + "'"};
  const auto key = parse_key(key_spec);
  if (!key) return {BindStatus::Code::kInvalidKey, "invalid key '" + std::string(key_spec) + "'"};
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& e) { return e.action == info->action && e.key == *key; });
  if (it == entries_.end()) {
    return {BindStatus::Code::kNotBound, key_name(*key) + " is not bound to " + std::string(info->name)};
  }
  entries_.erase(it);
  return {};
}

std::vector<Key> Bindings::keys_for(Action action) const {
  std::vector<Key> keys;
  for (const Entry& e : entries_) {
    if (e.action == action) keys.push_back(e.key);
  }
  return keys;
}

std::string Bindings::keys_text(Action action) const {
  std::string text;
  for (const Key& key : keys_for(action)) {
    if (!text.empty()) text += ", ";
    text += key_name(key);
  }
  return text.empty() ? "(unbound)" : text;
}

HelpLine action_help_line(const Bindings& bindings, Action action) {
  const ActionInfo* info = action_info(action);
  if (info == nullptr) return {};
  const std::string keys = bindings.keys_text(action);
  const std::string rest = fit_to_width(info->name, kHelpNameWidth - 1) + " " + std::string(tr(info->help));
  // Keys longer than their column push the rest right rather than being cut.
  if (display_width(keys) >= kHelpKeysWidth) return {"  " + keys + " " + rest, ColorRole::kDefault};
  return {"  " + fit_to_width(keys, kHelpKeysWidth - 1) + " " + rest, ColorRole::kDefault};
}

std::vector<HelpLine> help_lines(const Bindings& bindings) {
  std::vector<HelpLine> lines;
  std::vector<std::string_view> groups;
  for (const ActionInfo& info : kTable) {
    if (std::find(groups.begin(), groups.end(), info.group) == groups.end()) groups.push_back(info.group);
  }
  for (std::string_view group : groups) {
    if (!lines.empty()) lines.push_back({});
    lines.push_back({std::string(tr(group)), ColorRole::kHeader});
    for (const ActionInfo& info : kTable) {
      if (info.group == group) lines.push_back(action_help_line(bindings, info.action));
    }
  }
  return lines;
}

std::string help_text(const Bindings& bindings) {
  std::string text;
  for (const HelpLine& line : help_lines(bindings)) {
    text += line.text;
    text += '\n';
  }
  return text;
}

}  // namespace vn::tui
