// SPDX-License-Identifier: Apache-2.0
#include "core/flow/flowchart.h"

#include <gtest/gtest.h>

#include <fstream>
#include <algorithm>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/util/process.h"

namespace vn::flow {
namespace {

const std::filesystem::path kCharts = std::filesystem::path(VN_SOURCE_DIR) / "assets" / "flowchart";

Flowchart load(const std::string& lang) {
  auto chart = load_flowchart(kCharts / (lang + ".json"));
  EXPECT_TRUE(chart.ok()) << chart.status().to_string();
  return chart.ok() ? std::move(chart).value() : Flowchart{};
}

TEST(Flowchart, BothLanguagesLoadWithTheSameStructure) {
  const Flowchart en = load("en"), zh = load("zh");
  EXPECT_EQ(en.lang, "en");
  EXPECT_EQ(zh.lang, "zh");
  EXPECT_TRUE(same_structure(en, zh).ok()) << same_structure(en, zh).to_string();
  // The texts are translations, not copies.
  EXPECT_NE(en.find("layerwise")->question, zh.find("layerwise")->question);
}

TEST(Flowchart, HoldsEveryNodeOfTheSeedChart) {
  const Flowchart en = load("en");
  EXPECT_EQ(en.start, "sanitize");
  const FlowNode* real = en.find("real_data");
  ASSERT_NE(real, nullptr);
  EXPECT_EQ(real->yes.next, "input_sensitive");
  EXPECT_EQ(real->no.next, "intermittent");
  EXPECT_EQ(en.find("intermittent")->yes.next, "debug_intermittent");
  EXPECT_EQ(en.find("intermittent")->no.next, "layerwise");
  EXPECT_EQ(en.find("debug_intermittent")->yes.next, "minimal");
  EXPECT_EQ(en.find("debug_intermittent")->no.next, "layerwise");
  EXPECT_EQ(en.find("layerwise")->yes.next, "extract");
  EXPECT_EQ(en.find("layerwise")->no.next, "reduce");
  EXPECT_EQ(en.find("extract")->yes.next, "minimal");
  EXPECT_EQ(en.find("extract")->no.next, "reduce");
  EXPECT_EQ(en.find("reduce")->yes.next, "minimal");
  EXPECT_EQ(en.find("reduce")->no.next, "double_check");
  EXPECT_EQ(en.find("double_check")->next, "reduce");
  EXPECT_EQ(en.find("minimal")->outcome, "localized");
  EXPECT_EQ(en.find("input_sensitive")->outcome, "no_bug");
}

TEST(Flowchart, AnswersWalkToAnEnd) {
  const Flowchart en = load("en");
  // Not input-sensitive, not intermittent, layer-wise hides it, the reduced model fails.
  std::vector<bool> answers = {false, false, false, true};
  std::vector<std::string> path;
  const FlowNode* node = en.find(en.start);
  size_t next_answer = 0;
  while (node->kind != NodeKind::kEnd) {
    path.push_back(node->id);
    if (node->kind == NodeKind::kStep) {
      node = en.find(node->next);
    } else {
      ASSERT_LT(next_answer, answers.size());
      node = en.find(answers[next_answer++] ? node->yes.next : node->no.next);
    }
  }
  path.push_back(node->id);
  EXPECT_EQ(path, (std::vector<std::string>{"sanitize", "real_data", "intermittent", "layerwise", "reduce", "minimal"}));
}

TEST(Flowchart, MalformedChartsNameTheNode) {
  std::ifstream in(kCharts / "en.json");
  const nlohmann::json good = nlohmann::json::parse(in);
  test::TempDir dir;
  auto expect_error = [&](const std::string& what, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json chart = good;
    edit(chart);
    test::write_file(dir / "chart.json", chart.dump());
    auto loaded = load_flowchart(dir / "chart.json");
    ASSERT_FALSE(loaded.ok()) << what;
    EXPECT_EQ(loaded.status().code(), StatusCode::kIoError);
    EXPECT_NE(loaded.status().message().find(what), std::string::npos) << loaded.status().message();
  };
  auto node = [](nlohmann::json& chart, const std::string& id) -> nlohmann::json& {
    for (auto& n : chart["nodes"]) {
      if (n["id"] == id) return n;
    }
    ADD_FAILURE() << "the chart has no node " << id;
    return chart["nodes"][0];
  };
  expect_error("'nowhere', which is not a node", [&](auto& c) { node(c, "reduce")["yes"]["goto"] = "nowhere"; });
  expect_error("'extract': the id is used twice", [&](auto& c) { node(c, "layerwise")["id"] = "extract"; });
  expect_error("'extract' cannot be reached", [&](auto& c) { node(c, "layerwise")["yes"]["goto"] = "reduce"; });
  expect_error("can never reach an end", [&](auto& c) { node(c, "reduce")["yes"]["goto"] = "double_check"; });
  expect_error("'text' missing", [&](auto& c) { node(c, "minimal").erase("text"); });
  expect_error("kind must be", [&](auto& c) { node(c, "minimal")["kind"] = "maybe"; });
  expect_error("outcome", [&](auto& c) { node(c, "minimal")["outcome"] = "done"; });
  expect_error("not a Vernier flowchart", [&](auto& c) { c["version"] = 2; });
  expect_error("start 'x'", [&](auto& c) { c["start"] = "x"; });
  // An unknown probe is refused at load, not when the walk reaches it.
  expect_error("node 'reduce': unknown probe 'shrink' (known: sanitize, real_data,",
               [&](auto& c) { node(c, "reduce")["probe"] = "shrink"; });
}

// The probe list (core/flow/probes.inc) enumerated: every probe has its help line, a node of the
// chart that names it, and a scenario of the zoo (assets/scenarios, run by ctest -L scenarios)
// whose expected path walks through that node. A probe without them fails here.
TEST(ProbeList, EveryProbeHasItsHelpItsNodeAndAScenarioWalkingThroughIt) {
  const Flowchart en = load("en");
  std::set<std::string> walked;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(VN_SOURCE_DIR) / "assets" / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const nlohmann::json scenario = nlohmann::json::parse(in);
    for (const auto& step : scenario["expect"]["path"]) {
      const std::string text = step.get<std::string>();
      walked.insert(text.substr(0, text.find(':')));
    }
  }
  std::set<std::string_view> names;
  for (const ProbeInfo& probe : probe_table()) {
    EXPECT_TRUE(names.insert(probe.name).second) << "probe listed twice: " << probe.name;
    EXPECT_FALSE(probe.help.empty()) << probe.name << " has no help line";
    EXPECT_EQ(find_probe(probe.name), &probe);
    std::vector<std::string> nodes;
    for (const FlowNode& node : en.nodes) {
      if (node.probe == probe.name) nodes.push_back(node.id);
    }
    EXPECT_FALSE(nodes.empty()) << "no node of the chart names the probe " << probe.name;
    EXPECT_TRUE(std::any_of(nodes.begin(), nodes.end(), [&](const std::string& id) { return walked.count(id) > 0; }))
        << "no scenario walks through the probe " << probe.name;
  }
  EXPECT_EQ(find_probe("shrink"), nullptr);
}

TEST(Flowchart, TranslationsThatDivergeAreCaught) {
  Flowchart en = load("en"), zh = load("zh");
  zh.nodes[1].yes.next = "layerwise";
  EXPECT_FALSE(same_structure(en, zh).ok());
}

TEST(Flowchart, LanguageFromTheFlagElseLang) {
  EXPECT_EQ(*choose_language("zh", "en_US.UTF-8"), "zh");
  EXPECT_EQ(*choose_language("", "zh_CN.UTF-8"), "zh");
  EXPECT_EQ(*choose_language("", "C.UTF-8"), "en");
  EXPECT_EQ(*choose_language("", ""), "en");
  EXPECT_FALSE(choose_language("fr", "").ok());
}

}  // namespace
}  // namespace vn::flow
