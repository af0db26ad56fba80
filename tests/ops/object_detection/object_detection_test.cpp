// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "tests/ops/op_tester.h"

namespace vn::ops::testing {
namespace {

// ---- RoiAlign ----------------------------------------------------------------------------------
// X holds f(y, x) = 4y + x on a 4x4 map; bilinear sampling reproduces f exactly inside the map, so
// an average bin equals f at the mean of its sample points.

std::vector<float> ramp(size_t n, float offset = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), offset);
  return v;
}

TEST(RoiAlign, HalfPixelAndOutputHalfPixel) {
  // half_pixel: ROI (0, 0)-(2, 2) starts at -0.5, so 2x2 samples fall on pixels 0 and 1: mean 2.5.
  OpTester h("RoiAlign", 16);
  h.attr("sampling_ratio", int64_t{2});
  h.input<float>({1, 1, 4, 4}, ramp(16)).input<float>({1, 4}, {0, 0, 2, 2}).input<int64_t>({1}, {0});
  h.output<float>({1, 1, 1, 1}, {2.5f});
  h.run();
  // Without the shift (opset 10, or output_half_pixel) the samples sit at 0.5 and 1.5: mean 5.
  OpTester o10("RoiAlign", 10);
  o10.attr("sampling_ratio", int64_t{2});
  o10.input<float>({1, 1, 4, 4}, ramp(16)).input<float>({1, 4}, {0, 0, 2, 2}).input<int64_t>({1}, {0});
  o10.output<float>({1, 1, 1, 1}, {5});
  o10.run();
  OpTester o16("RoiAlign", 16);
  o16.attr("sampling_ratio", int64_t{2}).attr("coordinate_transformation_mode", "output_half_pixel");
  o16.input<float>({1, 1, 4, 4}, ramp(16)).input<float>({1, 4}, {0, 0, 2, 2}).input<int64_t>({1}, {0});
  o16.output<float>({1, 1, 1, 1}, {5});
  o16.run();
}

TEST(RoiAlign, BinsAdaptiveSamplingBatchesAndOutsideSamples) {
  // 2x2 bins over the whole map, one sample each at (0.5 + 2i, 0.5 + 2j).
  OpTester t("RoiAlign", 16);
  t.attr("output_height", int64_t{2}).attr("output_width", int64_t{2}).attr("sampling_ratio", int64_t{1});
  t.input<float>({1, 1, 4, 4}, ramp(16)).input<float>({1, 4}, {0, 0, 4, 4}).input<int64_t>({1}, {0});
  t.output<float>({1, 1, 2, 2}, {2.5f, 4.5f, 10.5f, 12.5f});
  t.run();
  // sampling_ratio 0 picks ceil(roi / bins) = 2 samples per axis; the ROI reads batch entry 1, and
  // a ROI far outside the map samples nothing (0).
  OpTester a("RoiAlign", 16);
  std::vector<float> x = ramp(16);
  const std::vector<float> second = ramp(16, 100);
  x.insert(x.end(), second.begin(), second.end());
  a.input<float>({2, 1, 4, 4}, x).input<float>({2, 4}, {0, 0, 2, 2, 10, 10, 12, 12}).input<int64_t>({2}, {1, 0});
  a.output<float>({2, 1, 1, 1}, {102.5f, 0});
  a.run();
}

TEST(RoiAlign, MaxModeTakesTheLargestWeightedCorner) {
  // One sample per bin at a pixel-square centre: every corner weighs 1/4, so the bin is a quarter
  // of the largest corner (onnxruntime's and the ONNX reference's max mode).
  OpTester t("RoiAlign", 16);
  t.attr("mode", "max").attr("output_height", int64_t{2}).attr("output_width", int64_t{2});
  t.attr("sampling_ratio", int64_t{1});
  const std::vector<float> x = ramp(16);
  t.input<double>({1, 1, 4, 4}, std::vector<double>(x.begin(), x.end()));
  t.input<double>({1, 4}, {0, 0, 4, 4}).input<int64_t>({1}, {0});
  t.output<double>({1, 1, 2, 2}, {1.25, 1.75, 3.25, 3.75});
  t.run();
}

