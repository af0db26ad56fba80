// SPDX-License-Identifier: Apache-2.0
// Tensor digests (what a browser keeps of a compared pair) and the layer-wise comparison's JSON
// read back: worst elements, per-slice maxima, block-max heatmaps, bounds, hostile fields.
#include "core/compare/tensor_digest.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/compare/compare_json.h"
#include "core/compare/layerwise.h"

namespace vn {
namespace {

// A (2, 3, 50, 100) pair whose errors are 1e-3 everywhere, 0.5 at [1, 2, 40, 70] and NaN at
// [0, 1, 3, 3].
std::pair<Tensor, Tensor> planted() {
  const Shape shape = {2, 3, 50, 100};
  std::vector<float> ref(2 * 3 * 50 * 100), test(ref.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    ref[k] = static_cast<float>(std::sin(0.01 * static_cast<double>(k)));
    test[k] = ref[k] + 1e-3f;
  }
  test[((1 * 3 + 2) * 50 + 40) * 100 + 70] += 0.5f;
  test[((0 * 3 + 1) * 50 + 3) * 100 + 3] = std::nanf("");
  return {Tensor::from_vector<float>(shape, test), Tensor::from_vector<float>(shape, ref)};
}

TEST(TensorDigest, KeepsTheWorstElementsSliceMaximaAndBoundedHeatmaps) {
  const auto [test, ref] = planted();
  const TensorDigest d = digest_tensors(test, ref);
  EXPECT_EQ(d.shape, (Shape{2, 3, 50, 100}));
  EXPECT_EQ(d.slice_rows, 50);
  EXPECT_EQ(d.slice_cols, 100);
  EXPECT_EQ(d.slice_count, 6);
  ASSERT_EQ(d.worst.size(), 12u);
  // The NaN is the worst there is, then the planted 0.5.
  EXPECT_EQ(d.worst[0].index, ((0 * 3 + 1) * 50 + 3) * 100 + 3);
  EXPECT_TRUE(std::isnan(d.worst[0].abs_error));
  EXPECT_EQ(d.worst[1].index, ((1 * 3 + 2) * 50 + 40) * 100 + 70);
  EXPECT_NEAR(d.worst[1].abs_error, 0.501, 1e-4);
  EXPECT_NEAR(d.worst[2].abs_error, 1e-3, 1e-4);
  ASSERT_EQ(d.slice_max.size(), 6u);
  EXPECT_TRUE(std::isnan(d.slice_max[1]));
  EXPECT_NEAR(d.slice_max[5], 0.501, 1e-4);
  EXPECT_NEAR(d.slice_max[0], 1e-3, 1e-4);
  // Two maps: the worst element's slice, then the worst other slice; each at most 24 x 48 cells
  // of block maxima, so one bad element still shows.
  ASSERT_EQ(d.heatmaps.size(), 2u);
  EXPECT_EQ(d.heatmaps[0].slice, 1);
  EXPECT_EQ(d.heatmaps[1].slice, 5);
  const TensorDigest::Heatmap& h = d.heatmaps[1];
  EXPECT_EQ(h.block_rows, 3);
  EXPECT_EQ(h.block_cols, 3);
  EXPECT_EQ(h.rows, 17);
  EXPECT_EQ(h.cols, 34);
  EXPECT_NEAR(h.values[static_cast<size_t>((40 / 3) * h.cols + 70 / 3)], 0.501, 1e-4);
  EXPECT_NEAR(*std::max_element(h.values.begin(), h.values.end()), 0.501f, 1e-4);
}

TEST(TensorDigest, StaysBoundedAndRefusesWhatItCannotCompare) {
  // 5,000 slices of 1 x 2: more than the kept maxima; the maps follow the worst elements.
  std::vector<float> a(10000, 1.0f), b(10000, 1.0f);
  b[9999] = 3.0f;
  b[17] = 2.0f;
  const TensorDigest d = digest_tensors(Tensor::from_vector<float>({5000, 1, 2}, b),
                                        Tensor::from_vector<float>({5000, 1, 2}, a), DigestLimits{3, 1024, 2, 24, 48});
  EXPECT_EQ(d.slice_count, 5000);
  EXPECT_TRUE(d.slice_max.empty());
  ASSERT_EQ(d.worst.size(), 3u);
  EXPECT_EQ(d.worst[0].index, 9999);
  EXPECT_EQ(d.worst[1].index, 17);
  EXPECT_EQ(d.worst[2].index, 0);  // ties keep the first
  ASSERT_EQ(d.heatmaps.size(), 2u);
  EXPECT_EQ(d.heatmaps[0].slice, 4999);
  EXPECT_EQ(d.heatmaps[1].slice, 8);
  // Different shapes: the shape only.
  const TensorDigest mismatch =
      digest_tensors(Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({1, 2}, {1, 2}));
  EXPECT_EQ(mismatch.slice_count, 0);
  EXPECT_TRUE(mismatch.worst.empty());
}

TEST(LayerwiseJson, ReadsBackWhatItWritesDigestsIncluded) {
  const auto [test, ref] = planted();
  TensorMap t, r;
  t.set("x2", test);
  r.set("x2", ref);
  Graph g;
  g.inputs.push_back({"x", DType::kFloat32, std::nullopt, {}});
  Node n;
  n.name = "n";
  n.op_type = "Relu";
  n.inputs = {"x"};
  n.outputs = {"x2"};
  g.nodes.push_back(n);
  g.outputs.push_back({"x2", DType::kFloat32, std::nullopt, {}});
  CompareConfig config;
  Result<LayerwiseComparison> c = compare_layerwise_results(t, r, g, config, DigestLimits{});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const nlohmann::ordered_json j = layerwise_comparison_json(*c);
  Result<LayerwiseComparison> back = layerwise_comparison_from_json(nlohmann::ordered_json::parse(j.dump()), "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->tensors.size(), 1u);
  ASSERT_EQ(back->layers.size(), 1u);
  EXPECT_EQ(back->layers[0].accumulated, c->layers[0].accumulated);
  EXPECT_EQ(back->layers[0].rank, c->layers[0].rank);
  EXPECT_EQ(back->first_culprit, c->first_culprit);
  const TensorComparison& tc = back->tensors[0];
  EXPECT_FALSE(tc.passed);
  EXPECT_EQ(tc.mismatch_count, c->tensors[0].mismatch_count);
  EXPECT_TRUE(std::isnan(tc.abs_max));
  EXPECT_EQ(tc.abs_error_histogram, c->tensors[0].abs_error_histogram);
  ASSERT_NE(tc.digest, nullptr);
  EXPECT_EQ(tc.digest->worst[1].index, c->tensors[0].digest->worst[1].index);
  EXPECT_EQ(tc.digest->heatmaps.size(), 2u);
  EXPECT_NEAR(tc.digest->heatmaps[1].values[static_cast<size_t>(13 * 34 + 23)], 0.501, 1e-3);  // three digits kept
  EXPECT_TRUE(std::isnan(tc.digest->slice_max[1]));
}

TEST(LayerwiseJson, RefusesHostileFieldsWithTheirPath) {
  const auto read = [](const char* text) {
    return layerwise_comparison_from_json(nlohmann::ordered_json::parse(text), "r.json").status().message();
  };
  EXPECT_EQ(read(R"([])"), "r.json: comparison is not an object");
  EXPECT_EQ(read(R"({"layers": []})"), "r.json: comparison.tensors is missing");
  EXPECT_EQ(read(R"({"tensors": [], "layers": [{"name": "a", "accumulated": [0]}]})"),
            "r.json: comparison.layers[0].accumulated[0] is not the index of a tensor or -1");
  EXPECT_EQ(read(R"({"tensors": [{"name": "t", "passed": "no"}], "layers": []})"),
            "r.json: comparison.tensors[0].passed is not true or false");
  EXPECT_EQ(read(R"({"tensors": [], "layers": [], "culprit": "nobody"})"),
            "r.json: comparison.culprit names no layer of the comparison");
  EXPECT_EQ(read(R"({"tensors": [{"name": "t", "passed": false, "digest": {"shape": [2, 2], "slice":
                {"rows": 2, "cols": 2, "count": 1}, "heatmaps": [{"slice": 0, "rows": 2, "cols": 2, "values": [1]}]}}],
                "layers": []})"),
            "r.json: comparison.tensors[0].digest.heatmaps[0].values does not hold rows x cols values");
  EXPECT_EQ(read(R"({"tensors": [{"name": "t", "passed": false, "digest": {"shape": [2], "slice":
                {"rows": 1, "cols": 2, "count": 1}, "heatmaps": [{"slice": 3, "rows": 1, "cols": 2, "values": [1, 2]}]}}],
                "layers": []})"),
            "r.json: comparison.tensors[0].digest.heatmaps[0].slice is not a slice of the tensor");
}

}  // namespace
}  // namespace vn
