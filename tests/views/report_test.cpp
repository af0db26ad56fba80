// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "views/report/compare_report.h"
#include "views/report/tensor_report.h"
#include "views/report/text_table.h"

namespace vn::views {
namespace {

using ::testing::HasSubstr;

TEST(TextTable, AlignsByDisplayWidth) {
  TextTable t({"layer", "error"}, {TextTable::Align::kLeft, TextTable::Align::kRight});
  t.add_row({"conv1", "0.5"});
  t.add_row({"卷积", "12.25"});
  EXPECT_EQ(t.render(), "layer  error\n-----  -----\nconv1    0.5\n卷积   12.25\n");
}

TEST(TensorReport, SummaryUsesPolygraphyLayout) {
  Tensor t = Tensor::from_vector<float>({2, 2}, {1, -2, 3, 4});
  EXPECT_EQ(format_tensor_summary("y", t),
            "y [dtype=float32, shape=(2, 2)] | Stats: mean=1.5, std-dev=2.2913, var=5.25, median=2, min=-2 at (0, 1), "
            "max=4 at (1, 1), avg-magnitude=2.5, p90=3.7, p95=3.85, p99=3.97");
  Tensor n = Tensor::from_vector<float>({2}, {std::nanf(""), 1});
  EXPECT_THAT(format_tensor_summary("n", n), HasSubstr("NaN=1"));
}

TEST(TensorReport, HistogramBarsScaleToForty) {
  Histogram h{0, 2, {4, 1}};
  const std::string text = format_histogram(h, "  ");
  EXPECT_THAT(text, HasSubstr("(0, 1)    |          4 | " + std::string(40, '#') + "\n"));
  EXPECT_THAT(text, HasSubstr("(1, 2)    |          1 | " + std::string(10, '#') + "\n"));
}

TEST(TensorReport, ValuesNestLikeNumpy) {
  EXPECT_EQ(format_values(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}), 100), "[[1, 2],\n [3, 4]]");
  EXPECT_EQ(format_values(Tensor::from_vector<int64_t>({5}, {1, 2, 3, 4, 5}), 3), "[1, 2, 3, ...]");
  EXPECT_EQ(format_values(Tensor::scalar<bool>(true), 10), "True");
  EXPECT_EQ(format_values(Tensor(DType::kFloat32, {0}), 10), "[]");
}

}  // namespace
}  // namespace vn::views

namespace vn::views {
namespace {

TEST(CompareReport, SummaryFirstThenDetailsOfFailures) {
  TensorMap test{{"a", Tensor::from_vector<float>({2}, {1, 2})}, {"b", Tensor::from_vector<float>({2}, {1, 3})}};
  TensorMap ref{{"a", Tensor::from_vector<float>({2}, {1, 2})}, {"b", Tensor::from_vector<float>({2}, {1, 2})},
                {"c", Tensor::scalar<float>(0)}};
  const std::string text = format_comparison("x vs y", compare_results(test, ref, {}), false);
  EXPECT_THAT(text, HasSubstr("==== x vs y ====\n    tensor  result  max abs  max rel  min atol  min rtol   cosine"));
  EXPECT_THAT(text, HasSubstr("    a       PASSED        0        0         0         0        1         0/2\n"));
  EXPECT_THAT(text, HasSubstr("    b       FAILED        1      0.5         1       0.5  0.98995         1/2\n"));
  EXPECT_THAT(text, HasSubstr("    b | FAILED | Tolerance: [abs=1e-05, rel=1e-05] | Checking elemwise error\n"));
  EXPECT_EQ(text.find("    a | PASSED"), std::string::npos);  // passing tensors get details only with -v
  EXPECT_THAT(text, HasSubstr("To pass        | atol >= 1 (keeping rtol=1e-05) or rtol >= 0.5 (keeping atol=1e-05)"));
  EXPECT_THAT(text, HasSubstr("Not compared, missing from the results under test: 'c'"));
  EXPECT_THAT(text, HasSubstr("FAILED | 1 of 2 tensor(s) mismatched"));
  EXPECT_THAT(format_comparison("t", compare_results(test, ref, {}), true), HasSubstr("    a | PASSED"));
}

}  // namespace
}  // namespace vn::views
