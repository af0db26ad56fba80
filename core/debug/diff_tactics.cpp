// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/debug/diff_tactics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>


namespace vn::debug {
namespace {

bool is_tagged(const nlohmann::ordered_json& j, std::string_view cls) {
  if (!j.is_object()) return false;
  const auto tag = j.find("polygraphy_class");
  if (tag != j.end() && tag->is_string() && tag->get<std::string>() == cls) return true;
  // Files written before the type tag existed mark the class with this key.
  return j.contains(fmt::format("__polygraphy_encoded_{}", cls));
}

// Polygraphy's TensorInfo repr: TensorInfo(DataType.FLOAT, (1, 2), -1, 1).
std::string tensor_infos(const nlohmann::ordered_json& list) {
  std::string out;
  if (!list.is_array()) return "()";
  for (const nlohmann::ordered_json& t : list) {
    if (!t.is_object()) continue;
    std::string strides;
    size_t count = 0;
    if (t.contains("strides") && t["strides"].is_array()) {
      for (const nlohmann::ordered_json& s : t["strides"]) {
        strides += (strides.empty() ? "" : ", ") + s.dump();
        ++count;
      }
    }
    if (count == 1) strides += ",";
    out += fmt::format("TensorInfo({}, ({}), {}, {}),", t.value("dtype", std::string("?")), strides,
                       t.contains("vectorized_dim") ? t["vectorized_dim"].dump() : "-1",
                       t.contains("components_per_element") ? t["components_per_element"].dump() : "1");
  }
  return "(" + out + ")";
}

// A parsed TacticReplayData, or nullopt when `j` is not one.
std::optional<ReplayChoices> choices_from_json(const nlohmann::ordered_json& j) {
  if (!is_tagged(j, "TacticReplayData") || !j.contains("replay") || !j["replay"].is_object()) return std::nullopt;
  ReplayChoices choices;
  for (auto it = j["replay"].begin(); it != j["replay"].end(); ++it) {
    const nlohmann::ordered_json& a = it.value();
    if (!a.is_object() || !a.contains("implementation") || !a.contains("tactic")) return std::nullopt;
    TacticChoice c;
    c.algorithm = fmt::format("(Implementation: {}, Tactic: {}) | Inputs: {} | Outputs: {}", a["implementation"].dump(),
                              a["tactic"].dump(), tensor_infos(a.value("inputs", nlohmann::ordered_json::array())),
                              tensor_infos(a.value("outputs", nlohmann::ordered_json::array())));
    const auto v = a.find("vernier");
    if (v != a.end() && v->is_object() && v->contains("tactic") && (*v)["tactic"].is_string()) {
      c.label = (*v)["tactic"].get<std::string>();
      if (v->contains("precision") && (*v)["precision"].is_string()) {
        c.label += fmt::format(" ({})", (*v)["precision"].get<std::string>());
      }
    } else {
      c.label = c.algorithm;
    }
    choices.emplace(it.key(), std::move(c));
  }
  return choices;
}

std::optional<ReplayChoices> load_file(const std::filesystem::path& path) {
  Result<nlohmann::ordered_json> j = read_json_file(path, "tactic replay");
  if (!j.ok()) return std::nullopt;
  return choices_from_json(*j);
}

double log_choose(int64_t n, int64_t k) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

}  // namespace

Result<std::vector<ReplayChoices>> load_tactic_replays(const std::filesystem::path& path,
                                                       std::vector<std::filesystem::path>* skipped) {
  std::error_code ec;
  VN_RETURN_IF_NOT(std::filesystem::exists(path, ec), StatusCode::kNotFound, "{}: no such file or folder",
                   path.string());
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path, ec)) {
    for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    VN_RETURN_IF_NOT(!ec, StatusCode::kIoError, "{}: cannot list: {}", path.string(), ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<ReplayChoices> replays;
  for (const std::filesystem::path& file : files) {
    std::optional<ReplayChoices> choices = load_file(file);
    if (choices) {
      replays.push_back(std::move(*choices));
    } else if (skipped) {
      skipped->push_back(file);
    }
  }
  return replays;
}

double hypergeometric_upper_tail(int64_t k, int64_t n, int64_t marked, int64_t total) {
  const int64_t hi = std::min(n, marked);
  const int64_t lo = std::max<int64_t>(k, std::max<int64_t>(0, n - (total - marked)));
  double p = 0;
  for (int64_t x = lo; x <= hi; ++x) {
    p += std::exp(log_choose(marked, x) + log_choose(total - marked, n - x) - log_choose(total, n));
  }
  return std::min(p, 1.0);
}

TacticDiff diff_tactics(const std::vector<ReplayChoices>& good, const std::vector<ReplayChoices>& bad) {
  TacticDiff diff;
  diff.good_replays = static_cast<int64_t>(good.size());
  diff.bad_replays = static_cast<int64_t>(bad.size());
  // layer -> algorithm -> suspect
  std::map<std::string, std::map<std::string, TacticSuspect>> seen;
  for (const ReplayChoices& replay : bad) {
    for (const auto& [layer, choice] : replay) {
      TacticSuspect& s = seen[layer][choice.algorithm];
      s.layer = layer;
      s.choice = choice;
      ++s.bad;
    }
  }
  for (const ReplayChoices& replay : good) {
    for (const auto& [layer, choice] : replay) {
      auto l = seen.find(layer);
      if (l == seen.end()) continue;
      auto a = l->second.find(choice.algorithm);
      if (a != l->second.end()) ++a->second.good;
    }
  }
  auto frequency = [](int64_t count, int64_t of) { return of == 0 ? 0.0 : static_cast<double>(count) / of; };
  auto better = [](const TacticSuspect& a, const TacticSuspect& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.p_value != b.p_value) return a.p_value < b.p_value;
    if (a.layer != b.layer) return a.layer < b.layer;
    return a.choice.label < b.choice.label;
  };
  const int64_t total = diff.good_replays + diff.bad_replays;
  for (auto& [layer, algorithms] : seen) {
    LayerSuspects ls{layer, {}};
    for (auto& [algorithm, s] : algorithms) {
      s.score = frequency(s.bad, diff.bad_replays) - frequency(s.good, diff.good_replays);
      s.p_value = hypergeometric_upper_tail(s.bad, diff.bad_replays, s.bad + s.good, total);
      if (s.score > 0) ls.suspects.push_back(s);
    }
    if (ls.suspects.empty()) continue;
    std::sort(ls.suspects.begin(), ls.suspects.end(), better);
    diff.layers.push_back(std::move(ls));
  }
  std::sort(diff.layers.begin(), diff.layers.end(),
            [&](const LayerSuspects& a, const LayerSuspects& b) { return better(a.suspects[0], b.suspects[0]); });
  return diff;
}

}  // namespace vn::debug
