// SPDX-License-Identifier: Apache-2.0
#include "core/debug/diff_tactics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/util/process.h"

namespace vn::debug {
namespace {

// A replay of Vernier's layout with one layer per (layer, tactic) pair.
std::string replay_json(const std::vector<std::pair<std::string, std::string>>& layers, bool legacy = false) {
  nlohmann::ordered_json replay = nlohmann::ordered_json::object();
  for (const auto& [layer, tactic] : layers) {
    replay[layer] = {
        {"implementation", 1},
        {"tactic", static_cast<int64_t>(std::hash<std::string>{}(tactic) % 100000)},
        {"inputs",
         {{{"dtype", "DataType.FLOAT"},
           {"strides", {16, 1}},
           {"vectorized_dim", -1},
           {"components_per_element", 1},
           {"polygraphy_class", "TensorInfo"}}}},
        {"outputs", nlohmann::ordered_json::array()},
        {"vernier", {{"tactic", tactic}, {"precision", "fp32"}, {"nodes", nlohmann::ordered_json::array()}}},
        {"polygraphy_class", "Algorithm"}};
  }
  nlohmann::ordered_json j = {{"replay", replay}};
  if (legacy) {
    j["__polygraphy_encoded_TacticReplayData"] = "polygraphy_serialized_json_type";
  } else {
    j["polygraphy_class"] = "TacticReplayData";
  }
  return j.dump(4);
}

ReplayChoices choices(const std::vector<std::pair<std::string, std::string>>& layers) {
  ReplayChoices out;
  for (const auto& [layer, tactic] : layers) out[layer] = TacticChoice{"algo:" + tactic, tactic};
  return out;
}

TEST(DiffTactics, RanksTheTacticOfEveryBadBuildFirst) {
  // conv's tactics are spread over good and bad builds; fc's split_k4 is in all bad builds only.
  const std::vector<ReplayChoices> good = {
      choices({{"conv", "direct"}, {"fc", "blocked"}}),
      choices({{"conv", "winograd"}, {"fc", "blocked"}}),
      choices({{"conv", "direct"}, {"fc", "blocked"}}),
  };
  const std::vector<ReplayChoices> bad = {
      choices({{"conv", "winograd"}, {"fc", "split_k4"}}),
      choices({{"conv", "direct"}, {"fc", "split_k4"}}),
      choices({{"conv", "winograd"}, {"fc", "split_k4"}}),
  };
  const TacticDiff diff = diff_tactics(good, bad);
  EXPECT_EQ(diff.good_replays, 3);
  EXPECT_EQ(diff.bad_replays, 3);
  ASSERT_EQ(diff.layers.size(), 2u);
  EXPECT_EQ(diff.layers[0].layer, "fc");
  const TacticSuspect& top = diff.layers[0].suspects.at(0);
  EXPECT_EQ(top.choice.label, "split_k4");
  EXPECT_DOUBLE_EQ(top.score, 1.0);
  EXPECT_TRUE(top.only_in_bad());
  // 3 of 6 builds chose it and all 3 were bad: 1 / C(6, 3).
  EXPECT_NEAR(top.p_value, 1.0 / 20, 1e-12);
  // winograd: 2/3 of bad builds, 1/3 of good ones; direct scores negative and is left out.
  ASSERT_EQ(diff.layers[1].suspects.size(), 1u);
  EXPECT_EQ(diff.layers[1].suspects[0].choice.label, "winograd");
  EXPECT_NEAR(diff.layers[1].suspects[0].score, 1.0 / 3, 1e-12);
  EXPECT_FALSE(diff.layers[1].suspects[0].only_in_bad());
}

TEST(DiffTactics, NothingSeparatesWhenBadBuildsChooseAsGoodOnesDo) {
  const std::vector<ReplayChoices> good = {choices({{"fc", "blocked"}}), choices({{"fc", "split_k4"}})};
  const std::vector<ReplayChoices> bad = {choices({{"fc", "blocked"}}), choices({{"fc", "split_k4"}})};
  EXPECT_TRUE(diff_tactics(good, bad).layers.empty());
}

TEST(DiffTactics, HypergeometricTailMatchesHandComputedValues) {
  // 2 marked of 4, 2 drawn: P(X >= 1) = 1 - C(2,2)/C(4,2) = 5/6; P(X >= 2) = 1/6.
  EXPECT_NEAR(hypergeometric_upper_tail(1, 2, 2, 4), 5.0 / 6, 1e-12);
  EXPECT_NEAR(hypergeometric_upper_tail(2, 2, 2, 4), 1.0 / 6, 1e-12);
  EXPECT_NEAR(hypergeometric_upper_tail(0, 2, 2, 4), 1.0, 1e-12);
}

TEST(DiffTactics, LoadsReplaysRecursivelyAndSkipsOtherFiles) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "good/nested");
  test::write_file(dir / "good/a.json", replay_json({{"fc", "gemm__blocked_f32acc"}}));
  test::write_file(dir / "good/nested/b.json", replay_json({{"fc", "gemm__blocked_f32acc"}}, true));
  test::write_file(dir / "good/notes.txt", "not json");
  test::write_file(dir / "good/results.json", "{\"polygraphy_class\": \"RunResults\", \"lst\": []}");
  std::vector<std::filesystem::path> skipped;
  Result<std::vector<ReplayChoices>> replays = load_tactic_replays(dir / "good", &skipped);
  ASSERT_TRUE(replays.ok()) << replays.status().to_string();
  ASSERT_EQ(replays->size(), 2u);
  EXPECT_EQ(skipped.size(), 2u);
  const TacticChoice& c = (*replays)[0].at("fc");
  EXPECT_EQ(c.label, "gemm__blocked_f32acc (fp32)");
  EXPECT_NE(c.algorithm.find("(Implementation: 1, Tactic: "), std::string::npos);
  EXPECT_NE(c.algorithm.find("Inputs: (TensorInfo(DataType.FLOAT, (16, 1), -1, 1),)"), std::string::npos);
  EXPECT_EQ(c.algorithm, (*replays)[1].at("fc").algorithm);

  // A TensorRT replay as Polygraphy writes it (tests/tools/conftest.py): no Vernier names, so the
  // Algorithm string is the label.
  test::write_file(dir / "trt.json", R"({"replay": {"layer0": {"implementation": 0, "tactic": 2,
      "inputs": [{"dtype": "DataType.FLOAT", "strides": [1, 2], "vectorized_dim": -1, "components_per_element": 1,
                  "polygraphy_class": "TensorInfo"}],
      "outputs": [{"dtype": "DataType.FLOAT", "strides": [1, 2], "vectorized_dim": -1, "components_per_element": 1,
                   "polygraphy_class": "TensorInfo"}],
      "polygraphy_class": "Algorithm"}}, "polygraphy_class": "TacticReplayData"})");
  Result<std::vector<ReplayChoices>> trt = load_tactic_replays(dir / "trt.json");
  ASSERT_TRUE(trt.ok()) << trt.status().to_string();
  ASSERT_EQ(trt->size(), 1u);
  EXPECT_EQ(trt->at(0).at("layer0").label,
            "(Implementation: 0, Tactic: 2) | Inputs: (TensorInfo(DataType.FLOAT, (1, 2), -1, 1),) | Outputs: "
            "(TensorInfo(DataType.FLOAT, (1, 2), -1, 1),)");

  Result<std::vector<ReplayChoices>> missing = load_tactic_replays(dir / "nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vn::debug
