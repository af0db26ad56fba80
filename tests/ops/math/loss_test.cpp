// SPDX-License-Identifier: Apache-2.0
// Expected values computed with numpy from the ONNX definitions (loss = -log_prob[label] *
// weight[label], mean = sum / summed weights of the labels not ignored).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

const std::vector<float> kScores = {-1.2f, -0.5f, -2.0f, -0.1f, -0.3f,  -1.5f,
                                    -0.9f, -2.2f, -0.7f, -0.8f, -0.05f, -1.1f};

TEST(NegativeLogLikelihoodLoss, WeightedMeanSkipsTheIgnoredLabel) {
  // Sample 1's label 2 is ignored: (0.5 * 2.0 + 1.1 * 0.25) / (2.0 + 0.25).
  for (int64_t opset : {12, 13, 22}) {
    OpTester t("NegativeLogLikelihoodLoss", opset);
    t.attr("ignore_index", int64_t{2});
    t.input<float>({3, 4}, kScores).input<int64_t>({3}, {1, 2, 3}).input<float>({4}, {0.5f, 2.0f, 1.5f, 0.25f});
    t.output<float>({}, {0.56666667f});
    t.run();
  }
}

TEST(NegativeLogLikelihoodLoss, NoneKeepsTheLabelShapeAndSumAddsUp) {
  std::vector<double> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -0.25 * static_cast<double>(i);
  OpTester t("NegativeLogLikelihoodLoss", 13);
  t.attr("reduction", "none");
  t.input<double>({2, 3, 2}, x).input<int32_t>({2, 2}, {0, 2, 1, 1});
  t.output<double>({2, 2}, {0.0, 1.25, 2.0, 2.25});
  t.run();
  OpTester s("NegativeLogLikelihoodLoss", 13);
  s.attr("reduction", "sum");
  s.input<double>({2, 3, 2}, x).input<int32_t>({2, 2}, {0, 2, 1, 1});
  s.output<double>({}, {5.5});
  s.run();
}

TEST(NegativeLogLikelihoodLoss, MeanOverOnlyIgnoredLabelsIsNaN) {
  OpTester t("NegativeLogLikelihoodLoss", 13);
  t.attr("ignore_index", int64_t{-1});
  t.input<float>({3, 4}, kScores).input<int64_t>({3}, {-1, -1, -1});
  t.output<float>({}, {std::numeric_limits<float>::quiet_NaN()});
  t.run();
}

TEST(NegativeLogLikelihoodLoss, RefusesBadLabelsAndAttributes) {
  OpTester t("NegativeLogLikelihoodLoss", 13);
  t.input<float>({3, 4}, kScores).input<int64_t>({3}, {1, 4, 0});
  t.expect_failure(StatusCode::kInvalidArgument, "label 4 at flat index 1 is outside [0, 4)");
  OpTester r("NegativeLogLikelihoodLoss", 13);
  r.attr("reduction", "max");
  r.input<float>({3, 4}, kScores).input<int64_t>({3}, {1, 2, 0});
  r.expect_failure(StatusCode::kInvalidModel, "reduction 'max'");
  OpTester s("NegativeLogLikelihoodLoss", 13);
  s.input<float>({3, 4}, kScores).input<int64_t>({4}, {1, 2, 0, 0});
  s.expect_failure(StatusCode::kShapeMismatch, "labels must have shape");
  // bfloat16 scores come with version 22.
  const std::vector<Eigen::bfloat16> bf = {Eigen::bfloat16(-0.5f), Eigen::bfloat16(-2.0f)};
  OpTester b("NegativeLogLikelihoodLoss", 13);
  b.input<Eigen::bfloat16>({1, 2}, bf).input<int64_t>({1}, {1});
  b.expect_failure(StatusCode::kUnsupportedDType, "bfloat16");
  OpTester b22("NegativeLogLikelihoodLoss", 22);
  b22.input<Eigen::bfloat16>({1, 2}, bf).input<int64_t>({1}, {1});
  b22.output<Eigen::bfloat16>({}, {Eigen::bfloat16(2.0f)});
  b22.run();
  OpTester h("NegativeLogLikelihoodLoss", 13);
  h.input<int32_t>({1, 2}, {0, 0}).input<int64_t>({1}, {0});
  h.expect_failure(StatusCode::kUnsupportedDType, "int32");
}

TEST(SoftmaxCrossEntropyLoss, SumWithLogProbOutput) {
  const std::vector<float> s = {0.1f, 1.0f, 2.0f, -1.0f, 0.5f, 0.3f, -0.2f, 0.4f, 1.5f, 0.0f, 0.0f, 2.5f};
  const std::vector<float> log_prob = {-2.216778714f, -0.489757595f, -0.316778714f, -2.489757595f,
                                       -1.816778714f, -1.189757595f, -2.04061627f,  -2.286098936f,
                                       -0.34061627f,  -2.686098936f, -1.84061627f,  -0.186098936f};
  for (int64_t opset : {12, 13}) {
    OpTester t("SoftmaxCrossEntropyLoss", opset);
    t.attr("reduction", "sum");
    t.input<float>({2, 3, 2}, s).input<int64_t>({2, 2}, {2, 0, 1, 2});
    t.output<float>({}, {2.833251515f}).output<float>({2, 3, 2}, log_prob);
    t.run();
  }
  OpTester m("SoftmaxCrossEntropyLoss", 13);
  m.input<float>({2, 3, 2}, s).input<int64_t>({2, 2}, {2, 0, 1, 2});
  m.output<float>({}, {0.708312879f});
  m.run();
}

}  // namespace
}  // namespace vn::ops::testing
