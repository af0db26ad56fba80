// SPDX-License-Identifier: Apache-2.0
// Synthetic data must equal numpy.random.RandomState's output bit for bit. The expected values
// below were printed by numpy 1.24 (Debian 12's python3-numpy), e.g.
// `np.random.RandomState(1).randint(-5, 100, size=8, dtype=np.int8)`.
#include "core/data/synthetic.h"

#include <gtest/gtest.h>
#include <Eigen/Core>

#include "core/data/numpy_random.h"

namespace vn::data {
namespace {

Graph graph_with_input(const std::string& name, DType dtype, std::vector<Dim> dims) {
  Graph g;
  ValueInfo v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(dims);
  g.inputs.push_back(v);
  return g;
}

TEST(NumpyRandom, RandomSampleMatchesSeedOne) {
  NumpyRandomState rng(1);
  EXPECT_DOUBLE_EQ(rng.random_sample(), 4.17022004702574e-01);
  EXPECT_DOUBLE_EQ(rng.random_sample(), 7.203244934421581e-01);
  EXPECT_DOUBLE_EQ(rng.random_sample(), 1.1437481734488664e-04);
  EXPECT_DOUBLE_EQ(rng.random_sample(), 3.0233257263183977e-01);
}

template <typename T>
std::vector<T> generate(DType dtype, double lo, double hi, int64_t n, uint32_t seed = 1) {
  SyntheticOptions opts;
  opts.seed = seed;
  opts.val_ranges[""] = ValRange{lo, hi};
  Result<std::vector<TensorMap>> feeds = generate_feeds(graph_with_input("x", dtype, {Dim::of(n)}), opts);
  EXPECT_TRUE(feeds.ok()) << feeds.status().to_string();
  auto v = feeds->at(0).find("x")->values<T>();
  return {v.begin(), v.end()};
}

TEST(Synthetic, IntegersMatchNumpyRandint) {
  EXPECT_EQ(generate<int64_t>(DType::kInt64, 0, 1, 8), (std::vector<int64_t>{1, 1, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(generate<int32_t>(DType::kInt32, -5, 999, 8), (std::vector<int32_t>{32, 230, 903, 67, 762, 900, 710, 640}));
  EXPECT_EQ(generate<int16_t>(DType::kInt16, -5, 999, 8), (std::vector<int16_t>{32, 700, 230, 834, 903, 98, 67, 695}));
  EXPECT_EQ(generate<int8_t>(DType::kInt8, -5, 99, 8), (std::vector<int8_t>{32, 60, -5, 66, 7, 42, 98, 51}));
  EXPECT_EQ(generate<int64_t>(DType::kInt64, -5, double((int64_t{1} << 40) - 1), 4),
            (std::vector<int64_t>{163196666086, 1095766950788, 876169207424, 620178591868}));
}

TEST(Synthetic, BoolsUseOneBitPerValue) {
  std::vector<bool> expected{true, false, true, false, false, true, false, false};
  std::vector<bool> got;
  for (bool b : generate<bool>(DType::kBool, 0, 1, 8)) got.push_back(b);
  EXPECT_EQ(got, expected);
}

TEST(Synthetic, FloatsAreScaledInDoubleThenCast) {
  // np.random.RandomState(3).random_sample(4) * 9.5 - 2, cast to float16 (bits).
  auto h = generate<Eigen::half>(DType::kFloat16, -2.0, 7.5, 4, 3);
  const std::vector<uint16_t> expected{17015, 17594, 14876, 16821};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(Eigen::numext::bit_cast<uint16_t>(h[i]), expected[i]) << i;
  auto f = generate<float>(DType::kFloat32, 0, 1, 2);
  EXPECT_EQ(f[0], static_cast<float>(4.17022004702574e-01));
}

TEST(Synthetic, IterationsUseConsecutiveSeedsAndInputsShareOneStream) {
  Graph g = graph_with_input("a", DType::kFloat32, {Dim::of(2)});
  ValueInfo b;
  b.name = "b";
  b.dtype = DType::kFloat32;
  b.shape = std::vector<Dim>{Dim::of(2)};
  g.inputs.push_back(b);
  SyntheticOptions opts;
  opts.iterations = 2;
  Result<std::vector<TensorMap>> feeds = generate_feeds(g, opts);
  ASSERT_TRUE(feeds.ok());
  // Input b continues seed 1's stream after a's two values.
  EXPECT_EQ(feeds->at(0).find("b")->values<float>()[0], static_cast<float>(1.1437481734488664e-04));
  NumpyRandomState seed2(2);
  EXPECT_EQ(feeds->at(1).find("a")->values<float>()[0], static_cast<float>(seed2.random_sample()));
}

TEST(Synthetic, PerInputRangesAndDeprecatedOverrides) {
  Graph g = graph_with_input("x", DType::kFloat32, {Dim::of(100)});
  SyntheticOptions opts;
  opts.val_ranges["x"] = ValRange{10, 11};
  opts.val_ranges[""] = ValRange{-1, 0};
  auto feeds = generate_feeds(g, opts);
  ASSERT_TRUE(feeds.ok());
  for (float v : feeds->at(0).find("x")->values<float>()) {
    EXPECT_GE(v, 10.0f);
    EXPECT_LE(v, 11.0f);
  }
  opts.float_min = 100;
  opts.float_max = 101;
  feeds = generate_feeds(g, opts);
  ASSERT_TRUE(feeds.ok());
  EXPECT_GE(feeds->at(0).find("x")->values<float>()[0], 100.0f);
}

TEST(Synthetic, DynamicDimsDefaultToOneOrComeFromInputShapes) {
  Graph g = graph_with_input("x", DType::kFloat32, {Dim::named("batch"), Dim::of(3)});
  auto feeds = generate_feeds(g, {});
  ASSERT_TRUE(feeds.ok());
  EXPECT_EQ(feeds->at(0).find("x")->shape(), Shape({1, 3}));
  SyntheticOptions opts;
  opts.input_shapes["x"] = {4, 3};
  feeds = generate_feeds(g, opts);
  ASSERT_TRUE(feeds.ok());
  EXPECT_EQ(feeds->at(0).find("x")->shape(), Shape({4, 3}));
  opts.input_shapes["x"] = {4, 5};
  feeds = generate_feeds(g, opts);
  ASSERT_FALSE(feeds.ok());
  EXPECT_NE(feeds.status().message().find("batch, 3"), std::string::npos) << feeds.status().message();
}

TEST(Synthetic, RefusesImpossibleRequests) {
  SyntheticOptions opts;
  opts.val_ranges[""] = ValRange{-1000, 1000};
  EXPECT_FALSE(generate_feeds(graph_with_input("x", DType::kInt8, {Dim::of(2)}), opts).ok());
  EXPECT_FALSE(generate_feeds(graph_with_input("s", DType::kString, {Dim::of(2)}), {}).ok());
  Graph unknown_rank;
  ValueInfo v;
  v.name = "x";
  v.dtype = DType::kFloat32;
  unknown_rank.inputs.push_back(v);
  EXPECT_FALSE(generate_feeds(unknown_rank, {}).ok());
  EXPECT_FALSE(generate_feeds(graph_with_input("x", DType::kFloat32, {Dim::of(1 << 30), Dim::of(1 << 30)}), {}).ok());
}

}  // namespace
}  // namespace vn::data
