// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- ScatterElements / Scatter -----------------------------------------------------------------

TEST(ScatterElements, WritesAlongTheAxis) {
  for (int64_t opset : {11, 13, 16}) {
    OpTester t("ScatterElements", opset);
    t.attr("axis", int64_t{1});
    t.input<float>({1, 5}, {1, 2, 3, 4, 5}).input<int64_t>({1, 2}, {1, 3}).input<float>({1, 2}, {1.1f, 2.1f});
    t.output<float>({1, 5}, {1, 1.1f, 3, 2.1f, 5});
    t.run();
  }
  // axis 0, negative indices; the deprecated Scatter is the same op.
  for (int64_t opset : {9, 11}) {
    OpTester t("Scatter", opset);
    t.input<float>({3, 3}, std::vector<float>(9, 0))
        .input<int32_t>({2, 3}, {1, 0, 2, 0, 2, -2})
        .input<float>({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f});
    t.output<float>({3, 3}, {2, 1.1f, 0, 1, 0, 2.2f, 0, 2.1f, 1.2f});
    t.run();
  }
}

TEST(ScatterElements, ReductionsCombineDuplicatesInOrder) {
  OpTester add("ScatterElements", 16);
  add.attr("axis", int64_t{1}).attr("reduction", "add");
  add.input<float>({1, 5}, {1, 2, 3, 4, 5}).input<int64_t>({1, 2}, {1, 1}).input<float>({1, 2}, {1.1f, 2.1f});
  add.output<float>({1, 5}, {1, 5.2f, 3, 4, 5});
  add.run();
  OpTester mul("ScatterElements", 16);
  mul.attr("axis", int64_t{1}).attr("reduction", "mul");
  mul.input<int32_t>({1, 3}, {1, 2, 3}).input<int64_t>({1, 2}, {2, 2}).input<int32_t>({1, 2}, {4, 5});
  mul.output<int32_t>({1, 3}, {1, 2, 60});
  mul.run();
  // Without reduction the last duplicate wins.
  OpTester none("ScatterElements", 16);
  none.input<int32_t>({2}, {0, 0}).input<int64_t>({3}, {1, 1, 1}).input<int32_t>({3}, {7, 8, 9});
  none.output<int32_t>({2}, {0, 9});
  none.run();
}

TEST(ScatterElements, ErrorsNameTheProblem) {
  OpTester bounds("ScatterElements", 13);
  bounds.input<float>({3}, {1, 2, 3}).input<int64_t>({1}, {3}).input<float>({1}, {0});
  bounds.expect_failure(StatusCode::kInvalidModel,
                        "index 3 (at flat position 0) is out of bounds for axis 0 of size 3");
  OpTester shape("ScatterElements", 13);
  shape.input<float>({3}, {1, 2, 3}).input<int64_t>({1}, {0}).input<float>({2}, {0, 0});
  shape.expect_failure(StatusCode::kShapeMismatch, "updates (float32 (2,)) must have the shape of indices (1,)");
  OpTester red("ScatterElements", 16);
  red.attr("reduction", "max");
  red.input<float>({1}, {1}).input<int64_t>({1}, {0}).input<float>({1}, {0});
  red.expect_failure(StatusCode::kInvalidModel, "reduction 'max' is not one of none, add, mul");
  OpTester boolean("ScatterElements", 16);
  boolean.attr("reduction", "add");
  boolean.input<bool>({1}, {true}).input<int64_t>({1}, {0}).input<bool>({1}, {true});
  boolean.expect_failure(StatusCode::kUnsupportedDType, "input of type bool is not supported");
}

// ---- ScatterND ---------------------------------------------------------------------------------

TEST(ScatterND, WritesElementsAndSlices) {
  for (int64_t opset : {11, 13, 16}) {
    OpTester t("ScatterND", opset);
    t.input<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}).input<int64_t>({4, 1}, {4, 3, 1, 7});
    t.input<float>({4}, {9, 10, 11, 12});
    t.output<float>({8}, {1, 11, 3, 10, 9, 6, 7, 12});
    t.run();
  }
  OpTester rows("ScatterND", 13);
  rows.input<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}).input<int64_t>({1, 1}, {-1}).input<int32_t>({1, 2}, {0, 0});
  rows.output<int32_t>({3, 2}, {1, 2, 3, 4, 0, 0});
  rows.run();
}

