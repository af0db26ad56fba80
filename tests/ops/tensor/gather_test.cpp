// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

TEST(Gather, Axis0Rows) {
  for (int64_t opset : {1, 11, 13}) {
    OpTester t("Gather", opset);
    t.input<float>({3, 2}, {1, 2, 3, 4, 5, 6}).input<int64_t>({2, 2}, {0, 1, 1, 2});
    t.output<float>({2, 2, 2}, {1, 2, 3, 4, 3, 4, 5, 6});
    t.run();
  }
}

TEST(Gather, Axis1AndNegativeIndices) {
  OpTester t("Gather", 13);
  t.attr("axis", int64_t{1});
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int32_t>({2}, {-1, 0});
  t.output<float>({2, 2}, {3, 1, 6, 4});
  t.run();
  OpTester last("Gather", 11);
  last.attr("axis", int64_t{-1});
  last.input<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}).input<int64_t>({1}, {1});
  last.output<int64_t>({2, 2, 1}, {2, 4, 6, 8});
  last.run();
}

TEST(Gather, ScalarIndexDropsAxisForShapeArithmetic) {
  OpTester t("Gather", 13);
  t.input<int64_t>({4}, {1, 3, 224, 224}).input<int64_t>({}, {1});
  t.output<int64_t>({}, {3});
  t.run();
}

TEST(Gather, EmptyIndices) {
  OpTester t("Gather", 13);
  t.attr("axis", int64_t{1});
  t.input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).input<int64_t>({0}, {});
  t.output<float>({2, 0}, {});
  t.run();
}

TEST(Gather, ErrorsNameTheProblem) {
  OpTester axis("Gather", 13);
  axis.attr("axis", int64_t{-10});
  axis.input<float>({2, 3, 4}, std::vector<float>(24, 0)).input<int64_t>({1}, {0});
  axis.expect_failure(StatusCode::kInvalidModel, "axis -10 is not in valid range [-3, 2]");
  OpTester bounds("Gather", 13);
  bounds.input<float>({3}, {1, 2, 3}).input<int64_t>({2}, {0, 3});
  bounds.expect_failure(StatusCode::kInvalidModel,
                        "index 3 (at flat position 1) is out of bounds for axis 0 of size 3");
  OpTester neg("Gather", 13);
  neg.input<float>({3}, {1, 2, 3}).input<int64_t>({1}, {-4});
  neg.expect_failure(StatusCode::kInvalidModel, "index -4");
  OpTester type("Gather", 13);
  type.input<float>({3}, {1, 2, 3}).input<float>({1}, {0});
  type.expect_failure(StatusCode::kUnsupportedDType, "indices must be int32 or int64, got float32");
  OpTester scalar("Gather", 13);
  scalar.input<float>({}, {1}).input<int64_t>({1}, {0});
  scalar.expect_failure(StatusCode::kShapeMismatch, "data must have rank >= 1");
}

// ---- GatherElements ----------------------------------------------------------------------------

TEST(GatherElements, PicksOneElementPerIndexAlongTheAxis) {
  for (int64_t opset : {11, 13}) {
    OpTester t("GatherElements", opset);
    t.attr("axis", int64_t{1});
    t.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2, 2}, {0, 0, 1, 0});
    t.output<float>({2, 2}, {1, 1, 4, 3});
    t.run();
  }
  // axis 0 with negative indices and an index tensor smaller than the data on the other axis.
  OpTester t("GatherElements", 13);
  t.input<int32_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}).input<int32_t>({2, 2}, {-1, 0, 1, -3});
  t.output<int32_t>({2, 2}, {7, 2, 4, 2});
  t.run();
}

TEST(GatherElements, ErrorsNameTheProblem) {
  OpTester rank("GatherElements", 13);
  rank.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({2}, {0, 1});
  rank.expect_failure(StatusCode::kShapeMismatch, "indices (2,) must have the rank of data (2, 2)");
  OpTester bounds("GatherElements", 13);
  bounds.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 2}, {0, 2});
  bounds.expect_failure(StatusCode::kInvalidModel,
                        "index 2 (at flat position 1) is out of bounds for axis 0 of size 2");
}

// ---- GatherND ----------------------------------------------------------------------------------

TEST(GatherND, GathersElementsAndSlices) {
  for (int64_t opset : {11, 12, 13}) {
    OpTester t("GatherND", opset);
    t.input<int32_t>({2, 2}, {0, 1, 2, 3}).input<int64_t>({2, 2}, {0, 0, 1, 1});
    t.output<int32_t>({2}, {0, 3});
    t.run();
  }
  OpTester rows("GatherND", 13);
  rows.input<float>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}).input<int64_t>({2, 1, 2}, {0, 1, -1, 0});
  rows.output<float>({2, 1, 2}, {2, 3, 4, 5});
  rows.run();
}

TEST(GatherND, BatchDims) {
  // batch_dims = 1: each batch entry indexes its own data[b].
  OpTester t("GatherND", 12);
  t.attr("batch_dims", int64_t{1});
  t.input<float>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}).input<int64_t>({2, 1}, {1, 0});
  t.output<float>({2, 2}, {2, 3, 4, 5});
  t.run();
  OpTester e("GatherND", 13);
  e.attr("batch_dims", int64_t{1});
  e.input<float>({2, 3}, {0, 1, 2, 3, 4, 5}).input<int64_t>({2, 0, 1}, {});
  e.output<float>({2, 0}, {});
  e.run();
}

TEST(GatherND, ErrorsNameTheProblem) {
  OpTester k("GatherND", 13);
  k.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 3}, {0, 0, 0});
  k.expect_failure(StatusCode::kShapeMismatch, "the last indices dimension (3) must be in [1, 2]");
  OpTester bounds("GatherND", 13);
  bounds.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 2}, {0, -3});
  bounds.expect_failure(StatusCode::kInvalidModel, "index -3 (tuple 0, entry 1) is out of bounds for axis 1 of size 2");
  OpTester batch("GatherND", 12);
  batch.attr("batch_dims", int64_t{1});
  batch.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({3, 1}, {0, 0, 0});
  batch.expect_failure(StatusCode::kShapeMismatch, "batch dimension 0 differs");
}

}  // namespace
}  // namespace vn::ops::testing
