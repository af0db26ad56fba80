// SPDX-License-Identifier: Apache-2.0
// The accuracy-debugging flowchart as data (assets/flowchart/<lang>.json): steps, yes/no questions
// with the probe that answers each, and the ends. Triage walks it; the UI draws it.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace vn::flow {

enum class NodeKind : uint8_t {
  kStep,      ///< work to do, then `next`
  kQuestion,  ///< a yes/no question answered by its probe (or the user)
  kEnd,       ///< where triage stops, with an outcome
};

/// One answer of a question: what it says and where it leads.
struct Answer {
  std::string label;
  std::string next;
};

/// A node of the chart. Which fields are set depends on the kind: steps have `next`, questions
/// have `question`, `yes` and `no`, ends have `outcome` ("localized" or "no_bug").
struct FlowNode {
  std::string id;
  NodeKind kind = NodeKind::kStep;
  std::string title;
  std::string text;
  std::string probe;     ///< the probe that does the step or answers the question (core/flow)
  std::string question;
  Answer yes, no;
  std::string next;
  std::string outcome;
};

/// One probe a node can name (a row of core/flow/probes.inc).
struct ProbeInfo {
  std::string_view name;  ///< what a node's "probe" field says
  std::string_view help;  ///< what the probe checks, one line
};

/// Every probe, in the order of core/flow/probes.inc.
std::span<const ProbeInfo> probe_table();

/// The probe called `name`, or nullptr.
const ProbeInfo* find_probe(std::string_view name);

/// A whole chart in one language.
struct Flowchart {
  std::string lang;
  std::string title;
  std::string start;
  std::vector<FlowNode> nodes;

  const FlowNode* find(std::string_view id) const;
};

/// Parses a chart and checks it: known kinds with their fields, unique ids, links to existing
/// nodes, probes of probe_table(), every node reachable from `start`, and an end reachable from
/// every node. kIoError naming
/// the file and the node at fault.
Result<Flowchart> load_flowchart(const std::filesystem::path& path);

/// Checks that two translations have the same nodes, kinds, probes, links and outcomes.
/// kInvalidArgument naming the first difference.
Status same_structure(const Flowchart& a, const Flowchart& b);

/// The language to use: `requested` when given ("en" or "zh"), else "zh" when `lang_env` (the LANG
/// variable) starts with "zh", else "en". kInvalidArgument for another requested language.
Result<std::string> choose_language(std::string_view requested, std::string_view lang_env);

}  // namespace vn::flow
