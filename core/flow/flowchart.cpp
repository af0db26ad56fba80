// SPDX-License-Identifier: Apache-2.0
#include "core/common/json_file.h"
#include "core/flow/flowchart.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace vn::flow {

namespace {

constexpr ProbeInfo kProbeTable[] = {
#define VN_PROBE(name, help) {#name, help},
#include "core/flow/probes.inc"
#undef VN_PROBE
};

}  // namespace

std::span<const ProbeInfo> probe_table() { return kProbeTable; }

const ProbeInfo* find_probe(std::string_view name) {
  for (const ProbeInfo& probe : kProbeTable) {
    if (probe.name == name) return &probe;
  }
  return nullptr;
}

const FlowNode* Flowchart::find(std::string_view id) const {
  for (const FlowNode& node : nodes) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

namespace {

// The links out of a node, in order.
std::vector<std::string> links(const FlowNode& node) {
  switch (node.kind) {
    case NodeKind::kStep:
      return {node.next};
    case NodeKind::kQuestion:
      return {node.yes.next, node.no.next};
    case NodeKind::kEnd:
      return {};
  }
  return {};
}

}  // namespace

Result<Flowchart> load_flowchart(const std::filesystem::path& path) {
  VN_ASSIGN_OR_RETURN(const nlohmann::ordered_json json, read_json_file(path, "flowchart"));
  auto bad = [&](std::string_view what) {
    return make_error(StatusCode::kIoError, "{}: {}", path.string(), what);
  };
  if (!json.is_object() || !json.contains("format") || json["format"] != "vernier-flowchart" ||
      !json.contains("version") || json["version"] != 1) {
    return bad("not a Vernier flowchart (version 1)");
  }
  auto string_field = [](const nlohmann::ordered_json& object, const char* key) -> std::optional<std::string> {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    return it->get<std::string>();
  };
  Flowchart chart;
  for (const char* key : {"lang", "title", "start"}) {
    if (!string_field(json, key)) return bad(fmt::format("'{}' missing or empty", key));
  }
  chart.lang = *string_field(json, "lang");
  chart.title = *string_field(json, "title");
  chart.start = *string_field(json, "start");
  if (!json.contains("nodes") || !json["nodes"].is_array()) return bad("'nodes' is not a list");

  std::set<std::string> ids;
  for (const nlohmann::ordered_json& item : json["nodes"]) {
    if (!item.is_object()) return bad("a node is not an object");
    FlowNode node;
    const std::optional<std::string> id = string_field(item, "id");
    if (!id) return bad("a node has no id");
    node.id = *id;
    auto node_bad = [&](std::string_view what) { return bad(fmt::format("node '{}': {}", node.id, what)); };
    if (!ids.insert(node.id).second) return node_bad("the id is used twice");
    const std::optional<std::string> kind = string_field(item, "kind");
    if (kind == "step") {
      node.kind = NodeKind::kStep;
    } else if (kind == "question") {
      node.kind = NodeKind::kQuestion;
    } else if (kind == "end") {
      node.kind = NodeKind::kEnd;
    } else {
      return node_bad("kind must be step, question or end");
    }
    for (const char* key : {"title", "text"}) {
      if (!string_field(item, key)) return node_bad(fmt::format("'{}' missing or empty", key));
    }
    node.title = *string_field(item, "title");
    node.text = *string_field(item, "text");
    node.probe = string_field(item, "probe").value_or("");
    if (node.kind != NodeKind::kEnd && node.probe.empty()) return node_bad("'probe' missing");
    if (!node.probe.empty() && !find_probe(node.probe)) {
      std::string known;
      for (const ProbeInfo& probe : kProbeTable) known += fmt::format("{}{}", known.empty() ? "" : ", ", probe.name);
      return node_bad(fmt::format("unknown probe '{}' (known: {})", node.probe, known));
    }
    if (node.kind == NodeKind::kStep) {
      if (!string_field(item, "next")) return node_bad("a step needs 'next'");
      node.next = *string_field(item, "next");
    } else if (node.kind == NodeKind::kQuestion) {
      if (!string_field(item, "question")) return node_bad("a question needs 'question'");
      node.question = *string_field(item, "question");
      for (const char* key : {"yes", "no"}) {
        const auto it = item.find(key);
        if (it == item.end() || !it->is_object() || !string_field(*it, "label") || !string_field(*it, "goto")) {
          return node_bad(fmt::format("'{}' needs a label and a goto", key));
        }
        Answer& answer = std::string_view(key) == "yes" ? node.yes : node.no;
        answer.label = *string_field(*it, "label");
        answer.next = *string_field(*it, "goto");
      }
    } else {
      const std::optional<std::string> outcome = string_field(item, "outcome");
      if (outcome != "localized" && outcome != "no_bug") return node_bad("an end needs outcome localized or no_bug");
      node.outcome = *outcome;
    }
    chart.nodes.push_back(std::move(node));
  }

  if (!chart.find(chart.start)) return bad(fmt::format("start '{}' is not a node", chart.start));
  for (const FlowNode& node : chart.nodes) {
    for (const std::string& target : links(node)) {
      if (!chart.find(target)) return bad(fmt::format("node '{}' leads to '{}', which is not a node", node.id, target));
    }
  }
  // Every node reachable from the start...
  std::set<std::string> reached{chart.start};
  std::vector<std::string> stack{chart.start};
  while (!stack.empty()) {
    const FlowNode* node = chart.find(stack.back());
    stack.pop_back();
    for (const std::string& target : links(*node)) {
      if (reached.insert(target).second) stack.push_back(target);
    }
  }
  for (const FlowNode& node : chart.nodes) {
    if (!reached.count(node.id)) return bad(fmt::format("node '{}' cannot be reached from the start", node.id));
  }
  // ...and an end reachable from every node, so no walk is trapped in a loop.
  std::set<std::string> ending;
  for (const FlowNode& node : chart.nodes) {
    if (node.kind == NodeKind::kEnd) ending.insert(node.id);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const FlowNode& node : chart.nodes) {
      if (ending.count(node.id)) continue;
      for (const std::string& target : links(node)) {
        if (ending.count(target)) {
          ending.insert(node.id);
          grew = true;
          break;
        }
      }
    }
  }
  for (const FlowNode& node : chart.nodes) {
    if (!ending.count(node.id)) return bad(fmt::format("node '{}' can never reach an end", node.id));
  }
  return chart;
}

Status same_structure(const Flowchart& a, const Flowchart& b) {
  auto differ = [&](std::string_view what) {
    return make_error(StatusCode::kInvalidArgument, "flowcharts '{}' and '{}' differ: {}", a.lang, b.lang, what);
  };
  if (a.start != b.start) return differ("start");
  if (a.nodes.size() != b.nodes.size()) return differ("number of nodes");
  for (const FlowNode& x : a.nodes) {
    const FlowNode* y = b.find(x.id);
    if (!y) return differ(fmt::format("node '{}' is missing from '{}'", x.id, b.lang));
    if (x.kind != y->kind || x.probe != y->probe || links(x) != links(*y) || x.outcome != y->outcome) {
      return differ(fmt::format("node '{}'", x.id));
    }
  }
  return Status::OK();
}

Result<std::string> choose_language(std::string_view requested, std::string_view lang_env) {
  if (!requested.empty()) {
    VN_RETURN_IF_NOT(requested == "en" || requested == "zh", StatusCode::kInvalidArgument,
                     "--lang '{}': expected en or zh", requested);
    return std::string(requested);
  }
  return std::string(lang_env.starts_with("zh") ? "zh" : "en");
}

}  // namespace vn::flow