TEST(RoiAlign, ErrorsNameTheProblem) {
  OpTester b("RoiAlign", 16);
  b.input<float>({1, 1, 2, 2}, ramp(4)).input<float>({1, 4}, {0, 0, 1, 1}).input<int64_t>({1}, {1});
  b.expect_failure(StatusCode::kInvalidModel, "batch_indices[0] = 1 is outside [0, 1)");
  OpTester r("RoiAlign", 16);
  r.input<float>({1, 1, 2, 2}, ramp(4)).input<float>({1, 3}, {0, 0, 1}).input<int64_t>({1}, {0});
  r.expect_failure(StatusCode::kShapeMismatch, "rois must be a (num_rois, 4) float32 tensor, got float32 (1, 3)");
  OpTester m("RoiAlign", 16);
  m.attr("coordinate_transformation_mode", "align_corners");
  m.input<float>({1, 1, 2, 2}, ramp(4)).input<float>({1, 4}, {0, 0, 1, 1}).input<int64_t>({1}, {0});
  m.expect_failure(StatusCode::kInvalidModel, "coordinate_transformation_mode 'align_corners' is not half_pixel");
}

// ---- NonMaxSuppression -------------------------------------------------------------------------
// The ONNX example: three overlapping unit boxes near x = 0, two near x = 10, one at x = 100.

const std::vector<float> kCorners = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                     0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppression, SuppressesOverlapsInScoreOrder) {
  for (int64_t opset : {10, 11}) {
    OpTester t("NonMaxSuppression", opset);
    t.input<float>({1, 6, 4}, kCorners).input<float>({1, 1, 6}, kScores);
    t.input<int64_t>({1}, {3}).input<float>({1}, {0.5f}).input<float>({1}, {0});
    t.output<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5});
    t.run();
  }
}

TEST(NonMaxSuppression, CenterBoxesThresholdsAndLimits) {
  OpTester c("NonMaxSuppression", 11);
  c.attr("center_point_box", int64_t{1});
  c.input<float>({1, 6, 4}, {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                             0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1});
  c.input<float>({1, 1, 6}, kScores).input<int64_t>({1}, {3}).input<float>({1}, {0.5f});
  c.output<int64_t>({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5});
  c.run();
  // score_threshold 0.4 drops box 5; the limit of 2 stops after boxes 3 and 0.
  OpTester s("NonMaxSuppression", 11);
  s.input<float>({1, 6, 4}, kCorners).input<float>({1, 1, 6}, kScores);
  s.input<int64_t>({1}, {2}).input<float>({1}, {0.5f}).input<float>({1}, {0.4f});
  s.output<int64_t>({2, 3}, {0, 0, 3, 0, 0, 0});
  s.run();
  // iou_threshold 1 suppresses nothing; equal scores keep the lower index first.
  OpTester all("NonMaxSuppression", 11);
  all.input<float>({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}).input<float>({1, 1, 2}, {0.5f, 0.5f});
  all.input<int64_t>({1}, {5}).input<float>({1}, {1});
  all.output<int64_t>({2, 3}, {0, 0, 0, 0, 0, 1});
  all.run();
  // An omitted max_output_boxes_per_class selects nothing.
  OpTester none("NonMaxSuppression", 11);
  none.input<float>({1, 6, 4}, kCorners).input<float>({1, 1, 6}, kScores);
  none.output<int64_t>({0, 3}, {});
  none.run();
}

TEST(NonMaxSuppression, BatchesAndClassesAreIndependent) {
  std::vector<float> boxes = kCorners;
  boxes.insert(boxes.end(), kCorners.begin(), kCorners.end());
  std::vector<float> scores = kScores;
  scores.insert(scores.end(), {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  OpTester t("NonMaxSuppression", 11);
  t.input<float>({2, 6, 4}, boxes).input<float>({2, 1, 6}, scores).input<int64_t>({1}, {2}).input<float>({1}, {0.5f});
  t.output<int64_t>({4, 3}, {0, 0, 3, 0, 0, 0, 1, 0, 5, 1, 0, 4});
  t.run();
  OpTester c("NonMaxSuppression", 11);
  c.input<float>({1, 6, 4}, kCorners).input<float>({1, 2, 6}, scores).input<int64_t>({1}, {1});
  c.output<int64_t>({2, 3}, {0, 0, 3, 0, 1, 5});
  c.run();
}

TEST(NonMaxSuppression, ErrorsNameTheProblem) {
  OpTester t("NonMaxSuppression", 11);
  t.input<float>({1, 6, 4}, kCorners).input<float>({1, 1, 5}, {1, 1, 1, 1, 1});
  t.expect_failure(StatusCode::kShapeMismatch,
                   "scores (1, 1, 5) must be (num_batches, num_classes, spatial_dimension) for boxes (1, 6, 4)");
  OpTester i("NonMaxSuppression", 11);
  i.input<float>({1, 6, 4}, kCorners).input<float>({1, 1, 6}, kScores).input<int64_t>({1}, {1});
  i.input<float>({1}, {1.5f});
  i.expect_failure(StatusCode::kInvalidModel, "iou_threshold 1.5 is outside [0, 1]");
}

}  // namespace
}  // namespace vn::ops::testing
