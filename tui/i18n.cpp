// SPDX-License-Identifier: Apache-2.0
#include "tui/i18n.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <unordered_map>

namespace vn::tui {
namespace {

constexpr Translation kTable[] = {
#define VN_TR(english, chinese) {english, chinese},
#include "tui/i18n_zh.inc"
#undef VN_TR
};

std::atomic<Language> g_language{Language::kEnglish};

const std::unordered_map<std::string_view, std::string_view>& chinese() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, std::string_view>();
    for (const Translation& t : kTable) m->emplace(t.english, t.chinese);
    return m;
  }();
  return *map;
}

std::mutex g_missing_mutex;
std::set<std::string, std::less<>>& missing() {
  static auto* set = new std::set<std::string, std::less<>>();
  return *set;
}

}  // namespace

void set_language(Language language) { g_language.store(language, std::memory_order_relaxed); }

Language language() { return g_language.load(std::memory_order_relaxed); }

std::optional<Language> language_from_code(std::string_view code) {
  if (code == "en") return Language::kEnglish;
  if (code == "zh") return Language::kChinese;
  return std::nullopt;
}

std::span<const Translation> translation_table() { return kTable; }

std::string_view tr(std::string_view english) {
  if (language() == Language::kEnglish || english.empty()) return english;
  const auto& map = chinese();
  if (const auto it = map.find(english); it != map.end()) return it->second;
  std::lock_guard<std::mutex> lock(g_missing_mutex);
  if (missing().find(english) == missing().end()) missing().emplace(english);
  return english;
}

std::string_view tr_data(std::string_view english) {
  if (language() == Language::kEnglish) return english;
  const auto& map = chinese();
  const auto it = map.find(english);
  return it != map.end() ? it->second : english;
}

std::vector<std::string> missing_translations() {
  std::lock_guard<std::mutex> lock(g_missing_mutex);
  return {missing().begin(), missing().end()};
}

void clear_missing_translations() {
  std::lock_guard<std::mutex> lock(g_missing_mutex);
  missing().clear();
}

}  // namespace vn::tui
