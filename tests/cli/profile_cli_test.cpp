// SPDX-License-Identifier: Apache-2.0
// `vernier run --profile` end to end on a real model: the op-type and layer tables, the
// --report-json profiles, and the combinations it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/ir/onnx_import.h"
#include "tests/util/cli_expect.h"
#include "tests/util/process.h"

namespace vn {
namespace {

using test::run_vernier;
using test::TempDir;
using ::testing::HasSubstr;

const std::string kBert = std::string(VN_SOURCE_DIR) + "/tests/models/exported/bert_opset18";
const std::string kDemo = std::string(VN_SOURCE_DIR) + "/assets/models/demo.onnx";

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Every profile of the report is self-consistent: its keys, shares of at most the whole run, op
// counts that add up to the layers, and the layer tables sorted longest first.
void expect_consistent(const nlohmann::json& p) {
  for (const char* key : {"runner", "iterations", "run_ms", "layers_ms", "ops", "layers"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  double layer_share = 0, op_share = 0;
  size_t op_count = 0;
  for (const auto& op : p["ops"]) {
    for (const char* key : {"op", "count", "total_ms", "mean_ms", "share"}) EXPECT_TRUE(op.contains(key)) << key;
    op_share += op["share"].get<double>();
    op_count += op["count"].get<size_t>();
  }
  double previous = 1e300;
  for (const auto& l : p["layers"]) {
    for (const char* key : {"name", "op", "node", "ms", "share"}) EXPECT_TRUE(l.contains(key)) << key;
    layer_share += l["share"].get<double>();
    EXPECT_LE(l["ms"].get<double>(), previous);
    previous = l["ms"].get<double>();
  }
  EXPECT_EQ(op_count, p["layers"].size());
  EXPECT_LE(layer_share, 1.0 + 1e-9);
  EXPECT_NEAR(op_share, layer_share, 1e-9);
  EXPECT_LE(p["layers_ms"].get<double>(), p["run_ms"].get<double>());
}

TEST(CliProfile, TimesEveryNodeOfTheReferenceAndEveryLayerOfTheEngine) {
  TempDir tmp;
  const auto report = tmp.path() / "report.json";
  auto r = run_vernier({"run", kBert + "/model.onnx", "--ref", "--engine", "--load-inputs", kBert + "/input.npz",
                        "--load-inputs", kBert + "/input.npz", "--profile", "--profile-top", "3", "--report-json",
                        report.string(), "--atol", "1e-3", "--rtol", "1e-3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Result<Model> model = load_model(kBert + "/model.onnx");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  std::set<std::string> model_ops;
  for (const Node& n : model->graph.nodes) model_ops.insert(n.op_type);

  const nlohmann::json j = read_json(report);
  ASSERT_EQ(j["profiles"].size(), 2u) << j.dump(1);
  const nlohmann::json& ref = j["profiles"][0];
  const nlohmann::json& engine = j["profiles"][1];
  EXPECT_EQ(ref["iterations"], 2);
  // The reference runs every node once, one layer per node, but for the links of its elementwise
  // chains (the GELUs' Div, Erf, Add and Mul), counted in the chain's last node.
  const size_t ref_layers = ref["layers"].size();
  EXPECT_LT(ref_layers, model->graph.nodes.size());
  std::set<std::string> ref_ops;
  for (const auto& op : ref["ops"]) ref_ops.insert(op["op"].get<std::string>());
  const std::set<std::string> chain_ops = {"Add", "Sub", "Mul", "Div", "Erf", "Sigmoid"};
  for (const std::string& op : model_ops) {
    if (!ref_ops.count(op)) EXPECT_TRUE(chain_ops.count(op)) << op;
  }
  for (const std::string& op : ref_ops) EXPECT_TRUE(model_ops.count(op)) << op;
  EXPECT_TRUE(model_ops.count("Erf") && !ref_ops.count("Erf")) << "the GELUs ran as chains";
  for (const std::string& op : ref_ops) EXPECT_THAT(r.out, HasSubstr("    " + op + " ")) << op;
  // The engine runs its plan's layers: as many as its build reports.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(Built the engine in .*: (\d+) layer\(s\))"))) << r.out;
  EXPECT_EQ(engine["layers"].size(), std::stoul(m[1]));
  for (const auto& op : engine["ops"]) EXPECT_TRUE(model_ops.count(op["op"].get<std::string>())) << op.dump();
  expect_consistent(ref);
  expect_consistent(engine);
  // Three layers listed, the rest summed in one row.
  EXPECT_THAT(r.out, HasSubstr(fmt::format("({} more layers)", ref_layers - 3)));
  EXPECT_THAT(r.out, HasSubstr("PASSED | 2 comparison(s)"));
}

TEST(CliProfile, ALoneRunnerWritesItsProfileToTheReport) {
  TempDir tmp;
  const auto report = tmp.path() / "report.json";
  auto r = run_vernier({"run", kDemo, "--ref", "--profile", "--report-json", report.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[I] Profile of ref-runner-N0-"));
  const nlohmann::json j = read_json(report);
  ASSERT_EQ(j["profiles"].size(), 1u);
  expect_consistent(j["profiles"][0]);
}

TEST(CliProfile, RefusesWhatItCannotTime) {
  test::expect_bad_input(run_vernier({"run", kDemo, "--ref", "--engine", "--mark-all", "--profile"}),
                         "--profile times plain runs");
  TempDir tmp;
  const auto saved = tmp.path() / "out.json";
  ASSERT_EQ(run_vernier({"run", kDemo, "--ref", "--save-outputs", saved.string()}).exit_code, 0);
  test::expect_bad_input(run_vernier({"run", "--load-outputs", saved.string(), "--profile"}), "loaded results");
}

}  // namespace
}  // namespace vn
