// SPDX-License-Identifier: Apache-2.0
#include "core/ops/broadcast.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace vn::ops {
namespace {

TEST(Broadcast, ShapesFollowNumpyRules) {
  EXPECT_EQ(*broadcast_shapes(Shape{2, 3}, Shape{3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes(Shape{2, 1, 4}, Shape{3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(*broadcast_shapes(Shape{}, Shape{5}), (Shape{5}));
  EXPECT_EQ(*broadcast_shapes(Shape{0, 1}, Shape{1, 3}), (Shape{0, 3}));
  const Shape three[] = {{2, 1}, {1, 3}, {1}};
  EXPECT_EQ(*broadcast_shapes(three), (Shape{2, 3}));
  const Result<Shape> bad = broadcast_shapes(Shape{2, 3}, Shape{4});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kShapeMismatch);
  EXPECT_NE(bad.status().message().find("dimension 1 from the right is 3 in one and 4 in another"), std::string::npos)
      << bad.status().message();
}

TEST(Broadcast, UnidirectionalCheckAndStrides) {
  EXPECT_TRUE(broadcasts_to({3, 1}, {2, 3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 3, 4}, {3, 4}));
  EXPECT_FALSE(broadcasts_to({2}, {3}));
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}), (Shape{0, 1, 0}));
  EXPECT_EQ(broadcast_strides({2, 3, 4}, {2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
}

TEST(StridedLoop, MergesContiguousDimensions) {
  const Shape shape = {2, 3, 4};
  const Shape strides[] = {contiguous_strides(shape)};
  const StridedLoop loop(shape, strides);
  EXPECT_EQ(loop.row_size(), 24);
  EXPECT_EQ(loop.rows(), 1);
  EXPECT_EQ(loop.inner_stride(0), 1);
}

TEST(StridedLoop, BiasBroadcastKeepsLongRows) {
  // (N, C, H, W) + (C, 1, 1): rows are whole H*W planes with the bias operand at stride 0.
  const Shape shape = {2, 3, 4, 5};
  const Shape strides[] = {contiguous_strides(shape), broadcast_strides({3, 1, 1}, shape)};
  const StridedLoop loop(shape, strides);
  EXPECT_EQ(loop.row_size(), 20);
  EXPECT_EQ(loop.rows(), 6);
  EXPECT_EQ(loop.inner_stride(1), 0);
  std::vector<int64_t> bias_offsets;
  loop.for_each_row([&](int64_t, const int64_t* off) { bias_offsets.push_back(off[1]); });
  EXPECT_EQ(bias_offsets, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(StridedLoop, VisitsEveryElementOfATransposedView) {
  // Iterate a (3, 2) transpose of a (2, 3) buffer and collect source offsets.
  const Shape strides[] = {{1, 3}};
  const StridedLoop loop({3, 2}, strides);
  std::vector<int64_t> order;
  loop.for_each_row([&](int64_t dense, const int64_t* off) {
    for (int64_t i = 0; i < loop.row_size(); ++i) {
      EXPECT_EQ(dense + i, static_cast<int64_t>(order.size()));
      order.push_back(off[0] + i * loop.inner_stride(0));
    }
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(StridedLoop, ZeroSizeAndScalar) {
  const Shape zero_strides[] = {{0, 1}};
  const StridedLoop empty({0, 4}, zero_strides);
  int calls = 0;
  empty.for_each_row([&](int64_t, const int64_t*) { ++calls; });
  EXPECT_EQ(calls, 0);
  const Shape scalar_strides[] = {Shape{}};
  const int64_t base[] = {7};
  const StridedLoop scalar(Shape{}, scalar_strides, base);
  scalar.for_each_row([&](int64_t dense, const int64_t* off) {
    ++calls;
    EXPECT_EQ(dense, 0);
    EXPECT_EQ(off[0], 7);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(scalar.row_size(), 1);
}

}  // namespace
}  // namespace vn::ops
