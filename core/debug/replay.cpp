// SPDX-License-Identifier: Apache-2.0
#include "core/debug/replay.h"

#include <fmt/format.h>

#include "core/common/json_file.h"
#include "core/ir/mapped_file.h"

namespace vn::debug {

std::string DebugReplay::key(int64_t iteration, std::string_view suffix) {
  return suffix.empty() ? fmt::format("_N{}", iteration) : fmt::format("_N{}_{}", iteration, suffix);
}

Result<DebugReplay> DebugReplay::load(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json json, read_json_file(path, "debug replay"));
  VN_RETURN_IF_NOT(json.is_object(), StatusCode::kIoError, "{}: not a debug replay (expected a JSON object)",
                   path.string());
  DebugReplay replay;
  for (const auto& item : json.items()) {
    // Named references rather than a structured binding: clang 14 cannot capture bindings in lambdas.
    const std::string& key = item.key();
    const nlohmann::ordered_json& value = item.value();
    auto bad = [&](std::string_view what) {
      return make_error(StatusCode::kIoError, "{}: debug replay entry '{}': {}", path.string(), key, what);
    };
    if (!value.is_object()) return bad("not an object");
    ReplayEntry entry;
    const auto success = value.find("success");
    if (success == value.end() || !success->is_boolean()) return bad("'success' missing or not a boolean");
    entry.verdict = success->get<bool>() ? Verdict::kGood : Verdict::kBad;
    if (const auto verdict = value.find("verdict"); verdict != value.end()) {
      if (!verdict->is_string()) return bad("'verdict' is not a string");
      const std::string name = verdict->get<std::string>();
      const std::optional<Verdict> parsed = verdict_from_name(name);
      if (!parsed) return bad(fmt::format("unknown verdict '{}'", name));
      entry.verdict = *parsed;
    }
    if (const auto state = value.find("state"); state != value.end()) {
      if (!state->is_object()) return bad("'state' is not an object");
      entry.state = *state;
    }
    if (const auto info = value.find("iteration_info"); info != value.end() && info->is_object()) {
      const auto it = info->find("iteration");
      if (it != info->end() && it->is_number_integer()) entry.iteration = it->get<int64_t>();
    }
    if (const auto reason = value.find("reason"); reason != value.end() && reason->is_string()) {
      entry.reason = reason->get<std::string>();
    }
    replay.entries_[key] = std::move(entry);
  }
  return replay;
}

const ReplayEntry* DebugReplay::find(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void DebugReplay::record(const std::string& key, ReplayEntry entry) { entries_[key] = std::move(entry); }

nlohmann::json DebugReplay::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [key, entry] : entries_) {
    json[key] = {
        {"state", entry.state},
        {"iteration_info", {{"iteration", entry.iteration}}},
        {"success", entry.verdict != Verdict::kBad},
        {"polygraphy_class", "IterationContext"},
        {"verdict", verdict_name(entry.verdict)},
        {"reason", entry.reason},
    };
  }
  return json;
}

Status DebugReplay::save(const std::filesystem::path& path) const {
  VN_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::create(path));
  VN_RETURN_IF_ERROR(writer.write(to_json().dump(4) + "\n"));
  return writer.commit();
}

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (const Verdict v : {Verdict::kGood, Verdict::kBad, Verdict::kUnresolved}) {
    if (verdict_name(v) == name) return v;
  }
  return std::nullopt;
}

std::filesystem::path skip_current_path(const std::filesystem::path& replay_path) {
  std::filesystem::path result = replay_path;
  result.replace_filename(replay_path.stem().string() + "_skip_current" + replay_path.extension().string());
  return result;
}

}  // namespace vn::debug