TEST(ScatterND, Reductions) {
  OpTester add("ScatterND", 16);
  add.attr("reduction", "add");
  add.input<float>({4}, {1, 2, 3, 4}).input<int64_t>({2, 1}, {0, 0}).input<float>({2}, {10, 20});
  add.output<float>({4}, {31, 2, 3, 4});
  add.run();
  OpTester mul("ScatterND", 16);
  mul.attr("reduction", "mul");
  mul.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 2}, {1, 1}).input<float>({1}, {0.5f});
  mul.output<float>({2, 2}, {1, 2, 3, 2});
  mul.run();
}

TEST(ScatterND, ErrorsNameTheProblem) {
  OpTester shape("ScatterND", 13);
  shape.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 1}, {0}).input<float>({1}, {0});
  shape.expect_failure(StatusCode::kShapeMismatch,
                       "updates must be float32 (1, 2) (indices.shape[:-1] + data.shape[k:])");
  OpTester bounds("ScatterND", 13);
  bounds.input<float>({2, 2}, {1, 2, 3, 4}).input<int64_t>({1, 2}, {0, 2}).input<float>({1}, {0});
  bounds.expect_failure(StatusCode::kInvalidModel, "index 2 (tuple 0, entry 1) is out of bounds for axis 1 of size 2");
}

TEST(TensorScatter, WritesEachBatchAtItsIndexLinearOrCircular) {
  std::vector<float> past(24), update(12);
  for (size_t i = 0; i < past.size(); ++i) past[i] = static_cast<float>(i);
  for (size_t i = 0; i < update.size(); ++i) update[i] = -static_cast<float>(i + 1);
  OpTester l("TensorScatter", 24);
  l.input<float>({2, 1, 4, 3}, past).input<float>({2, 1, 2, 3}, update).input<int64_t>({2}, {1, 2});
  l.output<float>({2, 1, 4, 3},
                  {0, 1, 2, -1, -2, -3, -4, -5, -6, 9, 10, 11, 12, 13, 14, 15, 16, 17, -7, -8, -9, -10, -11, -12});
  l.run();
  // Circular: batch 1 writes positions 3 and 0.
  OpTester c("TensorScatter", 24);
  c.attr("mode", "circular");
  c.input<float>({2, 1, 4, 3}, past).input<float>({2, 1, 2, 3}, update).input<int64_t>({2}, {1, 3});
  c.output<float>({2, 1, 4, 3},
                  {0, 1, 2, -1, -2, -3, -4, -5, -6, 9, 10, 11, -10, -11, -12, 15, 16, 17, 18, 19, 20, -7, -8, -9});
  c.run();
  // No write_indices: position 0; axis 1 of a 3-D cache.
  OpTester z("TensorScatter", 24);
  z.attr("axis", int64_t{1});
  z.input<int32_t>({1, 3, 2}, {1, 2, 3, 4, 5, 6}).input<int32_t>({1, 1, 2}, {7, 8});
  z.output<int32_t>({1, 3, 2}, {7, 8, 3, 4, 5, 6});
  z.run();
}

TEST(TensorScatter, ErrorsNameTheProblem) {
  std::vector<float> past(24, 0.0f), update(12, 1.0f);
  OpTester l("TensorScatter", 24);
  l.input<float>({2, 1, 4, 3}, past).input<float>({2, 1, 2, 3}, update).input<int64_t>({2}, {1, 3});
  l.expect_failure(StatusCode::kInvalidArgument, "write_indices[1] = 3 does not fit 2 updates in 4 positions");
  OpTester a("TensorScatter", 24);
  a.attr("axis", int64_t{0});
  a.input<float>({2, 1, 4, 3}, past).input<float>({2, 1, 2, 3}, update);
  a.expect_failure(StatusCode::kInvalidModel, "axis must not be 0");
  OpTester s("TensorScatter", 24);
  s.input<float>({2, 1, 4, 3}, past).input<float>({2, 2, 1, 3}, update);
  s.expect_failure(StatusCode::kShapeMismatch, "must match past_cache");
}

}  // namespace
}  // namespace vn::ops::testing
