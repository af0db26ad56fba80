// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

std::vector<int32_t> iota(size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Expected values follow the spec's reshape/transpose/reshape definitions, worked out by hand for
// (1, 8, 1, 2) inputs holding 0..15 with blocksize 2.
TEST(DepthToSpace, DcrIsTheDefaultMode) {
  for (int64_t opset : {1, 11, 13}) {
    OpTester t("DepthToSpace", opset);
    t.attr("blocksize", int64_t{2});
    t.input<int32_t>({1, 8, 1, 2}, iota(16));
    t.output<int32_t>({1, 2, 2, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
    t.run();
  }
}

TEST(DepthToSpace, CrdMode) {
  OpTester t("DepthToSpace", 13);
  t.attr("blocksize", int64_t{2}).attr("mode", "CRD");
  t.input<int32_t>({1, 8, 1, 2}, iota(16));
  t.output<int32_t>({1, 2, 2, 4}, {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15});
  t.run();
}

TEST(DepthToSpace, ErrorsNameTheProblem) {
  OpTester c("DepthToSpace", 13);
  c.attr("blocksize", int64_t{2});
  c.input<int32_t>({1, 6, 1, 1}, iota(6));
  c.expect_failure(StatusCode::kShapeMismatch, "channels 6 are not divisible by blocksize^2 = 4");
  OpTester m("DepthToSpace", 13);
  m.attr("blocksize", int64_t{1}).attr("mode", "DRC");
  m.input<int32_t>({1, 1, 1, 1}, {0});
  m.expect_failure(StatusCode::kInvalidModel, "mode 'DRC' is not DCR or CRD");
  OpTester b("DepthToSpace", 13);
  b.input<int32_t>({1, 1, 1, 1}, {0});
  b.expect_failure(StatusCode::kInvalidModel, "attribute blocksize is required");
}

TEST(SpaceToDepth, MovesBlocksIntoChannels) {
  for (int64_t opset : {1, 13}) {
    OpTester t("SpaceToDepth", opset);
    t.attr("blocksize", int64_t{2});
    t.input<int32_t>({1, 1, 4, 4}, iota(16));
    t.output<int32_t>({1, 4, 2, 2}, {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15});
    t.run();
  }
  OpTester c("SpaceToDepth", 13);
  c.attr("blocksize", int64_t{2});
  c.input<float>({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  c.output<float>({1, 8, 1, 1}, {0, 4, 1, 5, 2, 6, 3, 7});
  c.run();
}

TEST(SpaceToDepth, Version28ModeDcrOrCrd) {
  // numpy: reshape (1, 2, 2, 2, 2, 2), transpose (0, 3, 5, 1, 2, 4) for DCR, (0, 1, 3, 5, 2, 4)
  // for CRD, reshape (1, 8, 2, 2).
  const struct {
    const char* mode;
    std::vector<int32_t> y;
  } cases[] = {{"DCR", {0, 2, 8,  10, 16, 18, 24, 26, 1, 3, 9,  11, 17, 19, 25, 27,
                        4, 6, 12, 14, 20, 22, 28, 30, 5, 7, 13, 15, 21, 23, 29, 31}},
               {"CRD", {0,  2,  8,  10, 1,  3,  9,  11, 4,  6,  12, 14, 5,  7,  13, 15,
                        16, 18, 24, 26, 17, 19, 25, 27, 20, 22, 28, 30, 21, 23, 29, 31}}};
  for (const auto& c : cases) {
    OpTester t("SpaceToDepth", 28);
    t.attr("blocksize", int64_t{2}).attr("mode", c.mode);
    t.input<int32_t>({1, 2, 4, 4}, iota(32));
    t.output<int32_t>({1, 8, 2, 2}, c.y);
    t.run();
  }
  OpTester d("SpaceToDepth", 28);
  d.attr("blocksize", int64_t{2});
  d.input<int32_t>({1, 2, 4, 4}, iota(32));
  d.output<int32_t>({1, 8, 2, 2}, cases[0].y);
  d.run();
  OpTester m("SpaceToDepth", 28);
  m.attr("blocksize", int64_t{2}).attr("mode", "RCD");
  m.input<int32_t>({1, 2, 4, 4}, iota(32));
  m.expect_failure(StatusCode::kInvalidModel, "mode 'RCD' is not DCR or CRD");
  // SpaceToDepth-28 with CRD inverts DepthToSpace with CRD.
  OpTester d2s("DepthToSpace", 28);
  d2s.attr("blocksize", int64_t{2}).attr("mode", "CRD");
  d2s.input<int32_t>({1, 8, 2, 2}, cases[1].y);
  d2s.output<int32_t>({1, 2, 4, 4}, iota(32));
  d2s.run();
}

TEST(SpaceToDepth, IsTheInverseOfDepthToSpaceDcr) {
  OpTester d2s("DepthToSpace", 13);
  d2s.attr("blocksize", int64_t{2});
  d2s.input<int32_t>({1, 8, 1, 2}, iota(16));
  d2s.unchecked_output();
  const std::vector<Tensor> space = d2s.run();
  OpTester s2d("SpaceToDepth", 13);
  s2d.attr("blocksize", int64_t{2});
  s2d.input(space[0]);
  s2d.output<int32_t>({1, 8, 1, 2}, iota(16));
  s2d.run();
}

TEST(SpaceToDepth, ErrorsNameTheProblem) {
  OpTester t("SpaceToDepth", 13);
  t.attr("blocksize", int64_t{2});
  t.input<int32_t>({1, 1, 3, 2}, iota(6));
  t.expect_failure(StatusCode::kShapeMismatch, "height 3 and width 2 must be divisible by blocksize 2");
  OpTester r("SpaceToDepth", 13);
  r.attr("blocksize", int64_t{2});
  r.input<int32_t>({4, 4}, iota(16));
  r.expect_failure(StatusCode::kShapeMismatch, "input must be 4-D (N, C, H, W), got shape (4, 4)");
}

// ---- ReverseSequence ---------------------------------------------------------------------------

TEST(ReverseSequence, TimeMajorAndBatchMajor) {
  // time_axis 0: x[t][b]; each column b reverses its first lens[b] steps.
  OpTester t("ReverseSequence", 10);
  t.input<float>({4, 2}, {0, 10, 1, 11, 2, 12, 3, 13}).input<int64_t>({2}, {3, 1});
  t.output<float>({4, 2}, {2, 10, 1, 11, 0, 12, 3, 13});
  t.run();
  OpTester b("ReverseSequence", 10);
  b.attr("time_axis", int64_t{1}).attr("batch_axis", int64_t{0});
  b.input<int32_t>({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}).input<int64_t>({2}, {2, 3});
  b.output<int32_t>({2, 3, 2}, {2, 3, 0, 1, 4, 5, 10, 11, 8, 9, 6, 7});
  b.run();
}

TEST(ReverseSequence, ErrorsNameTheProblem) {
  OpTester len("ReverseSequence", 10);
  len.input<float>({2, 2}, {0, 1, 2, 3}).input<int64_t>({2}, {3, 1});
  len.expect_failure(StatusCode::kInvalidModel, "sequence_lens[0] = 3 is outside [0, 2]");
  OpTester axes("ReverseSequence", 10);
  axes.attr("time_axis", int64_t{1});
  axes.input<float>({2, 2}, {0, 1, 2, 3}).input<int64_t>({2}, {1, 1});
  axes.expect_failure(StatusCode::kInvalidModel, "time_axis and batch_axis must be 0 and 1 in some order, got 1 and 1");
}

}  // namespace
}  // namespace vn::ops::testing
