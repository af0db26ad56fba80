// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tui/keys.h"
#include "tui/style.h"

namespace vn::tui {

/// Which key map resolves a key. The same key can mean different actions in different contexts
/// ('g' is "home" in kNormal and "good" in kPrompt).
enum class KeyContext : uint8_t {
  /// Browsing a screen.
  kNormal,
  /// A modal question is open; keys not bound here fall back to kNormal.
  kPrompt,
  /// Typing into a line (the : command line or a filter); printable keys insert text and keys
  /// not bound here do nothing.
  kEdit,
};

/// Every named action of the UI, generated from actions.inc. kNone means "no action".
enum class Action : uint16_t {
  kNone,
#define VN_ACTION(id, name, context, group, keys, help) id,
#include "tui/actions.inc"
#undef VN_ACTION
};

/// Flags a View or widget returns from handle(); combine with |.
enum HandlerResult : unsigned {
  /// The action means nothing here; the App applies its own meaning (if any).
  kIgnored = 0,
  /// The action was consumed.
  kHandled = 1,
  /// The screen must be drawn again.
  kRedraw = 2,
  /// Leave the application.
  kQuit = 4,
  /// Show the view named by View::switch_target().
  kSwitchView = 8,
};

/// One row of actions.inc.
struct ActionInfo {
  Action action;
  std::string_view name;
  KeyContext context;
  std::string_view group;
  std::string_view help;
  /// Space-separated key names as parse_key() reads them.
  std::string_view default_keys;
};

/// All rows of actions.inc in table order (kNone is not a row).
std::span<const ActionInfo> action_table();

/// The row of `name`, or nullptr when no action has that name.
const ActionInfo* find_action(std::string_view name);

/// The row of `action`, or nullptr for Action::kNone.
const ActionInfo* action_info(Action action);

/// The name of `action` ("none" for Action::kNone).
std::string_view action_name(Action action);

/// 0 for screen_1 ... 8 for screen_9; nullopt for every other action.
std::optional<int> screen_index(Action action);

/// The outcome of a binding change: kOk, or why it was refused, with a message for the user.
struct BindStatus {
  /// kOk, or the reason a change was refused.
  enum class Code : uint8_t { kOk, kUnknownAction, kInvalidKey, kReservedKey, kNotBound };
  Code code = Code::kOk;
  /// For kOk, what changed (e.g. that the key was taken from another action); otherwise the reason.
  std::string message;

  /// True when the change was made.
  bool ok() const { return code == Code::kOk; }
};

/// The key → action maps of every KeyContext, starting from the defaults in actions.inc and
/// changed at run time by action *name* (user configuration, `:bind`).
class Bindings {
 public:
  /// The default bindings of actions.inc.
  Bindings();

  /// The action bound to `key` in `context`; kPrompt falls back to kNormal. kNone when unbound.
  Action lookup(const Key& key, KeyContext context) const;

  /// Binds `key_name` (parse_key syntax) to the action called `action_name`, in that action's
  /// context, keeping its other keys. A key bound to another action of the same context moves
  /// (the message says from which). Refused: unknown action (kUnknownAction), unparsable key
  /// (kInvalidKey), a printable key without Ctrl/Alt in the kEdit context, where it must insert
  /// text (kReservedKey).
  BindStatus bind(std::string_view action_name, std::string_view key_name);

  /// Removes `key_name` from the action called `action_name`. kNotBound when it was not bound to it.
  BindStatus unbind(std::string_view action_name, std::string_view key_name);

  /// The keys of `action` in the order they were bound (defaults first).
  std::vector<Key> keys_for(Action action) const;

  /// The key names of `action` joined by ", " ("k, Up"), or "(unbound)".
  std::string keys_text(Action action) const;

 private:
  struct Entry {
    Key key;
    KeyContext context;
    Action action;
  };
  std::vector<Entry> entries_;
};

/// One line of the generated help screen.
struct HelpLine {
  std::string text;
  ColorRole role = ColorRole::kDefault;
};

/// The help line of one action: its keys, its name (what `:bind` takes) and its help text in the
/// UI's language, in aligned columns.
HelpLine action_help_line(const Bindings& bindings, Action action);

/// The help screen generated from actions.inc with the current bindings: one section per group
/// (a kHeader line with the group name), one line per action (action_help_line), and a blank line
/// between sections.
std::vector<HelpLine> help_lines(const Bindings& bindings);

/// help_lines() as plain text, one line per entry, each ending in '\n'.
std::string help_text(const Bindings& bindings);

}  // namespace vn::tui
