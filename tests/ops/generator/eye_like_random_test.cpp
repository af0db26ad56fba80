// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/ir/dtype.h"
#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- EyeLike -----------------------------------------------------------------------------------

TEST(EyeLike, OnesOnTheKthDiagonal) {
  OpTester t("EyeLike", 9);
  t.input<float>({3, 4}, std::vector<float>(12, 7));
  t.output<float>({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  t.run();
  OpTester up("EyeLike", 9);
  up.attr("k", int64_t{2}).attr("dtype", int64_t{dtype_to_onnx(DType::kInt32)});
  up.input<float>({3, 4}, std::vector<float>(12, 0));
  up.output<int32_t>({3, 4}, {0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0});
  up.run();
  OpTester down("EyeLike", 9);
  down.attr("k", int64_t{-1});
  down.input<bool>({3, 2}, std::vector<bool>(6, false));
  down.output<bool>({3, 2}, {false, false, true, false, false, true});
  down.run();
  OpTester off("EyeLike", 9);
  off.attr("k", int64_t{-100});
  off.input<int64_t>({2, 2}, {1, 1, 1, 1});
  off.output<int64_t>({2, 2}, {0, 0, 0, 0});
  off.run();
}

TEST(EyeLike, ErrorsNameTheProblem) {
  OpTester r("EyeLike", 9);
  r.input<float>({3}, {0, 0, 0});
  r.expect_failure(StatusCode::kShapeMismatch, "input must be 2-D, got shape (3,)");
  OpTester d("EyeLike", 9);
  d.attr("dtype", int64_t{8});
  d.input<float>({1, 1}, {0});
  d.expect_failure(StatusCode::kUnsupportedDType, "input of type string is not supported");
}

// ---- Random generators -------------------------------------------------------------------------

std::vector<double> as_doubles(const Tensor& t) { return tensor_to_doubles(t).value(); }

TEST(RandomUniform, ShapeRangeAndReproducibility) {
  auto run = [](float seed) {
    OpTester t("RandomUniform", 1);
    t.attr("shape", std::vector<int64_t>{2, 500}).attr("low", -2.0f).attr("high", 3.0f).attr("seed", seed);
    t.unchecked_output();
    return t.run();
  };
  const std::vector<Tensor> a = run(1.0f), b = run(1.0f), c = run(2.0f);
  ASSERT_EQ(a[0].shape(), (Shape{2, 500}));
  EXPECT_EQ(a[0].dtype(), DType::kFloat32);
  EXPECT_TRUE(a[0].same_as(b[0]));
  EXPECT_FALSE(a[0].same_as(c[0]));
  double sum = 0;
  for (double v : as_doubles(a[0])) {
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 3.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 0.5, 0.2);  // the mean of U(-2, 3), within ~4 standard errors
}

TEST(RandomNormal, MomentsAndDtype) {
  OpTester t("RandomNormal", 1);
  t.attr("shape", std::vector<int64_t>{4000}).attr("mean", 5.0f).attr("scale", 2.0f);
  t.attr("dtype", int64_t{dtype_to_onnx(DType::kFloat64)});
  t.unchecked_output();
  const std::vector<Tensor> out = t.run();
  ASSERT_EQ(out[0].dtype(), DType::kFloat64);
  double sum = 0, sq = 0;
  for (double v : as_doubles(out[0])) {
    sum += v;
    sq += v * v;
  }
  const double mean = sum / 4000, var = sq / 4000 - mean * mean;
  EXPECT_NEAR(mean, 5.0, 0.15);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.15);
}

TEST(RandomLike, TakeShapeAndTypeFromTheInput) {
  OpTester u("RandomUniformLike", 1);
  u.input(Tensor(DType::kFloat16, {3, 2}));
  u.unchecked_output();
  const std::vector<Tensor> a = u.run();
  EXPECT_EQ(a[0].dtype(), DType::kFloat16);
  EXPECT_EQ(a[0].shape(), (Shape{3, 2}));
  OpTester n("RandomNormalLike", 1);
  n.attr("dtype", int64_t{dtype_to_onnx(DType::kFloat32)});
  n.input<int32_t>({0, 4}, {});
  n.output<float>({0, 4}, {});
  n.run();
}

TEST(Bernoulli, CertainProbabilitiesAreExact) {
  OpTester t("Bernoulli", 15);
  t.attr("seed", 3.0f);
  t.input<double>({6}, {0, 1, 0, 1, 1, 0});
  t.output<double>({6}, {0, 1, 0, 1, 1, 0});
  t.run();
  OpTester b("Bernoulli", 15);
  b.attr("dtype", int64_t{dtype_to_onnx(DType::kBool)});
  b.input<float>({2}, {1, 0});
  b.output<bool>({2}, {true, false});
  b.run();
}

TEST(Multinomial, SamplesTheDominantClass) {
  // Log-probabilities 0 vs -1000: class 0 has probability 1 - e^-1000.
  OpTester t("Multinomial", 7);
  t.attr("sample_size", int64_t{5});
  t.input<float>({2, 2}, {0, -1000, -1000, 0});
  t.output<int32_t>({2, 5}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 1});
  t.run();
}

TEST(RandomGenerators, ErrorsNameTheProblem) {
  OpTester s("RandomUniform", 1);
  s.expect_failure(StatusCode::kInvalidModel, "attribute shape is required");
  OpTester d("RandomNormal", 1);
  d.attr("shape", std::vector<int64_t>{2}).attr("dtype", int64_t{dtype_to_onnx(DType::kInt32)});
  d.expect_failure(StatusCode::kUnsupportedDType, "input of type int32 is not supported");
  OpTester m("Multinomial", 7);
  m.input<float>({3}, {0, 0, 0});
  m.expect_failure(StatusCode::kShapeMismatch,
                   "input must be a float [batch_size, class_size] tensor, got float32 (3,)");
}

}  // namespace
}  // namespace vn::ops::testing
